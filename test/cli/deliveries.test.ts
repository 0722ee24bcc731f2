import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { queryRows } from '../helpers/engine.ts'
import { orderBody } from '../helpers/app.ts'
import { apiClient, runCli, runJson, startServe, until, type ServeProcess, migratedDb } from '../helpers/cli.ts'
import { runInPty } from '../helpers/pty.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

const SERVE_FLAGS = ['--allow-private-targets', '--retry-base', '50', '--delivery-timeout', '1000', '--log-level', 'warn']
const unknown = (prefix: string) => `${prefix}_${randomUUID()}`

describe('travelops deliveries, against a running serve and real receivers', () => {
  let dir: string
  let db: string
  let server: ServeProcess
  let api: ReturnType<typeof apiClient>
  let ok: Receiver // always 200
  let failing: Receiver // always 500
  let tenantId: string
  let webhookOk: string
  let webhookFail: string
  const cli = (...args: string[]) => runCli([...args, '--db', db])
  const json = (...args: string[]) => runJson([...args, '--db', db])
  /** The API's view of a subscription's deliveries, newest first. */
  /** Each delivery row of a subscription as the queue sees it, read straight from the file. */
  const queueState = (webhookId: string) => queryRows(db, 'SELECT id, status, attempts, manual, due_at FROM deliveries WHERE webhook_id = ? ORDER BY id', webhookId)
  const apiDeliveries = async (webhookId: string) => (await api('GET', `/v1/webhooks/deliveries?webhook_id=${webhookId}&limit=100`)).body.data as any[]

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-deliveries-'))
    db = await migratedDb(join(dir, 'd.db'))
    tenantId = (await json('tenants', 'create', '--name', 'Ops')).id
    const key = await json('keys', 'create', '--tenant', tenantId)
    ok = await startReceiver()
    failing = await startReceiver({ respond: [500] })
    server = await startServe(['--db', db, ...SERVE_FLAGS])
    api = apiClient(server.url, key.key)
    const webhook = async (url: string) => {
      const r = await api('POST', '/v1/webhooks', { url, events: ['order.created'], secret: 'whsec_0123456789abcdef' })
      assert.equal(r.status, 201, JSON.stringify(r.body))
      return r.body.data.id as string
    }
    webhookOk = await webhook(`${ok.url}/ok`)
  })

  after(async () => {
    await server?.stop()
    await ok?.close()
    await failing?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('list and show print the API\'s records; show\'s payload is byte for byte the body the receiver got', async () => {
    assert.equal((await api('POST', '/v1/orders', orderBody())).status, 201)
    const [received] = await ok.waitFor(1)
    const [viaApi] = await until('the delivery to be recorded as delivered', async () => {
      const list = await apiDeliveries(webhookOk)
      return list[0]?.status === 'delivered' && list
    })
    assert.deepEqual(await json('deliveries', 'list', '--webhook', webhookOk), [viaApi])
    assert.deepEqual(await json('deliveries', 'list', '--tenant', tenantId, '--status', 'delivered', '--limit', '1'), [viaApi])
    assert.deepEqual(await json('deliveries', 'list', '--status', 'failed'), [])
    const shown = await json('deliveries', 'show', viaApi.id)
    assert.deepEqual(shown, (await api('GET', `/v1/webhooks/deliveries/${viaApi.id}`)).body.data)
    assert.equal(JSON.stringify(shown.payload), received!.body)
    assert.equal(received!.headers['x-webhook-id'], shown.event_id)
    assert.deepEqual(shown.attempt_log.map((a: any) => [a.attempt, a.trigger, a.response_code]), [[1, 'auto', 200]])
    const human = await cli('deliveries', 'list', '--wide')
    assert.equal(human.code, 0)
    assert.match(human.stdout, new RegExp(`${viaApi.id}.*${tenantId}`))
    assert.match((await cli('deliveries', 'show', viaApi.id)).stdout, /"event": "order.created"/)
  })

  test('retry queues a new attempt of a failed and a delivered record; it shows in attempt_log as manual', async () => {
    webhookFail = (await api('POST', '/v1/webhooks', { url: `${failing.url}/fail`, events: ['order.created'], secret: 'whsec_0123456789abcdef' })).body.data.id
    assert.equal((await api('POST', '/v1/orders', orderBody())).status, 201)
    const [failed] = await until('the failing delivery to be recorded', async () => {
      const list = await apiDeliveries(webhookFail)
      return list[0]?.status === 'failed' && list
    })
    const delivered = await until('both deliveries of the healthy webhook', async () => {
      const list = await apiDeliveries(webhookOk)
      return list.length === 2 && list.every((d) => d.status === 'delivered') && list
    })
    const okBefore = ok.requests.length
    const report = await json('deliveries', 'retry', failed.id, delivered[1].id, failed.id)
    assert.deepEqual(report, { requeued: 2, skipped: [] })
    const manual = async (id: string) => {
      const d = (await api('GET', `/v1/webhooks/deliveries/${id}`)).body.data
      return d.attempt_log.find((a: any) => a.trigger === 'manual')
    }
    assert.equal((await until('a manual attempt of the failed delivery', () => manual(failed.id))).response_code, 500)
    assert.equal((await until('a manual attempt of the delivered one', () => manual(delivered[1].id))).response_code, 200)
    const shown = await json('deliveries', 'show', failed.id)
    assert.ok(shown.attempt_log.some((a: any) => a.trigger === 'manual' && a.response_code === 500))
    const again = await ok.waitFor(okBefore + 1)
    assert.equal(again[okBefore]!.headers['x-webhook-id'], delivered[1].event_id, 'the same event, sent again')
  })

  test('replay --webhook queues every delivered or failed delivery of the subscription again', async () => {
    const mine = await until('no attempt of the healthy webhook in flight', async () => {
      const list = await apiDeliveries(webhookOk)
      return list.every((d) => d.status === 'delivered') && list
    })
    const before = ok.requests.length
    assert.deepEqual(await json('deliveries', 'replay', '--webhook', webhookOk, '--yes'), { requeued: mine.length })
    const got = await ok.waitFor(before + mine.length)
    assert.deepEqual(
      got.slice(before).map((r) => r.headers['x-webhook-id']).sort(),
      mine.map((d) => d.event_id).sort(),
    )
    assert.deepEqual(await json('deliveries', 'replay', '--webhook', webhookOk, '--status', 'failed', '--yes'), { requeued: 0 })
    assert.deepEqual(await json('deliveries', 'replay', '--webhook', webhookOk, '--since', '2999-01-01T00:00:00Z', '--yes'), { requeued: 0 })
    assert.deepEqual(await json('deliveries', 'replay', '--webhook', webhookFail, '--status', 'failed', '--since', '2020-01-01', '--yes'), { requeued: 1 })
    assert.match((await cli('deliveries', 'replay', '--webhook', webhookOk, '--status', 'failed', '--yes')).stdout, /requeued 0 deliveries/)
  })

  test('replay asks first: --dry-run counts and changes nothing, no terminal without --yes is exit 2, a pty asks y/N', async () => {
    // Nothing queued and nothing in flight, so the worker changes no row while we look.
    const settled = () => until('no delivery of the healthy webhook queued or in flight', async () => {
      const rows = await queueState(webhookOk)
      return rows.length > 0 && rows.every((r: any) => r.status === 'delivered' && r.manual === 0 && r.due_at === null) && rows
    })
    const rows = await settled()
    const received = ok.requests.length
    assert.deepEqual(await json('deliveries', 'replay', '--webhook', webhookOk, '--dry-run'), { requeued: 0, would_requeue: rows.length })
    assert.deepEqual(await json('deliveries', 'replay', '--webhook', webhookOk, '--dry-run', '--yes'), { requeued: 0, would_requeue: rows.length }, '--dry-run wins over --yes')
    assert.match((await cli('deliveries', 'replay', '--webhook', webhookOk, '--dry-run')).stdout, new RegExp(`^would requeue ${rows.length} deliveries of ${webhookOk} \\(dry run: nothing was changed\\)\n$`))
    const refused = await cli('deliveries', 'replay', '--webhook', webhookOk, '--json')
    assert.equal(refused.code, 2)
    assert.equal(refused.stdout, '')
    assert.match(refused.stderr, new RegExp(`would requeue ${rows.length} deliveries.*no terminal to confirm on: pass --yes`))
    const declined = await runInPty(['deliveries', 'replay', '--webhook', webhookOk, '--db', db], { waitFor: '[y/N]', answer: 'n' })
    assert.equal(declined.code, 1, declined.output)
    assert.match(declined.output, new RegExp(`requeue ${rows.length} deliveries of ${webhookOk}\\? \\[y/N\\] n\n`))
    assert.match(declined.output, /cancelled; nothing was queued/)
    assert.deepEqual(await queueState(webhookOk), rows, 'dry run, refusal and a "no" changed no record')
    assert.equal(ok.requests.length, received)

    const accepted = await runInPty(['deliveries', 'replay', '--webhook', webhookOk, '--db', db], { waitFor: '[y/N]', answer: 'y' })
    assert.equal(accepted.code, 0, accepted.output)
    assert.match(accepted.output, new RegExp(`requeued ${rows.length} deliveries\n`))
    await ok.waitFor(received + rows.length)
    await settled()
  })

  test('deliveries of an inactive or deleted subscription are not requeued, and the CLI says so (exit 1)', async () => {
    const [failed] = await apiDeliveries(webhookFail)
    assert.equal((await api('PATCH', `/v1/webhooks/${webhookFail}`, { active: false })).status, 200)
    const retry = await cli('deliveries', 'retry', failed.id, '--json')
    assert.equal(retry.code, 1)
    assert.deepEqual(JSON.parse(retry.stdout), { requeued: 0, skipped: [{ id: failed.id, reason: `its subscription ${webhookFail} is inactive` }] })
    assert.match(retry.stderr, /not requeued/)
    const replay = await cli('deliveries', 'replay', '--webhook', webhookFail, '--json')
    assert.equal(replay.code, 1)
    assert.equal(replay.stdout, '')
    assert.match(replay.stderr, /inactive/)
    assert.equal((await api('DELETE', `/v1/webhooks/${webhookFail}`)).status, 200)
    assert.match((await cli('deliveries', 'replay', '--webhook', webhookFail)).stderr, /deleted/)
    assert.match((await cli('deliveries', 'retry', failed.id)).stderr, /deleted/)
    const shown = await json('deliveries', 'show', failed.id)
    assert.equal(shown.webhook_id, webhookFail, 'the records of a deleted subscription stay readable')
  })

  test('exit codes: 2 for usage errors, 1 for unknown records; an unknown id among several queues nothing', async () => {
    await server.stop() // nothing may take queued work away while the database is inspected
    const delivered = (await deliveryIds(db, webhookOk))[0]!
    const queued = async () => (await queryRows(db, 'SELECT manual, due_at FROM deliveries WHERE id = ?', delivered))[0]
    assert.deepEqual(await queued(), { manual: 0, due_at: null }, 'nothing queued before')
    const usage = [
      ['deliveries', 'list', '--status', 'bogus'],
      ['deliveries', 'list', '--limit', '0'],
      ['deliveries', 'list', '--limit', '1001'],
      ['deliveries', 'list', '--limit', 'ten'],
      ['deliveries', 'list', '--tenant', 'acme'],
      ['deliveries', 'list', '--webhook', 'hook'],
      ['deliveries', 'list', '--frob'],
      ['deliveries', 'show'],
      ['deliveries', 'retry'],
      ['deliveries', 'replay'],
      ['deliveries', 'replay', '--webhook', 'hook'],
      ['deliveries', 'replay', '--webhook', webhookOk, '--since', 'yesterday'],
      ['deliveries', 'replay', '--webhook', webhookOk, '--since', '2026-13-45'],
      ['deliveries', 'replay', '--webhook', webhookOk, '--status', 'pending'],
      ['deliveries', 'frobnicate'],
    ]
    for (const args of usage) assert.equal((await cli(...args)).code, 2, args.join(' '))
    const failures = [
      ['deliveries', 'list', '--tenant', unknown('ten')],
      ['deliveries', 'list', '--webhook', unknown('wh')],
      ['deliveries', 'show', unknown('del')],
      ['deliveries', 'show', 'not-an-id'],
      ['deliveries', 'replay', '--webhook', unknown('wh')],
    ]
    for (const args of failures) {
      const r = await cli(...args, '--json')
      assert.equal(r.code, 1, args.join(' '))
      assert.equal(r.stdout, '', 'nothing on stdout when the command failed')
      assert.match(r.stderr, /^error: no /)
    }
    const missing = unknown('del')
    const r = await cli('deliveries', 'retry', delivered, missing)
    assert.equal(r.code, 1)
    assert.match(r.stderr, new RegExp(`no delivery ${missing}; nothing was queued`))
    assert.deepEqual(await queued(), { manual: 0, due_at: null }, 'nothing queued after')
  })
})

describe('travelops deliveries retry, while the first attempt is still in flight', () => {
  test('a pending delivery is not requeued (exit 1, reason given); it completes on its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'travelops-pending-'))
    const db = await migratedDb(join(dir, 'p.db'))
    let release = () => {}
    const held = new Promise<void>((r) => (release = r))
    const rx = await startReceiver({ respond: async () => (await held, { status: 204 }) })
    const tenant = await runJson(['tenants', 'create', '--name', 'Slow', '--db', db])
    const key = await runJson(['keys', 'create', '--tenant', tenant.id, '--db', db])
    const server = await startServe(['--db', db, '--allow-private-targets', '--delivery-timeout', '30000', '--log-level', 'warn'])
    try {
      const api = apiClient(server.url, key.key)
      const webhook = (await api('POST', '/v1/webhooks', { url: rx.url, events: ['*'], secret: 'whsec_0123456789abcdef' })).body.data.id
      assert.equal((await api('POST', '/v1/orders', orderBody())).status, 201)
      await rx.waitFor(1) // the receiver holds its answer: the first attempt is in flight
      const [pending] = (await api('GET', `/v1/webhooks/deliveries?webhook_id=${webhook}`)).body.data
      assert.equal(pending.status, 'pending')
      const r = await runCli(['deliveries', 'retry', pending.id, '--db', db, '--json'])
      assert.equal(r.code, 1)
      assert.deepEqual(JSON.parse(r.stdout), { requeued: 0, skipped: [{ id: pending.id, reason: 'pending: its first attempt has not finished yet' }] })
      release()
      await until('the held attempt to be recorded', async () => (await api('GET', `/v1/webhooks/deliveries/${pending.id}`)).body.data.status === 'delivered')
    } finally {
      release()
      await server.stop()
      await rx.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** Ids of a subscription's deliveries, newest first. */
async function deliveryIds(db: string, webhookId: string): Promise<string[]> {
  const list = await runJson(['deliveries', 'list', '--webhook', webhookId, '--db', db])
  return list.map((d: { id: string }) => d.id)
}

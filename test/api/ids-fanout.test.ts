import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { orderBody, startTestApp, type TestApp } from '../helpers/app.ts'
import { runCli } from '../helpers/cli.ts'
import { startReceiver, type Receiver } from '../helpers/receiver.ts'

// Issue 54: the deliveries of one fan-out (made in one transaction, often one millisecond)
// differ within the first 12 characters of their UUID, so the CLI's short ids stay short.

describe('short ids of one fan-out', () => {
  let app: TestApp
  let rx: Receiver
  before(async () => {
    app = await startTestApp({ allowPrivateTargets: true, maxWebhooks: 50 })
    rx = await startReceiver()
  })
  after(async () => {
    await app.close()
    await rx.close()
  })

  test('an order fanned out to 24 subscriptions: deliveries distinct in 12 characters, short ids of at most 13', async () => {
    const t = await app.tenant()
    for (let i = 0; i < 24; i++) {
      const r = await t.request('POST', '/v1/webhooks', { body: { url: `${rx.url}/${i}`, events: ['order.created'], secret: 'whsec_0123456789abcdef' } })
      assert.equal(r.status, 201, r.text)
    }
    assert.equal((await t.request('POST', '/v1/orders', { body: orderBody() })).status, 201)
    const list = await t.request('GET', '/v1/webhooks/deliveries?limit=100')
    assert.equal(list.status, 200)
    const ids = (list.body.data as { id: string }[]).map((d) => d.id)
    assert.equal(ids.length, 24)
    assert.equal(new Set(ids.map((id) => id.slice(4, 16))).size, 24, ids.join('\n'))

    const cli = await runCli(['deliveries', 'list', '--db', app.dbFile, '--limit', '100', '--no-color'], { env: { COLUMNS: '200' } })
    assert.equal(cli.code, 0, cli.stderr)
    const shown = [...cli.stdout.matchAll(/\bdel_[0-9a-f-]+/g)].map((m) => m[0])
    assert.equal(shown.length, 24, cli.stdout)
    for (const s of shown) assert.ok(s.length <= 'del_'.length + 13, `${s} is longer than 13 characters after del_`)
    assert.equal(new Set(shown).size, 24)
  })
})

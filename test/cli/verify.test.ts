import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import { runCli } from '../helpers/cli.ts'

const SECRET = 'whsec_verify_0123456789'
// Exact bytes as a receiver gets them: multi-byte UTF-8 and a trailing newline that must not be trimmed.
const BODY = Buffer.from('{"id":"evt_1","event":"order.created","data":{"name":"Zoë — Fjord"}}\n', 'utf8')
const SIG = createHmac('sha256', SECRET).update(BODY).digest('hex')

describe('travelops verify', () => {
  let dir: string
  let bodyFile: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-verify-'))
    bodyFile = join(dir, 'body.json')
    writeFileSync(bodyFile, BODY)
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  const verify = (args: string[], input?: Uint8Array) => runCli(['verify', ...args], { input })

  test('valid: bare hex and sha256= prefix, body from --file or stdin; prints valid, exit 0', async () => {
    for (const [sig, how] of [[SIG, 'bare hex'], [`sha256=${SIG}`, 'sha256= prefix'], [SIG.toUpperCase(), 'upper-case hex']] as const) {
      const fromFile = await verify(['--secret', SECRET, '--signature', sig, '--file', bodyFile])
      assert.deepEqual([fromFile.code, fromFile.stdout, fromFile.stderr], [0, 'valid\n', ''], `${how}, --file`)
      const fromStdin = await verify(['--secret', SECRET, '--signature', sig], BODY)
      assert.deepEqual([fromStdin.code, fromStdin.stdout], [0, 'valid\n'], `${how}, stdin`)
    }
  })

  test('the secret may come from TRAVELOPS_WEBHOOK_SECRET instead of the command line', async () => {
    const r = await runCli(['verify', '--signature', SIG, '--file', bodyFile], { env: { TRAVELOPS_WEBHOOK_SECRET: SECRET } })
    assert.deepEqual([r.code, r.stdout], [0, 'valid\n'])
  })

  test('invalid: wrong secret, tampered or trimmed body, garbage signature; prints invalid, exit 1', async () => {
    const tampered = Buffer.from(BODY.toString('utf8').replace('Fjord', 'fjord'))
    const cases: [string, string[], Uint8Array | undefined][] = [
      ['wrong secret', ['--secret', `${SECRET}x`, '--signature', SIG, '--file', bodyFile], undefined],
      ['tampered body', ['--secret', SECRET, '--signature', SIG], tampered],
      ['body without its trailing newline', ['--secret', SECRET, '--signature', SIG], BODY.subarray(0, BODY.length - 1)],
      ['empty body', ['--secret', SECRET, '--signature', SIG], Buffer.alloc(0)],
      ['garbage signature', ['--secret', SECRET, '--signature', 'not-a-signature', '--file', bodyFile], undefined],
      ['truncated signature', ['--secret', SECRET, '--signature', SIG.slice(0, 40), '--file', bodyFile], undefined],
      ['other prefix', ['--secret', SECRET, '--signature', `sha1=${SIG}`, '--file', bodyFile], undefined],
    ]
    for (const [name, args, input] of cases) {
      const r = await verify(args, input)
      assert.deepEqual([r.code, r.stdout, r.stderr], [1, 'invalid\n', ''], name)
    }
  })

  test('--json prints { "valid": true|false } and keeps the exit codes', async () => {
    const good = await verify(['--secret', SECRET, '--signature', SIG, '--json'], BODY)
    assert.equal(good.code, 0)
    assert.deepEqual(JSON.parse(good.stdout), { valid: true })
    const bad = await verify(['--secret', 'another-secret-entirely', '--signature', SIG, '--file', bodyFile, '--json'])
    assert.equal(bad.code, 1)
    assert.deepEqual(JSON.parse(bad.stdout), { valid: false })
  })

  test('a whsec_ secret: X-Webhook-Signature keyed with the whole string, webhook-signature (--id, --timestamp) as the Standard Webhooks library signs it (§16)', async () => {
    const whsec = `whsec_${randomBytes(32).toString('base64')}`
    const id = 'evt_0190a0b0-0000-7000-8000-000000000000'
    const at = 1_767_225_600
    const hex = createHmac('sha256', Buffer.from(whsec, 'utf8')).update(BODY).digest('hex')
    assert.deepEqual([(await verify(['--secret', whsec, '--signature', hex, '--file', bodyFile])).code], [0], 'hex, keyed with the string')
    const v1 = new Webhook(whsec).sign(id, new Date(at * 1000), BODY.toString('utf8'))
    const ok = await verify(['--secret', whsec, '--signature', v1, '--id', id, '--timestamp', String(at), '--file', bodyFile])
    assert.deepEqual([ok.code, ok.stdout, ok.stderr], [0, 'valid\n', ''], 'v1 from the library given the secret as it is')
    const plain = new Webhook(`whsec_${Buffer.from(SECRET).toString('base64')}`).sign(id, new Date(at * 1000), BODY.toString('utf8'))
    assert.equal((await verify(['--secret', SECRET, '--signature', `v1,AAAA ${plain}`, '--id', id, '--timestamp', String(at)], BODY)).code, 0, 'another secret: its UTF-8 bytes')
    for (const [name, args] of [
      ['other timestamp', ['--secret', whsec, '--signature', v1, '--id', id, '--timestamp', String(at + 1)]],
      ['other id', ['--secret', whsec, '--signature', v1, '--id', `${id}x`, '--timestamp', String(at)]],
      ['other secret', ['--secret', `whsec_${randomBytes(32).toString('base64')}`, '--signature', v1, '--id', id, '--timestamp', String(at)]],
    ] as const) assert.deepEqual([(await verify([...args, '--file', bodyFile])).code], [1], name)
    assert.equal((await verify(['--secret', whsec, '--signature', v1, '--file', bodyFile])).code, 2, 'v1 without --id and --timestamp')
    assert.equal((await verify(['--secret', whsec, '--signature', v1, '--id', id, '--timestamp', 'soon', '--file', bodyFile])).code, 2)
    assert.equal((await verify(['--secret', whsec, '--signature', hex, '--id', id, '--file', bodyFile])).code, 2, '--id with a hex signature')
  })

  test('an unreadable --file exits 1; missing --secret or --signature exits 2', async () => {
    const missing = await verify(['--secret', SECRET, '--signature', SIG, '--file', join(dir, 'nope.json'), '--json'])
    assert.equal(missing.code, 1)
    assert.equal(missing.stdout, '')
    assert.match(missing.stderr, /cannot read .*nope\.json/)
    assert.equal((await verify(['--secret', SECRET, '--signature', SIG, '--file', dir])).code, 1, 'a directory is not a body')
    assert.equal((await verify(['--signature', SIG, '--file', bodyFile])).code, 2)
    assert.equal((await verify(['--secret', SECRET, '--file', bodyFile])).code, 2)
    assert.equal((await verify(['--secret', SECRET, '--signature'])).code, 2)
    assert.equal((await verify(['--secret', SECRET, '--signature', SIG, '--frob'])).code, 2)
  })
})

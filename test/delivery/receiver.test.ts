import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startReceiver } from '../helpers/receiver.ts'

// The test receiver is shared by the delivery tests, so its own behaviour is pinned here.
const post = (url: string, body = '{}') => fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json' } })

describe('test receiver', () => {
  it('answers a status sequence in turn, repeating the last one', async () => {
    const rx = await startReceiver({ respond: [500, 503, 200] })
    try {
      const codes: number[] = []
      for (let i = 0; i < 4; i++) codes.push((await post(rx.url)).status)
      assert.deepEqual(codes, [500, 503, 200, 200])
    } finally {
      await rx.close()
    }
  })

  it('records method, url, headers and body, and waitFor resolves with the requests', async () => {
    const rx = await startReceiver({ respond: (req, n) => ({ status: 201, body: `${n}:${req.body}` }) })
    try {
      const res = await post(`${rx.url}/in?a=1`, '{"x":1}')
      assert.equal(await res.text(), '0:{"x":1}')
      const [req] = await rx.waitFor(1, 1000)
      assert.equal(req?.method, 'POST')
      assert.equal(req?.url, '/in?a=1')
      assert.equal(req?.headers['content-type'], 'application/json')
      assert.equal(req?.body, '{"x":1}')
      assert.ok(typeof req?.at === 'number' && req.at <= Date.now())
    } finally {
      await rx.close()
    }
  })

  it('waitFor rejects when too few requests arrive in time', async () => {
    const rx = await startReceiver()
    try {
      await post(rx.url)
      await assert.rejects(rx.waitFor(2, 100), /expected 2 request\(s\) within 100 ms, got 1/)
    } finally {
      await rx.close()
    }
  })

  it('delays an answer by delayMs', async () => {
    const rx = await startReceiver({ respond: () => ({ status: 204, delayMs: 200 }) })
    try {
      const started = Date.now()
      assert.equal((await post(rx.url)).status, 204)
      assert.ok(Date.now() - started >= 190)
    } finally {
      await rx.close()
    }
  })

  it('close() cuts a hanging request instead of waiting for it', async () => {
    const rx = await startReceiver({ respond: () => ({ hang: true }) })
    const pending = post(rx.url)
    await rx.waitFor(1)
    await rx.close()
    await assert.rejects(pending)
  })
})

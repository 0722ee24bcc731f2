import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SseParser } from '../../src/lib/sse.ts'

test('SSE: messages end at a blank line, data lines join, comments and unknown fields are ignored', () => {
  const p = new SseParser()
  assert.deepEqual(p.push(': comment\n\nid: evt_1\nevent: order.created\ndata: {"a":1}\n\n'), [{ id: 'evt_1', event: 'order.created', data: '{"a":1}' }])
  assert.deepEqual(p.push('data: one\ndata:two\nfoo: bar\n\n'), [{ id: 'evt_1', event: 'message', data: 'one\ntwo' }], 'the id persists; no space after the colon is kept too')
  assert.equal(p.lastEventId, 'evt_1')
})

test('SSE: a message split anywhere, CRLF and CR line ends, and a retry field', () => {
  const text = 'id: evt_2\r\nevent: payment.received\r\ndata: x\r\n\r\nretry: 2500\rdata: y\r\r\n'
  const p = new SseParser()
  const got = []
  for (const ch of text) got.push(...p.push(new TextEncoder().encode(ch)))
  assert.deepEqual(got, [{ id: 'evt_2', event: 'payment.received', data: 'x' }, { id: 'evt_2', event: 'message', data: 'y' }])
  assert.equal(p.retryMs, 2500)
})

test('SSE: a message with no data is not dispatched, and an id with NUL is ignored', () => {
  const p = new SseParser()
  assert.deepEqual(p.push('event: x\nid: a\0b\n\n'), [])
  assert.equal(p.lastEventId, '')
})

test('SSE: an id becomes the last event id only when its message ends: a stream cut inside a message resumes before it', () => {
  const p = new SseParser()
  assert.deepEqual(p.push('id: evt_1\ndata: a\n\nid: evt_2\ndata: {"cut'), [{ id: 'evt_1', event: 'message', data: 'a' }])
  assert.equal(p.lastEventId, 'evt_1')
})

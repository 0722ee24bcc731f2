import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { openDatabase } from '../../src/engine/open.ts'
import type { OpenDb } from '../../src/engine/port.ts'
import { EventStreams } from '../../src/events/streams.ts'
import { newId } from '../../src/lib/ids.ts'
import { createLogger } from '../../src/lib/logger.ts'
import { TooManyError } from '../../src/lib/errors.ts'
import { createTenant } from '../../src/modules/tenants/service.ts'
import { SseParser } from '../../src/lib/sse.ts'

// The event streams' hub (src/events/streams.ts) on a real SQLite engine, read as a consumer
// reads its ReadableStream: heartbeats, the key's limit, the buffer bound, stopping.

describe('EventStreams', () => {
  let dir: string
  let opened: OpenDb
  let tenantId: string
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'event-streams-'))
    opened = await openDatabase(join(dir, 'x.db'), { create: true, migrate: true })
    tenantId = (await createTenant(opened.db, 'T', new Date())).id
  })
  after(async () => {
    await opened.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const limits = { perKey: 2, bufferBytes: 4096, heartbeatMs: 20, pollMs: 1_000 }
  const hub = () => new EventStreams(opened.engine.feed, createLogger('silent'), limits)
  const write = async (payloadBytes = 100) => {
    const id = newId('evt')
    await opened.engine.withTx(({ tx }) => opened.engine.writeEvent(tx, { id, tenantId, name: 'order.created', at: new Date().toISOString(), payload: `{"id":"${id}","pad":"${'x'.repeat(payloadBytes)}"}` }))
    opened.engine.feed.committed()
    return id
  }
  const reader = (body: ReadableStream<Uint8Array>) => {
    const r = body.getReader()
    const p = new SseParser()
    let text = ''
    return {
      /** Reads until `pred` holds of what was read. */
      until: async (pred: (text: string, ids: string[]) => boolean) => {
        const ids: string[] = []
        for (;;) {
          if (pred(text, ids)) return ids
          const { done, value } = await r.read()
          if (done) throw new Error('ended')
          const chunk = new TextDecoder().decode(value)
          text += chunk
          ids.push(...p.push(chunk).map((m) => m.id))
        }
      },
      read: () => r.read(),
      cancel: () => r.cancel(),
    }
  }

  test('a comment line every heartbeat keeps an idle stream open', async () => {
    const h = hub()
    try {
      const r = reader(await h.open({ tenantId, keyId: 'k1', after: null, wants: () => true }))
      await r.until((text) => (text.match(/: keep-alive\n\n/g) ?? []).length >= 2)
      await r.cancel()
    } finally {
      await h.close()
    }
  })

  test('a key holds at most `perKey` streams; one cancelled gives its place back', async () => {
    const h = hub()
    try {
      const a = reader(await h.open({ tenantId, keyId: 'k2', after: null, wants: () => true }))
      await h.open({ tenantId, keyId: 'k2', after: null, wants: () => true })
      await assert.rejects(h.open({ tenantId, keyId: 'k2', after: null, wants: () => true }), (e) => e instanceof TooManyError && e.retryAfterS === 5)
      await h.open({ tenantId, keyId: 'k3', after: null, wants: () => true })
      await a.cancel()
      await h.open({ tenantId, keyId: 'k2', after: null, wants: () => true })
      assert.equal(h.stats().open, 3)
    } finally {
      await h.close()
    }
    assert.equal(h.stats().open, 0)
  })

  test('a consumer that reads nothing is cut once its buffer is full; one that reads gets every event', async () => {
    const h = hub()
    try {
      const idle = await h.open({ tenantId, keyId: 'k4', after: null, wants: () => true })
      const busy = reader(await h.open({ tenantId, keyId: 'k5', after: null, wants: () => true }))
      const ids: string[] = []
      for (let i = 0; i < 20; i++) {
        ids.push(await write(500))
        // The busy one reads each as it comes: its buffer never fills.
        await busy.until((_, got) => got.includes(ids[i]!))
      }
      assert.equal(h.stats().cutSlow, 1)
      const r = idle.getReader()
      await assert.rejects(async () => { for (;;) if ((await r.read()).done) break }, /read too slowly/)
      assert.equal(h.stats().open, 1)
    } finally {
      await h.close()
    }
  })

  test('a resumed stream catches up at its consumer\'s pace, not cut, then goes live; close() ends it cleanly', async () => {
    const h = hub()
    const from = (await opened.db.selectFrom('events').select((eb) => eb.fn.max('id').as('id')).executeTakeFirst())!.id!
    const ids: string[] = []
    for (let i = 0; i < 30; i++) ids.push(await write(500)) // 15 KB: over the 4 KB buffer
    const r = reader(await h.open({ tenantId, keyId: 'k6', after: from, wants: () => true }))
    const caught = await r.until((_, got) => got.length >= 30)
    assert.deepEqual(caught, ids)
    const live = await write()
    assert.deepEqual((await r.until((_, got) => got.length >= 1)), [live])
    assert.equal(h.stats().cutSlow, 0)
    await h.close()
    assert.equal((await r.read()).done, true)
  })
})

import { setMaxListeners } from 'node:events'
import type { Sender } from '../send.ts'
import { BACKSTOP_MS } from './attempt.ts'
import { leaseUntil, type Core } from './core.ts'
import type { Cycles } from './cycle.ts'
import type { FastPath } from './fast-path.ts'
import type { GiveBack } from './give-back.ts'

/** How often the backstop looks at the attempts in flight. */
const _SWEEP_MS = 250

export interface Lifecycle {
  /** Aborted once, by stop() past its grace: every attempt still waiting for its answer ends (one signal for all, not one per attempt). */
  readonly signal: AbortSignal
  /** Worker.stop(): see worker.ts. */
  stop(graceMs: number, parts: { fastPath: FastPath; cycles: Cycles; giveBack: GiveBack }): Promise<void>
}

/**
 * The worker's start and end. At start: the store recovers what a previous holder left in flight,
 * then listens to the other processes (`heard`); the leases of attempts in flight are renewed
 * every third of their term; a sweep ends the attempts the HTTP client did not (`sweep`, at most
 * BACKSTOP_MS past the receiver deadline). At stop: nothing more is claimed, attempts in flight
 * have `graceMs` to end, the rest are aborted and given back, every answer received is recorded,
 * and the store and the sender are closed.
 */
export function createLifecycle(core: Core, o: { sender: Sender }, heard: () => void, sweep: (now: number) => void): Lifecycle {
  const { store, logger, running } = core
  let unlisten: (() => Promise<void>) | undefined
  core.ready = (async () => {
    await store.recover(core.owner)
    // Another process committed work: read the queue. (A manual retry asked there of an attempt in
    // flight here is claimed by the next read after its recording, at the latest the poll's.)
    if (store.listen) unlisten = await store.listen(() => core.stopping || heard())
    core.started = true
  })().catch((err: unknown) => logger.error('delivery store could not start', { error: String(err) }))
  const renewal = setInterval(() => {
    const ids = [...running.keys()]
    if (ids.length === 0) return
    store.renew(ids, core.owner, leaseUntil(core, core.clock.now())).catch((err: unknown) => logger.warn('could not renew delivery leases', { error: String(err) }))
  }, Math.max(100, Math.floor(core.leaseMs / 3)))
  renewal.unref()
  const shutdown = new AbortController()
  setMaxListeners(0, shutdown.signal)
  // A sweep over the attempts in flight rather than a timer per attempt; the bound stays within
  // 1 s of the deadline. The sweep looks after the timers that expired with it have run
  // (setImmediate): after the event loop was held for longer than the backstop's margin, the
  // sweep's tick came first among them and took attempts whose own deadline was about to end
  // them for stuck, dropping the connections of their subscription's other attempts ("The client
  // is destroyed" in their log).
  const backstop = setInterval(() => setImmediate(() => sweep(performance.now())), _SWEEP_MS)
  backstop.unref()

  return {
    signal: shutdown.signal,
    async stop(graceMs, { fastPath, cycles, giveBack }) {
      core.stopping = true
      core.reads.cancel()
      await fastPath.drain()
      const all = () => Promise.allSettled([...running.values()].map((r) => r.done))
      let timedOut = false
      const grace = new Promise<void>((r) => setTimeout(() => { timedOut = true; r() }, graceMs).unref())
      await Promise.race([all(), grace])
      if (timedOut) {
        const unsent = [...running.values()]
        shutdown.abort()
        // Aborted sends end at once; a sender that does not end on the signal is not waited for long.
        await Promise.race([all(), new Promise<void>((r) => setTimeout(r, BACKSTOP_MS))])
        for (const r of running.values()) r.end?.({ responseCode: null, durationMs: Math.round(performance.now() - r.at), error: 'aborted', responseBody: null, aborted: true })
        await all() // answers that arrived are recorded by the cycles they start
        giveBack.handBack(unsent.map((r) => r.job.id))
      }
      while (cycles.ticking) await cycles.ticking
      giveBack.flush()
      await Promise.all(core.background)
      await cycles.drain()
      await Promise.all(core.background) // a drop that the last cycle started ends at once (stopping)
      clearInterval(renewal)
      clearInterval(backstop)
      await core.ready // a listen() still connecting must finish before it can be stopped
      await unlisten?.().catch(() => {})
      await o.sender.close()
    },
  }
}

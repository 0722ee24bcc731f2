import type { Core } from './core.ts'

export interface GiveBack {
  /**
   * Leased deliveries this worker will not send (no room, or it is stopping): given back, due at
   * once, and announced to the other processes. What one event-loop turn hands back goes in one
   * statement.
   */
  handBack(ids: string[]): void
  /** Gives back what is waiting now, by a statement of `core.background` (stop() waits for those). */
  flush(): void
}

export function createGiveBack(core: Core): GiveBack {
  /** Leased deliveries to give back. */
  const toGiveBack: string[] = []

  function flush(): void {
    if (toGiveBack.length === 0) return
    const given = core.store.release(toGiveBack.splice(0), core.owner).catch((err: unknown) => {
      core.logger.warn('could not give back leased deliveries; they are claimed again when the lease expires', { error: String(err) })
    }).finally(() => {
      core.background.delete(given)
      if (!core.stopping) core.reads.whenFree()
      core.reads.handOff()
    })
    core.background.add(given)
  }

  return {
    handBack(ids) {
      if (ids.length === 0) return
      if (toGiveBack.length === 0) setImmediate(flush)
      toGiveBack.push(...ids)
    },
    flush,
  }
}

/**
 * When the worker reads the queue, and when it tells the other processes of work it leaves
 * there. A read costs a statement over the whole queue, and reading at every commit would cost one
 * per commit, so the worker reads only when a read can deal something: at start, at the poll or
 * a due time, after a wake that names nothing, when another process announces work, after an
 * answer that may have queued work again, and while a plan left due work undealt. Owns the two
 * timers that end in a look at the queue (the poll or due time, and a paced subscription's pause)
 * and nothing else: `look` is the worker's cycle.
 */
export interface Reads {
  /** When the last wake without hints came (performance.now()); -1: none yet. */
  readonly plainWakeAt: number
  /**
   * Work is queued that no slot here can take now: the queue is read again once one of the
   * attempts in flight is answered (the cycle that records it reads it), at a due time or at the
   * poll, rather than now. A read now would deal nothing.
   */
  whenFree(): void
  /** Another process announced work it could not take: the next cycle reads, and does not announce back what it leaves. */
  heard(): void
  /** A wake without hints (a retry or replay asked over the API): the cycles recording attempts in flight now read too. */
  plainWake(): void
  /**
   * A cycle starts with a batch of answers: whether it reads the queue. `requeues`: an answer may
   * have queued its delivery again (a manual attempt, or one in flight at a plain wake); `failed`:
   * one failed (its retry).
   */
  begin(requeues: boolean, failed: boolean, stopping: boolean): boolean
  /** The reading cycle's plan left due work undealt: read again, and announce it if this process asked for the read. */
  left(): void
  /** The reading cycle failed: read again, announcing as it would have. */
  unread(): void
  /**
   * Due work this process cannot take now (its limits are reached, a fast claim failed, it is
   * stopping): the other processes are told (PostgreSQL's NOTIFY), so one with free slots claims
   * it at once instead of at its poll. Work this process claims itself is announced to no one.
   */
  handOff(): void
  /** The next look at the queue, `ms` from now: the poll, or the earliest queued delivery not yet due. */
  next(ms: number): void
  /** A look at the queue at `at` (performance.now()), when a paced subscription's pause ends; an earlier one already set stands. */
  lookAt(at: number, now: number): void
  /** No more looks (stop()). */
  cancel(): void
}

export function createReads(look: () => void, announce: () => void): Reads {
  /**
   * The queue must be read: at start, at the poll or a due time, after a wake without hints,
   * while a plan left due work undealt. Otherwise a cycle that records answers does not read
   * it: every delivery queued since was named by its commit and claimed by the fast path.
   */
  let needRead = true
  /**
   * The next read was asked for by this process (not only by another's announcement): due work
   * it leaves undealt is announced. A read that only answers an announcement does not announce
   * back what it cannot take either: the process that announced it knows it is there, and two
   * busy processes would otherwise wake each other to read the queue without end.
   */
  let ownRead = true
  /** The reading cycle's answer to "announce what it leaves". */
  let announcing = false
  let plainWakeAt = -1
  let cancelled = false
  let timer: NodeJS.Timeout | undefined
  let pauseTimer: NodeJS.Timeout | undefined
  let pauseTimerAt = Infinity
  
  return {
    get plainWakeAt() { return plainWakeAt },
    whenFree() {
      needRead = true
      ownRead = true
    },
    heard() {
      needRead = true
    },
    plainWake() {
      plainWakeAt = performance.now()
    },
    begin(requeues, failed, stopping) {
      const read = !stopping && (needRead || requeues || failed)
      announcing = ownRead || requeues || failed
      if (read) needRead = ownRead = false
      return read
    },
    left() {
      needRead = true
      if (announcing) announce()
    },
    unread() {
      needRead = true
      ownRead ||= announcing
    },
    handOff: announce,
    next(ms) {
      if (cancelled) return
      clearTimeout(timer)
      timer = setTimeout(look, Math.max(0, ms))
      timer.unref()
    },
    lookAt(at, now) {
      if (cancelled || (pauseTimer && pauseTimerAt <= at)) return
      clearTimeout(pauseTimer)
      pauseTimerAt = at
      pauseTimer = setTimeout(() => {
        pauseTimer = undefined
        pauseTimerAt = Infinity
        look()
      }, Math.max(0, at - now))
      pauseTimer.unref()
    },
    cancel() {
      cancelled = true
      clearTimeout(timer)
      clearTimeout(pauseTimer)
    },
  }
}

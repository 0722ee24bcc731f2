/**
 * At most `size` holders at once, for heavy work whose awaits are all settled in memory (a
 * SQLite query resolves at once): such work would otherwise run from start to end in one
 * event-loop turn, before any other socket is even read. So a taker first yields a macrotask
 * (setImmediate) — every request that arrived together is read, and light ones such as
 * `/health` answered, before heavy work starts — and a freed turn is handed to the next
 * waiter in a later macrotask too, so I/O that arrived meanwhile is served between holders.
 */
export class Turns {
  #size: number
  #held = 0
  #waiting: (() => void)[] = []

  constructor(size: number) {
    this.#size = size
  }

  /** Resolves when a turn is held; call the returned function exactly once to give it back. */
  async take(): Promise<() => void> {
    await new Promise<void>((resolve) => setImmediate(resolve))
    if (this.#held < this.#size) this.#held++
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    let given = false
    return () => {
      if (given) return
      given = true
      const next = this.#waiting.shift()
      if (next) setImmediate(next) // the turn passes on, still held
      else this.#held--
    }
  }
}

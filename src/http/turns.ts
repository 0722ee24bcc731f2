/**
 * At most `size` holders per turn of the event loop, for heavy work whose awaits are all
 * settled in memory (a SQLite query resolves at once): such work runs from start to end
 * without giving the event loop back, so forty list requests read together would otherwise run
 * one after another before any other socket — `/health` included — is read again. A taker
 * first yields a macrotask (setImmediate), so every request that arrived together is read
 * first; a turn given back is freed, or handed to the next waiter, only in a later macrotask,
 * so I/O that arrived meanwhile is served between every `size` holders.
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
      setImmediate(() => {
        const next = this.#waiting.shift()
        if (next) next() // the turn passes on, still held
        else this.#held--
      })
    }
  }
}

/**
 * This process's watchers of the event feed (EventFeed.watch(), engine/port.ts): woken once per
 * event-loop turn however many commits of that turn announce events, and never while nobody
 * watches (a commit then costs one comparison).
 */
export class FeedWatchers {
  #watchers = new Set<() => void>()
  #pending = false

  get size(): number {
    return this.#watchers.size
  }

  /** Adds `wake`; the function returned removes it. */
  add(wake: () => void): () => void {
    this.#watchers.add(wake)
    return () => void this.#watchers.delete(wake)
  }

  wake(): void {
    if (this.#pending || this.#watchers.size === 0) return
    this.#pending = true
    setImmediate(() => {
      this.#pending = false
      for (const w of this.#watchers) w()
    })
  }
}

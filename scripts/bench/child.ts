// Shared by the benchmark's child processes: a tiny IPC protocol with the orchestrator
// (scripts/bench.ts). Every message is `{ type, ... }`; `stats` is answered by every child.

export type Message = { type: string; [k: string]: unknown }

const handlers = new Map<string, (msg: Message) => unknown>()

/** Answers `type` messages from the parent; a returned object is sent back as `${type}:ok`. */
export function on(type: string, handler: (msg: Message) => unknown): void {
  handlers.set(type, handler)
}

export function send(msg: Message): void {
  process.send?.(msg)
}

/** The next message of this type from the parent. */
export function next(type: string): Promise<Message> {
  return new Promise((resolve) => {
    const listener = (msg: Message) => {
      if (msg?.type !== type) return
      process.off('message', listener)
      resolve(msg)
    }
    process.on('message', listener)
  })
}

/** CPU time of this process in microseconds (user + system) and its peak resident set. */
export function selfStats(): { cpuUs: number; maxRssKb: number } {
  const u = process.cpuUsage()
  return { cpuUs: u.user + u.system, maxRssKb: process.resourceUsage().maxRSS }
}

if (!process.send) throw new Error('a benchmark child must be started by scripts/bench.ts (IPC channel)')
process.on('message', (msg: Message) => {
  const h = handlers.get(msg?.type)
  if (!h) return
  Promise.resolve(h(msg)).then((out) => { if (out !== undefined) send({ type: `${msg.type}:ok`, ...(out as object) }) },
    (err: unknown) => send({ type: `${msg.type}:error`, error: String((err as Error)?.stack ?? err) }))
})
on('stats', () => selfStats())
// The orchestrator gone (finished, crashed, killed): never outlive it.
process.on('disconnect', () => process.exit(0))

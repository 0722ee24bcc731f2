// The orchestrator's side of the child processes: spawn with an IPC channel, wait for a
// message type (with a deadline), read CPU time and peak RSS, and stop every child at the end.
import { spawn, type ChildProcess } from 'node:child_process'
import { openSync, closeSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from './child.ts'

export interface Child {
  name: string
  proc: ChildProcess
  /** The next message of this type (rejects after timeoutMs, or when the child exits). */
  next<T = Message>(type: string, timeoutMs?: number): Promise<T & Message>
  /** Sends `{ type }` and waits for `${type}:ok`. */
  ask<T = Message>(type: string, extra?: object, timeoutMs?: number): Promise<T & Message>
  send(msg: Message): void
  /** CPU time so far (µs, user + system), from process.cpuUsage() in the child. */
  cpuUs(): Promise<number>
  /** Peak resident set (VmHWM) in MB, read from /proc. */
  peakRssMb(): number
}

const live = new Set<ChildProcess>()

/**
 * Starts `scripts/bench/<script>` under Node 24 (this process's node) with tsx and an IPC
 * channel; a `.mjs` path (a bundle, see bundle.ts) runs under plain node.
 */
export function spawnChild(root: string, name: string, script: string, args: string[], opts: { stderrFile?: string; nodeArgs?: string[] } = {}): Child {
  const errFd = opts.stderrFile ? openSync(opts.stderrFile, 'a') : 'inherit'
  const entry = script.endsWith('.mjs') ? [script] : ['--import', 'tsx', join(root, 'scripts', 'bench', script)]
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), ...entry, ...args], {
    cwd: root, stdio: ['ignore', 'inherit', errFd, 'ipc'], env: { ...process.env, NODE_ENV: 'production' },
  })
  if (typeof errFd === 'number') closeSync(errFd)
  live.add(proc)
  proc.once('exit', () => live.delete(proc))
  const next = <T>(type: string, timeoutMs = 60_000) => new Promise<T & Message>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer)
      proc.off('message', onMessage)
      proc.off('exit', onExit)
    }
    const onMessage = (msg: Message) => {
      if (msg.type === `${type.replace(/:ok$/, '')}:error`) {
        cleanup()
        reject(new Error(`${name}: ${String(msg.error)}`))
      } else if (msg.type === type) {
        cleanup()
        resolve(msg as T & Message)
      }
    }
    const onExit = (code: number | null) => {
      cleanup()
      reject(new Error(`${name} exited (code ${code}) while waiting for '${type}'`))
    }
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`${name}: no '${type}' within ${timeoutMs} ms`))
    }, timeoutMs)
    proc.on('message', onMessage)
    proc.once('exit', onExit)
  })
  const send = (msg: Message) => { proc.send(msg) }
  const ask = <T>(type: string, extra: object = {}, timeoutMs = 30_000) => {
    const reply = next<T>(`${type}:ok`, timeoutMs)
    send({ type, ...extra })
    return reply
  }
  return {
    name, proc, next, ask, send,
    cpuUs: async () => (await ask<{ cpuUs: number }>('stats')).cpuUs,
    peakRssMb: () => {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))
      return m ? Number(m[1]) / 1024 : NaN
    },
  }
}

/** Kills every child still running (at the end, on failure, on Ctrl-C). */
export function killAll(): void {
  for (const proc of live) proc.kill('SIGKILL')
  live.clear()
}

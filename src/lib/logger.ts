import { writeSync } from 'node:fs'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/**
 * One JSON object per line on stderr (stdout is kept for command output and the
 * "listening" line). Callers never pass keys, secrets or request bodies.
 */
export function createLogger(level: LogLevel, write: (line: string) => void = stderrLines()): Logger {
  const min = LOG_LEVELS.indexOf(level)
  const log = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(lvl) < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n')
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

let _stderr: ((line: string) => void) | undefined

/**
 * Lines for stderr, written together at the end of the event-loop turn that produced them (one
 * system call per request line cost more than the line itself under load). Flushed at once past
 * 64 KB and when the process exits.
 *
 * Written with blocking writes to fd 2, not through `process.stderr`: on a pipe or socket whose
 * reader is behind (a log collector), Node's stream queues what the full pipe does not take, and
 * `process.exit()` drops the queue; a blocking write waits for room instead, as a file write does.
 */
export function stderrLines(): (line: string) => void {
  if (_stderr) return _stderr
  let pending = ''
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === '') return
    const out = pending
    pending = ''
    _writeAll(2, Buffer.from(out))
  }
  process.on('exit', flush)
  _stderr = (line) => {
    pending += line
    if (pending.length > 65_536) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  return _stderr
}

const _pause = new Int32Array(new SharedArrayBuffer(4))

/** All of `bytes` to `fd`, waiting (1 ms at a time) while a non-blocking pipe is full. Nowhere to report an error to: a closed stderr drops the lines. */
function _writeAll(fd: number, bytes: Buffer): void {
  let at = 0
  while (at < bytes.length) {
    try {
      at += writeSync(fd, bytes, at)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return
      Atomics.wait(_pause, 0, 0, 1)
    }
  }
}

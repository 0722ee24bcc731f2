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
export function createLogger(level: LogLevel, write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const min = LOG_LEVELS.indexOf(level)
  const log = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (LOG_LEVELS.indexOf(lvl) < min) return
    write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n')
  }
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') }
}

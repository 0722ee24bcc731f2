import { readFileSync } from 'node:fs'

// Whether a process of this host runs: serve's records of itself (serve-record.ts) on both
// engines, and SQLite's one-serve lock (engine/sqlite/process-lock.ts).

/** Whether the process `pid` of this host still runs and is the one that started at `started` (its procStart()). */
export function processRuns(pid: number, started: string | null): boolean {
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const now = procStart(pid)
  return started === null || now === null || now === started
}

/** The kernel's start time of a process (field 22 of /proc/<pid>/stat), null where there is no /proc. */
export function procStart(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null
  } catch {
    return null
  }
}

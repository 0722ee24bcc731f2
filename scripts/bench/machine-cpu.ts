// What the rest of the machine did while a figure was measured, read from /proc (Linux): how busy
// its cores were, and the CPU time of PostgreSQL's own processes when its server runs on this
// machine. On two cores these are what a figure shares the machine with. serve's CPU, the load
// generator's and the receiver's come from those processes themselves (process.cpuUsage()).
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import pg from 'pg'

const TICK_US = 1e6 / _clockTicks()

function _clockTicks(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
}

/** The cores' time so far (µs, all cores summed): busy (anything but idle and I/O wait) and in all. */
function _hostCpu(): { busyUs: number; totalUs: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
  const total = f.reduce((a, x) => a + x, 0)
  return { busyUs: (total - f[3]! - f[4]!) * TICK_US, totalUs: total * TICK_US }
}

/** The fields of /proc/<pid>/stat after the command name (index 0 is field 3, the state); null once it is gone. */
function _stat(pid: number): string[] | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return s.slice(s.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** A process's CPU time so far (µs, user + system, every thread) from its stat fields; `children`: with its waited-for children's. */
function _cpuUs(f: string[], children = false): number {
  return (Number(f[11]) + Number(f[12]) + (children ? Number(f[13]) + Number(f[14]) : 0)) * TICK_US
}

function _comm(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return null
  }
}

/**
 * The PostgreSQL server's process id (its postmaster) when the server behind `url` runs on this
 * machine and /proc shows it: the parent of this connection's backend. null otherwise (a server
 * elsewhere), and then no figure carries PostgreSQL's CPU.
 */
export async function localPgServer(url: string): Promise<number | null> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    const backend = rows[0]!.pid
    const ppid = Number(_stat(backend)?.[1])
    return _comm(backend) === 'postgres' && _comm(ppid) === 'postgres' ? ppid : null
  } finally {
    await client.end()
  }
}

/**
 * CPU time so far (µs) of a PostgreSQL server's processes: the postmaster, every process it
 * started that is alive (backends, walwriter, checkpointer, autovacuum…) and, through the
 * postmaster's count of its waited-for children, those that ended (a backend closed, an
 * autovacuum worker done). Resolution: the kernel's clock tick (10 ms) per process.
 */
function _pgServerCpuUs(postmaster: number): number {
  const own = _stat(postmaster)
  let us = own ? _cpuUs(own, true) : 0
  for (const name of readdirSync('/proc')) {
    const pid = Number(name)
    if (!Number.isInteger(pid) || pid === postmaster) continue
    const f = _stat(pid)
    if (f && Number(f[1]) === postmaster) us += _cpuUs(f)
  }
  return us
}

/** The machine over one measured window, from `open()` to `close()`. */
export interface MachineWindow {
  /** Share of all cores busy (0–1). */
  hostBusy: number
  /** CPU µs of PostgreSQL's processes (null: not measured, e.g. SQLite or a server elsewhere). */
  dbCpuUs: number | null
}

export function openWindow(pgServer: number | null): { close(): MachineWindow } {
  const host0 = _hostCpu()
  const db0 = pgServer === null ? null : _pgServerCpuUs(pgServer)
  return {
    close: () => {
      const host1 = _hostCpu()
      return {
        hostBusy: (host1.busyUs - host0.busyUs) / Math.max(1, host1.totalUs - host0.totalUs),
        dbCpuUs: db0 === null ? null : _pgServerCpuUs(pgServer!) - db0,
      }
    },
  }
}

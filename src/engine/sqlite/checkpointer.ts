import { closeSync, openSync, readSync } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { endianness } from 'node:os'
import type { Logger } from '../../lib/logger.ts'
import { openSqlite, type SqliteDatabase } from './sqlite.ts'

/** How often the checkpointer looks for committed frames to copy into the database file, in ms. */
export const CHECKPOINT_EVERY_MS = 100
/**
 * WAL frames (4 KiB pages) past which a cycle that could not copy everything ends with a
 * synchronous checkpoint of the rest, so that the WAL starts over: 64 MiB. SQLite's own
 * threshold is 1,000 frames; with 1,000 here the synchronous rest ran in nearly every cycle
 * while retention deleted a million rows, and its fsyncs held the event loop for up to 90 ms.
 */
export const RESTART_FRAMES = 16_384
/** Frames at most that a cycle past RESTART_FRAMES leaves to SQLite's own, synchronous checkpoint (1 MiB); with more left, it goes round again at once. */
export const TAIL_FRAMES = 256
/** The WAL file is cut back to this size when it starts over: twice what RESTART_FRAMES lets it reach, so it is cut only after something held it longer (cutting is a discard on a disk mounted with it). */
export const WAL_SIZE_LIMIT = 128 * 1024 * 1024

/**
 * The WAL index (the -shm file) begins with its header twice (48 bytes each, equal unless a
 * writer is changing them), then nBackfill, in the host's byte order (sqlite.org/walformat.html).
 */
const _INDEX_HEADER = 100
const _MX_FRAME = 16
const _N_BACKFILL = 96
const _u32 = (b: Buffer, at: number) => (endianness() === 'LE' ? b.readUInt32LE(at) : b.readUInt32BE(at))

export interface Checkpointer {
  /** Resolves at once, or once the WAL has been copied down after passing its threshold: background writers (retention) wait on it between steps, so that they never outrun the disk. */
  room(): Promise<void>
  /** The current cycle finishes; no new one starts. The caller closes its own connection afterwards (SQLite's last checkpoint). */
  stop(): Promise<void>
}

interface CheckpointResult {
  busy: number
  log: number
  checkpointed: number
}

/**
 * SQLite's WAL checkpoints, moved off `serve`'s event loop as far as they can be.
 *
 * A checkpoint copies committed pages from the WAL into the database file. SQLite runs one in
 * the commit that takes the WAL past 1,000 frames, in the connection that committed — here the
 * event loop — and with synchronous=NORMAL it calls fsync twice in it: the WAL before copying,
 * the database file after. Those waits are the disk's, not the CPU's: 5 ms on a quiet disk, up
 * to 400 ms and more measured on this project's machines while retention deleted a million rows,
 * every request waiting meanwhile.
 *
 * Here the two fsyncs run on libuv's thread pool (`FileHandle.datasync()`), in SQLite's order,
 * and SQLite's own steps (reading the WAL index, copying pages: memory copies, no waits) stay
 * on the event loop:
 *
 * 1. a read transaction on a connection of its own (`snapshot`) holds the WAL as it is now:
 *    while it lasts no writer may start the WAL over, and no checkpoint copies frames past it;
 * 2. the WAL's data is flushed (async) — everything up to the snapshot is on disk;
 * 3. a checkpoint on a second connection (`copier`, synchronous=OFF, so it calls no fsync of its
 *    own) copies the frames up to the snapshot into the database file;
 * 4. the database file is flushed (async) — the copied pages are on disk;
 * 5. the snapshot ends: those frames may now be overwritten.
 *
 * That is what SQLite's checkpoint guarantees (a frame is copied only once it is durable in
 * the WAL; the WAL is only reused once the copies are durable in the database file), with the
 * waits outside the event loop. A crash or a power loss at any point leaves a WAL that still
 * holds every frame not yet durably copied, and SQLite's recovery copies them again.
 *
 * A reader that begins when every frame has been copied reads the database file alone and
 * does not hold the WAL (SQLite's read mark 0); so the cycle reads the WAL index header before
 * and after the snapshot begins, and goes on only if it was unchanged with frames left to copy.
 *
 * Frames committed while those steps ran are left for the next cycle. Under constant writes
 * the WAL would then never be wholly copied at one moment and never start over; so once it
 * holds RESTART_FRAMES, a cycle ends with SQLite's own checkpoint (synchronous=NORMAL, its
 * fsyncs on the event loop) of what is left — only what was committed during the cycle's
 * waits — once that is at most TAIL_FRAMES. Until then cycles follow one another at once and
 * room() holds retention back; past four times RESTART_FRAMES the rest goes whatever its size.
 */
export function startCheckpointer(o: {
  file: string
  /** The event loop's connection: it stops checkpointing on commit. */
  db: SqliteDatabase
  logger: Logger
  everyMs?: number
  restartFrames?: number
  tailFrames?: number
  walSizeLimit?: number
  /** How a file is flushed (tests: a slower disk). */
  datasync?: (file: FileHandle) => Promise<void>
}): Checkpointer {
  const datasync = o.datasync ?? ((f: FileHandle) => f.datasync())
  const tailFrames = o.tailFrames ?? TAIL_FRAMES
  const everyMs = o.everyMs ?? CHECKPOINT_EVERY_MS
  const restartFrames = o.restartFrames ?? RESTART_FRAMES
  const limit = o.walSizeLimit ?? WAL_SIZE_LIMIT
  // The event loop's connection no longer checkpoints when it commits (SQLite still checkpoints
  // and removes the WAL when the last connection closes).
  o.db.pragma('wal_autocheckpoint = 0')
  o.db.pragma(`journal_size_limit = ${limit}`)
  const snapshot = openSqlite(o.file)
  const copier = openSqlite(o.file)
  for (const c of [snapshot, copier]) {
    c.pragma('busy_timeout = 0') // never wait on the event loop: a cycle that meets a lock is tried again
    c.pragma('cache_size = 16') // pages: neither reads more than the schema's first
  }
  const begin = snapshot.prepare('BEGIN')
  const read = snapshot.prepare('SELECT 1 FROM sqlite_schema LIMIT 1')
  const end = snapshot.prepare('COMMIT')
  const changed = copier.prepare('PRAGMA data_version').pluck()
  const checkpoint = (sync: 'OFF' | 'NORMAL'): CheckpointResult => {
    copier.pragma(`synchronous = ${sync}`)
    return (copier.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[])[0]!
  }
  let wal: FileHandle | undefined
  let main: FileHandle | undefined
  let shm: number | undefined
  let version = -1
  let behind = true
  let stopped = false
  let failing = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined
  /** The WAL index's header as it is now (a copy), or undefined while a writer is changing it. */
  const walIndex = (): Buffer | undefined => {
    shm ??= openSync(`${o.file}-shm`, 'r')
    const b = Buffer.alloc(_INDEX_HEADER)
    readSync(shm, b, 0, _INDEX_HEADER, 0)
    return b.subarray(0, 48).equals(b.subarray(48, 96)) ? b : undefined
  }

  /**
   * One cycle: 'copied' when every committed frame is in the database file, 'behind' when some
   * are left for the next, 'full' when the WAL is past its threshold with more left than a
   * synchronous checkpoint should copy (the next cycle follows at once; room() waits meanwhile).
   */
  const cycle = async (): Promise<'copied' | 'behind' | 'full'> => {
    const v = changed.get() as number
    if (v === version && !behind) return 'copied'
    version = v
    let r: CheckpointResult
    let backfilled: number
    const before = walIndex()
    begin.run()
    try {
      read.get()
      const at = walIndex()
      // The snapshot holds the WAL only if it reads from it, that is if frames were left to copy
      // when it began: when every frame has been copied, SQLite lets a reader read the database
      // file alone, and a writer may then start the WAL over beneath it. So the header is read
      // before and after it began: unchanged, with frames left (mxFrame ≠ nBackfill), it holds.
      if (!before || !at || !before.equals(at)) return 'behind' // someone wrote meanwhile: next cycle
      backfilled = _u32(at, _N_BACKFILL)
      if (_u32(at, _MX_FRAME) === backfilled) return 'copied'
      wal ??= await open(`${o.file}-wal`, 'r')
      main ??= await open(o.file, 'r')
      await datasync(wal)
      r = checkpoint('OFF')
      await datasync(main)
    } finally {
      end.run()
    }
    // Where the WAL stands now: `r` does not count what was committed during the second flush.
    const now = walIndex()
    const log = now ? _u32(now, _MX_FRAME) : r.log
    const copied = now ? _u32(now, _N_BACKFILL) : r.checkpointed
    if (log === copied) return 'copied'
    // Nothing copied: another process's reader holds an older snapshot. Not again at once.
    if (r.checkpointed === backfilled || log < restartFrames) return 'behind'
    // Past the threshold: what is left (committed during this cycle's waits) is copied by SQLite's
    // own checkpoint, fsyncs on the event loop, once it is small — room() holds back the writers
    // that can wait meanwhile — or once the WAL is four times its threshold whatever is left.
    if (log - copied > tailFrames && log < 4 * restartFrames) return 'full'
    await datasync(wal)
    const last = checkpoint('NORMAL')
    return last.log === last.checkpointed ? 'copied' : 'behind'
  }
  let full = false
  let waiting: (() => void)[] = []
  const release = () => {
    full = false
    for (const w of waiting) w()
    waiting = []
  }
  const loop = () => {
    if (stopped) return
    running = cycle().then((state) => {
      behind = state !== 'copied'
      if (state === 'full') full = true
      else release()
      if (failing) o.logger.info('WAL checkpoints work again')
      failing = false
    }, (err: unknown) => {
      behind = true
      release()
      // Once, not every tenth of a second while it lasts (SQLITE_BUSY while another process recovers the WAL, a full disk…).
      if (!failing) o.logger.warn('WAL checkpoint failed; trying again every cycle', { error: String(err) })
      failing = true
    }).finally(() => {
      running = undefined
      if (stopped) return
      if (full) setImmediate(loop)
      else timer = setTimeout(loop, everyMs).unref()
    })
  }
  timer = setTimeout(loop, everyMs).unref()
  return {
    room: () => (full && !stopped ? new Promise<void>((resolve) => waiting.push(resolve)) : Promise.resolve()),
    async stop() {
      stopped = true
      release()
      clearTimeout(timer)
      await running
      await Promise.all([wal?.close(), main?.close()])
      if (shm !== undefined) closeSync(shm)
      snapshot.close()
      copier.close()
    },
  }
}

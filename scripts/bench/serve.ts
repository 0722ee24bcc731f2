// The real `serve` for the benchmark: startServer() with the default configuration but
// port 0, loopback webhook targets allowed and logging on at info level. stderr (the JSON
// log lines) is redirected by the orchestrator to a file.
import { DEFAULT_CONFIG } from '../../src/config.ts'
import { startServer } from '../../src/server.ts'
import { on, send } from './child.ts'

async function main(): Promise<void> {
  const db = process.argv[2]
  if (!db) throw new Error('usage: serve.ts <db file>')
  const server = await startServer({ ...DEFAULT_CONFIG, db, port: 0, allowPrivateTargets: true, logLevel: 'info' })
  // Stopped this way (not killed), a `--cpu-prof` run writes its profile.
  on('stop', async () => {
    await server.stop(2000)
    setTimeout(() => process.exit(0), 100)
    return {}
  })
  send({ type: 'ready', url: server.url })
}

main().catch((err: unknown) => {
  process.stderr.write(`bench serve failed: ${String((err as Error)?.stack ?? err)}\n`)
  process.exit(1)
})

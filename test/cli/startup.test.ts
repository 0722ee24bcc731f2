import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, describe, test } from 'node:test'
import { BIN } from '../helpers/cli.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

// Records every module the CLI loads (module.registerHooks runs in the process, alongside tsx).
const RECORDER = `
import { registerHooks } from 'node:module'
const seen = new Set()
registerHooks({ load(url, context, next) { seen.add(url.split('?')[0]); return next(url, context) } })
process.on('exit', () => process.stderr.write('LOADED ' + JSON.stringify([...seen]) + '\\n'))
`

describe('CLI start-up', () => {
  let dir: string
  let recorder: string
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-startup-'))
    recorder = join(dir, 'recorder.mjs')
    writeFileSync(recorder, RECORDER)
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  /** The project files and packages a run of the CLI loaded (tsx's own machinery left out). */
  const loaded = (args: string[]) => {
    const r = spawnSync(process.execPath, ['--import', recorder, BIN, ...args], { encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '))!
    return (JSON.parse(line.slice('LOADED '.length)) as string[])
      .filter((u) => u.startsWith('file:'))
      .map((u) => fileURLToPath(u).slice(ROOT.length))
      .filter((p) => !p.startsWith('node_modules/tsx/') && !p.startsWith('node_modules/esbuild/'))
      .map((p) => (p.startsWith('node_modules/') ? p.split('/').slice(0, 2).join('/') : p))
  }

  test('--version, --help, a command\'s --help and completion load only commander and the command definitions', () => {
    for (const args of [['--version'], ['--help'], ['deliveries', 'list', '--help'], ['serve', '--help'], ['completion', 'bash']]) {
      const files = [...new Set(loaded(args))]
      const unexpected = files.filter((f) => !/^(cli\/[a-z-]+\.(ts|cjs)|src\/version\.ts|src\/config-defaults\.ts|package\.json|node_modules\/commander)$/.test(f))
      assert.deepEqual(unexpected, [], `travelops ${args.join(' ')} loaded more than it needs`)
      assert.ok(files.includes('cli/program.ts'))
    }
  })

  test('--help lists every command, and each command lists its options with their environment twins', () => {
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' }).stdout
    for (const cmd of ['serve', 'migrate', 'tenants', 'keys', 'deliveries', 'verify', 'backup']) assert.match(help, new RegExp(`^  ${cmd}\\b`, 'm'), cmd)
    const helpOf = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args, '--help'], { encoding: 'utf8' }).stdout
    const list = helpOf('deliveries', 'list')
    for (const opt of ['--tenant', '--webhook', '--status', '--limit', '--db', '--json', 'TRAVELOPS_DB']) assert.ok(list.includes(opt), opt)
    assert.match(helpOf('deliveries'), /list[\s\S]*show[\s\S]*retry[\s\S]*replay/)
    const replay = helpOf('deliveries', 'replay')
    for (const opt of ['--webhook', '--since', '--status']) assert.ok(replay.includes(opt), opt)
    const verify = helpOf('verify')
    for (const opt of ['--secret', 'TRAVELOPS_WEBHOOK_SECRET', '--signature', '--file', '--json']) assert.ok(verify.includes(opt), opt)
    const backup = helpOf('backup')
    for (const opt of ['<dest-file>', '--force', '--db', 'TRAVELOPS_DB', '--json']) assert.ok(backup.includes(opt), opt)
  })

  test('every command\'s --help has examples, and names the default and the environment twin of each option that has them', async () => {
    const { createProgram } = await import('../../cli/program.ts')
    const all = (cmd: import('commander').Command): import('commander').Command[] => [cmd, ...cmd.commands.flatMap(all)]
    for (const cmd of all(createProgram())) {
      let text = ''
      cmd.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) })
      cmd.outputHelp()
      const name = cmd.parent ? `${cmd.parent.name()} ${cmd.name()}` : cmd.name()
      assert.match(text, /\nExamples?( \([^)]*\))?:\n {2}\$ travelops /, `${name} --help has an example`)
      for (const opt of cmd.options) {
        if (opt.envVar) assert.match(text.replace(/\s+/g, ' '), new RegExp(`[(,] ?env: ${opt.envVar}\\)`), `${name} ${opt.long}: env twin`)
      }
    }
    const serve = spawnSync(process.execPath, [BIN, 'serve', '--help'], { encoding: 'utf8' }).stdout.replace(/\s+/g, ' ')
    for (const shown of ['default: 127.0.0.1', 'default: 3000', 'default: 60000', 'default: 30000', 'default: 1000', 'default: 50', 'default: 5d', 'default: 30d', 'default: info', 'default: ./travelops.db']) {
      assert.ok(serve.includes(shown), shown)
    }
  })
})

import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { readmeBlocks } from '../helpers/readme.ts'
import { startTestApp, type TestApp } from '../helpers/app.ts'

const run = promisify(execFile)
const require = createRequire(import.meta.url)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const REDOCLY_ENV = { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SDK_TELEMETRY: 'off' }
const _bin = (pkg: string, path: string) => join(dirname(require.resolve(`${pkg}/package.json`)), path)

/**
 * The served document under both public linters, each spawned once for two files: the real
 * document (0 errors, 0 warnings) and a spoiled copy (proving the rules run). Both work offline:
 * their rulesets are bundled, the document has no remote `$ref`, and Redocly's telemetry and
 * update check are switched off through its environment variables.
 *
 * The one finding set aside: Redocly's `no-ambiguous-paths` pairs `/v1/webhooks/deliveries/{id}`
 * with `/v1/webhooks/{id}/test` (CONTRACT §7 and §11 fix both paths). Requests are not ambiguous —
 * `deliveries` is a literal segment, and a subscription id must match `^wh_` — so that single
 * pointer is listed in Redocly's ignore file; every other rule of `recommended` applies.
 * Spectral's `info-contact` is off: the project names no support address, and a placeholder
 * contact would mislead (the license, MIT, is named).
 * The configuration is the repository's own (redocly.yaml, .redocly.lint-ignore.yaml,
 * .spectral.yaml at the root), copied beside the files; docs/openapi.md's commands run at the root.
 */
describe('OpenAPI document under spectral (spectral:oas) and redocly (recommended)', () => {
  let app: TestApp
  let dir: string
  let doc: any

  before(async () => {
    app = await startTestApp()
    doc = (await app.request('GET', '/v1/openapi.json')).body
    dir = await mkdtemp(join(tmpdir(), 'travelops-lint-'))
    const spoiled = structuredClone(doc)
    delete spoiled.paths['/v1/orders'].get.description
    spoiled.webhooks['order.created'].post.requestBody.content['application/json'].example.data.total = 'a lot'
    await writeFile(join(dir, 'openapi.json'), JSON.stringify(doc))
    await writeFile(join(dir, 'spoiled.json'), JSON.stringify(spoiled))
    // The repository's own configuration, as `npx … lint` at the root uses it (docs/openapi.md).
    for (const file of ['redocly.yaml', '.redocly.lint-ignore.yaml', '.spectral.yaml']) await copyFile(join(ROOT, file), join(dir, file))
  })
  after(async () => {
    await app.close()
    await rm(dir, { recursive: true, force: true })
  })

  test('spectral: no error, warning, info or hint on the document; the spoiled copy is caught', async () => {
    const args = [_bin('@stoplight/spectral-cli', 'dist/index.js'), 'lint', '-f', 'json', '-F', 'hint', '-q', 'openapi.json', 'spoiled.json']
    const { stdout } = await run(process.execPath, args, { cwd: dir, maxBuffer: 16 << 20 }).catch((err: { stdout: string }) => err)
    const results: { code: string; source: string; path: string[] }[] = JSON.parse(stdout)
    const of = (file: string) => results.filter((r) => r.source.endsWith(file)).map((r) => `${r.code} ${r.path.join('.')}`)
    assert.deepEqual(of('openapi.json'), [])
    assert.ok(of('spoiled.json').some((r) => r.startsWith('operation-description paths./v1/orders.get')), of('spoiled.json').join('\n'))
    assert.ok(of('spoiled.json').some((r) => r.startsWith('oas3-valid-media-example webhooks.order.created')), of('spoiled.json').join('\n'))
  })

  test('redocly: no error or warning on the document; the spoiled copy is caught', async () => {
    const env = { ...process.env, ...REDOCLY_ENV }
    const lint = async (file?: string) => {
      // Without a file: the `apis` entry of redocly.yaml (openapi.json), as at the root.
      const args = [_bin('@redocly/cli', 'bin/cli.js'), 'lint', '--format', 'json', ...(file ? [file] : [])]
      const { stdout } = await run(process.execPath, args, { cwd: dir, env, maxBuffer: 16 << 20 }).catch((err: { stdout: string }) => err)
      return JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string }[] }
    }
    const [good, spoiled] = await Promise.all([lint(), lint('spoiled.json')])
    assert.deepEqual(good.totals, { errors: 0, warnings: 0, ignored: 1 }, JSON.stringify(good.problems, null, 1))
    const rules = spoiled.problems.map((p) => p.ruleId)
    assert.ok(rules.includes('no-ambiguous-paths'), 'the ignore entry is for openapi.json alone')
    assert.ok(rules.includes('no-invalid-media-type-examples'), rules.join(', '))
  })

  test('docs/openapi.md: its sh block runs word for word at the root and both linters pass', async () => {
    const [block, ...more] = readmeBlocks(join(ROOT, 'docs/openapi.md'), 'sh')
    assert.ok(block && more.length === 0, 'docs/openapi.md has one sh block')
    const bin = join(dirname(process.execPath))
    const env = { ...process.env, ...REDOCLY_ENV, PATH: `${bin}:${process.env.PATH}` }
    const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', block.lines.join('\n')], { cwd: ROOT, env, maxBuffer: 16 << 20 })
    const out = stdout + stderr
    assert.match(out, /Your API description is valid/, out)
    assert.match(out, /No results with a severity of 'warn' or higher found!/, out)
  })
})

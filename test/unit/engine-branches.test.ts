import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'

// The database engine is a port (src/engine/port.ts) with one adapter per database: code outside
// src/engine/ calls the Engine object and never asks which database it runs on. This reads every
// TypeScript file of src/ and cli/ but those under src/engine/ and lists what would be such a
// question: each rule names what it looks for.

const RULES: { what: string; pattern: RegExp }[] = [
  { what: 'a call of isPostgres…() (isPostgres, isPostgresUrl): which database a handle or a target is', pattern: /\bisPostgres\w*\s*\(/ },
  { what: "a comparison with an engine's name ('sqlite', 'postgres', 'postgresql')", pattern: /[!=]==?\s*['"`](sqlite|postgres|postgresql)['"`]|['"`](sqlite|postgres|postgresql)['"`]\s*[!=]==?/ },
  { what: 'a comparison of an engine (`engine ===`, `.engine !==`)', pattern: /\bengine(\.name)?\s*[!=]==?/ },
  { what: "a branch on whether a SQLite connection is at hand (`opened.sqlite ? …`, `if (x.sqlite)`, `.sqlite &&`)", pattern: /\.sqlite\s*(\?(?![.?])|&&|\|\|)|\bif\s*\(\s*!?[\w.]+\.sqlite\s*\)/ },
  { what: 'an import of a database adapter (src/engine/sqlite/, src/engine/postgres/): only src/engine/open.ts picks one', pattern: /(from\s+|import\s*\(\s*)['"][^'"]*engine\/(sqlite|postgres)\// },
  { what: "an instanceof check on a database's class (SharedRateLimiter, a kysely dialect, adapter or driver)", pattern: /instanceof\s+(SharedRateLimiter|\w*(Postgres|Sqlite)\w*)/ },
]

const ROOT = new URL('../../', import.meta.url)

/** Every .ts file under `dir` (a path from the repository's root), as paths from the root. */
function _files(dir: string): string[] {
  return readdirSync(new URL(dir, ROOT), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => `${dir}${f}`)
    .sort()
}

/** Each line of `text` that matches a rule, comments left out (a comment may name an engine). */
export function engineBranches(file: string, text: string): string[] {
  const found: string[] = []
  const lines = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).split('\n')
  lines.forEach((raw, i) => {
    const line = raw.replace(/(^|\s)\/\/.*$/, '')
    for (const r of RULES) if (r.pattern.test(line)) found.push(`${file}:${i + 1}: ${r.what}\n    ${line.trim()}`)
  })
  return found
}

test('code outside src/engine/ never asks which database it runs on', () => {
  const files = [..._files('src/'), ..._files('cli/')].filter((f) => !f.startsWith('src/engine/'))
  assert.ok(files.length > 100, `${files.length} files read`)
  const found = files.flatMap((f) => engineBranches(f, readFileSync(new URL(f, ROOT), 'utf8')))
  assert.deepEqual(found, [], `engine branches outside src/engine/ (ask the Engine object instead):\n${found.join('\n')}`)
})

test('each rule finds the branch it names, and comments are not code', () => {
  const cases: [string, boolean][] = [
    ['if (isPostgres(tx)) return', true],
    ["const shown = isPostgresUrl(db) ? redactUrl(db) : db", true],
    ["if (from.engine === 'postgres') return undefined", true],
    ["engine === 'sqlite' ? config.db : url", true],
    ["keys: (deps.engine === 'postgres' ? a : b)", true],
    ['if (opened.engine.name !== name) throw', true],
    ['const checkpointer = opened.sqlite ? start() : undefined', true],
    ['if (opened.sqlite) migrate(opened.sqlite)', true],
    ["const { x } = await import('../src/engine/postgres/migrate.ts')", true],
    ["import { sqliteDeliveryStore } from './engine/sqlite/delivery-store.ts'", true],
    ['if (limiters.keys instanceof SharedRateLimiter) await limiters.keys.close()', true],
    ["import { openDatabase } from '../src/engine/open.ts'", false],
    ['const r = await deps.engine.ping()', false],
    ['const s = opened.sqlite?.open', false],
    ["// on 'postgres' === engine this is never reached", false],
    ["/* engine === 'sqlite' */ run()", false],
  ]
  for (const [line, branch] of cases) assert.equal(engineBranches('x.ts', line).length > 0, branch, line)
})

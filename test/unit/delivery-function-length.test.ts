import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'node:test'
import { functionLengths } from '../helpers/source-ast.ts'

/** The longest a function in src/delivery may run, in lines from its first to its last (nested functions included). */
const MAX_LINES = 150

const root = fileURLToPath(new URL('../../', import.meta.url))

function _files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return _files(path)
    return e.name.endsWith('.ts') ? [path] : []
  })
}

test('the measure counts a function from its first line to its last, nested ones included', () => {
  const text = 'export function outer() {\n  const inner = () => {\n    return 1\n  }\n  return inner()\n}\n'
  assert.deepEqual(functionLengths('x.ts', text), [{ name: 'outer', line: 1, lines: 6 }, { name: 'inner', line: 2, lines: 3 }])
})

test(`no function in src/delivery runs over ${MAX_LINES} lines`, () => {
  const long = _files(join(root, 'src/delivery')).flatMap((path) => {
    const rel = relative(root, path)
    return functionLengths(rel, readFileSync(path, 'utf8')).filter((f) => f.lines > MAX_LINES).map((f) => `${rel}:${f.line} ${f.name} (${f.lines} lines)`)
  })
  assert.deepEqual(long, [])
})

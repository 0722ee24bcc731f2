import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { typeCheck } from '../../scripts/type-check.ts'

// npm test's type check runs beside the first pass; a project with an error must fail the run
// and be named in the summary with tsc's own lines, the others still checked.
test('the type check names each failing project with tsc\'s lines, and checks every project', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'type-check-'))
  try {
    const options = { strict: true, noEmit: true, types: [] as string[], lib: ['ES2023'], target: 'ES2023' }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['bad.ts'] }))
    writeFileSync(join(dir, 'good.json'), JSON.stringify({ compilerOptions: options, files: ['good.ts'] }))
    writeFileSync(join(dir, 'bad.ts'), 'export const n: number = "one"\n')
    writeFileSync(join(dir, 'good.ts'), 'export const n: number = 1\n')
    const seen: number[] = []
    const r = await typeCheck(dir, [['-p', 'good.json'], ['--noEmit'], ['-p', 'good.json']], (c) => seen.push(c.pid ?? 0))
    assert.equal(seen.length, 3)
    assert.deepEqual(r.failures.map((f) => f.command), ['tsc --noEmit'])
    assert.match(r.failures[0]!.lines.join('\n'), /^bad\.ts\(1,14\): error TS2322: Type 'string' is not assignable to type 'number'\.$/m)
    assert.ok(r.ms > 0)
    assert.deepEqual((await typeCheck(dir, [['-p', 'good.json']])).failures, [])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, describe, test } from 'node:test'

// The benchmark's profile summary (scripts/bench/profile-top.ts) given a sampling heap profile
// (BENCH_HEAP_PROFILE): bytes by function, by file and including callees, from a profile whose
// sizes are known. The real profiler's output has this shape (HeapProfiler.stopSampling).

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const MB = 1048576

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 9, columnNumber: 0, scriptId: '1' })
const node = (id: number, f: ReturnType<typeof frame>, selfSize: number, children: unknown[] = []) => ({ id, callFrame: f, selfSize, children })

describe('profile-top.ts on a heap profile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'travelops-heap-'))
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('splits the bytes by function, by file and including callees', () => {
    const send = frame('send', 'file:///app/src/delivery/send.ts')
    const head = node(1, frame('(root)', ''), 0, [
      node(2, frame('tick', 'file:///app/src/delivery/worker.ts'), 1 * MB, [
        node(3, send, 3 * MB, [node(4, frame('writeH1', 'file:///app/node_modules/undici/lib/h1.js'), 2 * MB)]),
      ]),
      // The same function reached another way counts once more by function, and in its file.
      node(5, send, 2 * MB),
    ])
    const file = join(dir, 'serve.heapprofile')
    writeFileSync(file, JSON.stringify({ head, samples: [] }))
    const r = spawnSync(process.execPath, [join(ROOT, 'scripts/bench/profile-top.ts'), file, '10'], { cwd: ROOT, encoding: 'utf8' })
    assert.equal(r.status, 0, r.stderr)
    const section = (title: string) => {
      const lines = r.stdout.split('\n')
      const at = lines.indexOf(title)
      assert.ok(at >= 0, `no section '${title}' in:\n${r.stdout}`)
      const end = lines.findIndex((l, i) => i > at && l === '')
      return lines.slice(at + 1, end < 0 ? undefined : end).map((l) => l.trim().replace(/\s+/g, ' '))
    }
    assert.match(r.stdout, /^allocated 8\.0 MB/)
    assert.deepEqual(section('bytes by function'), [
      '62.5% 5.0 MB send src/delivery/send.ts:10',
      '25.0% 2.0 MB writeH1 undici:10',
      '12.5% 1.0 MB tick src/delivery/worker.ts:10',
    ])
    assert.deepEqual(section('bytes by file'), [
      '62.5% 5.0 MB src/delivery/send.ts',
      '25.0% 2.0 MB undici',
      '12.5% 1.0 MB src/delivery/worker.ts',
    ])
    assert.deepEqual(section('bytes including callees, by function'), [
      '87.5% 7.0 MB send src/delivery/send.ts:10',
      '75.0% 6.0 MB tick src/delivery/worker.ts:10',
      '25.0% 2.0 MB writeH1 undici:10',
    ])
  })
})

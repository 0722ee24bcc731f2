import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { relativeTime, renderTable, type Column } from '../../cli/format.ts'

describe('relativeTime', () => {
  const now = new Date('2026-11-24T12:00:00.000Z')
  const at = (ms: number) => new Date(now.getTime() + ms).toISOString()
  test('past and future, in the largest whole unit; the date past 30 days; null stays null', () => {
    const cases: [string | null, string | null][] = [
      [at(-400), 'just now'], [at(-42_000), '42 s ago'], [at(-3 * 60_000 - 59_000), '3 min ago'], [at(-5 * 3_600_000), '5 h ago'],
      [at(-2 * 86_400_000 - 1), '2 d ago'], [at(30_000), 'in 30 s'], [at(10 * 60_000), 'in 10 min'], [at(3 * 86_400_000), 'in 3 d'],
      ['2026-09-01T08:00:00.000Z', '2026-09-01'], [null, null], ['not a time', 'not a time'],
    ]
    for (const [iso, want] of cases) assert.equal(relativeTime(iso, now), want, String(iso))
  })
})

describe('renderTable', () => {
  type R = { id: string; name: string; n: number; note: string }
  const rows: R[] = [{ id: 'a1', name: 'Nordic Trails Adventures', n: 7, note: 'x' }, { id: 'b22', name: 'Alp', n: 1234, note: 'line\nbreak' }]
  const columns: Column<R>[] = [
    { header: 'ID', value: (r) => r.id },
    { header: 'NAME', value: (r) => r.name, flex: true },
    { header: 'N', value: (r) => String(r.n), right: true },
    { header: 'NOTE', value: (r) => r.note, drop: 1 },
  ]
  test('aligned, numbers on the right, control characters flattened, empty → the given text', () => {
    assert.equal(renderTable(rows, columns, { colour: false }), [
      'ID   NAME                         N  NOTE',
      'a1   Nordic Trails Adventures     7  x',
      'b22  Alp                       1234  line break',
    ].join('\n'))
    assert.equal(renderTable([], columns, { colour: false }, 'nothing yet'), 'nothing yet')
  })
  test('a narrow width cuts the flex column with …, then leaves out the droppable one', () => {
    const cut = renderTable(rows, columns, { colour: false, width: 32 })
    assert.equal(cut.split('\n')[1], 'a1   Nordic T…     7  x')
    for (const line of cut.split('\n')) assert.ok(line.length <= 32, line)
    const dropped = renderTable(rows, columns, { colour: false, width: 22 })
    assert.equal(dropped, ['ID   NAME            N', 'a1   Nordic Tra…     7', 'b22  Alp          1234'].join('\n'))
  })
  test('colour only when asked, never in the text itself', () => {
    const painted = renderTable(rows, [{ header: 'ID', value: (r) => r.id, colour: () => 'green' }], { colour: true })
    assert.ok(painted.includes('\x1b[32ma1\x1b[39m'), JSON.stringify(painted))
  })
})

// A node:test reporter for `npm test`'s summary (scripts/test.ts): one JSON line per thing the
// summary shows — each failing test with its file and the names above it, each file's counts and
// the time its top-level tests took, each `left out: …` diagnostic a test gave, and the run's
// counts. scripts/test.ts gives it a file of its own per pass (--test-reporter-destination) and
// keeps `spec` on stdout.
import type { TestEvent } from 'node:test/reporters'

export type SummaryLine =
  | { kind: 'fail'; file: string; names: string[]; message: string }
  | { kind: 'file'; file: string; ms: number; tests: number; failed: number }
  | { kind: 'left-out'; file: string; message: string }
  | { kind: 'run'; tests: number; passed: number; failed: number; cancelled: number; skipped: number; todo: number }

/** The prefix of a diagnostic (`t.diagnostic('left out: …')`) that the summary lists under "left out". */
export const LEFT_OUT = 'left out: '

export default async function* summaryReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  /** Per file: the names of the tests started and not finished, by nesting. */
  const stacks = new Map<string, string[]>()
  const ms = new Map<string, number>()
  for await (const event of source) {
    switch (event.type) {
      case 'test:start': {
        const stack = stacks.get(event.data.file ?? '') ?? []
        stack.length = event.data.nesting
        stack.push(event.data.name)
        stacks.set(event.data.file ?? '', stack)
        break
      }
      case 'test:pass':
      case 'test:fail': {
        const file = event.data.file ?? ''
        if (event.data.nesting === 0) ms.set(file, (ms.get(file) ?? 0) + event.data.details.duration_ms)
        if (event.type === 'test:pass') break
        const error = event.data.details.error as Error & { failureType?: string; cause?: unknown }
        // A suite failing because a test in it failed, or a test cancelled because its suite failed, is named by that test or suite.
        if (error.failureType === 'subtestsFailed' || error.failureType === 'cancelledByParent') break
        const names = [...(stacks.get(file) ?? []).slice(0, event.data.nesting), event.data.name]
        const cause = error.cause instanceof Error ? error.cause.message : error.cause !== undefined ? String(error.cause) : error.message
        yield `${JSON.stringify({ kind: 'fail', file, names, message: _message(String(cause)) } satisfies SummaryLine)}\n`
        break
      }
      case 'test:diagnostic':
        if (event.data.message.startsWith(LEFT_OUT)) yield `${JSON.stringify({ kind: 'left-out', file: event.data.file ?? '', message: event.data.message.slice(LEFT_OUT.length) } satisfies SummaryLine)}\n`
        break
      case 'test:summary': {
        const c = event.data.counts as typeof event.data.counts & { failed: number } // @types/node lacks `failed`
        if (event.data.file) yield `${JSON.stringify({ kind: 'file', file: event.data.file, ms: ms.get(event.data.file) ?? 0, tests: c.tests, failed: c.failed + c.cancelled } satisfies SummaryLine)}\n`
        else yield `${JSON.stringify({ kind: 'run', tests: c.tests, passed: c.passed, failed: c.failed, cancelled: c.cancelled, skipped: c.skipped, todo: c.todo } satisfies SummaryLine)}\n`
        break
      }
    }
  }
}

/** A failure's message for the summary: its lines but blank ones, an assertion's diff included, at most 16 (a diff's tail is cut). */
function _message(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '')
  return lines.length <= 16 ? lines.join('\n') : [...lines.slice(0, 15), `… ${lines.length - 15} more lines`].join('\n')
}

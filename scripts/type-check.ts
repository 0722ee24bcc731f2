// The type check of `npm test`: tsc on each project, one after the other, in a process of its own,
// so that scripts/test.ts runs it beside the SQLite pass instead of before it. TypeScript 7's tsc
// is a native program (its bin/tsc starts it): ~11 s of CPU for both projects, where 5.9's took 50-70 s.
import { spawn, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const TSC = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin', 'tsc')

/** The projects `npm test` checks: the server, CLI, tests and scripts; the dashboard's Preact app. */
export const PROJECTS: string[][] = [['--noEmit'], ['-p', 'dashboard']]

export interface TypeCheck {
  /** Each failing project's command and its first lines of output; empty when every project passed. */
  failures: { command: string; lines: string[] }[]
  ms: number
}

/** Lines of a failing project's output kept for the summary. */
const KEPT_LINES = 16

/**
 * Runs tsc on each project in `cwd`, in order. `onChild` is given each tsc process (to end it on
 * an interrupt). Output is kept, not printed: the run's summary names what failed.
 */
export async function typeCheck(cwd: string, projects: string[][], onChild: (c: ChildProcess) => void = () => {}): Promise<TypeCheck> {
  const started = performance.now()
  const failures: TypeCheck['failures'] = []
  for (const args of projects) {
    let out = ''
    const code = await new Promise<number>((resolve) => {
      const c = spawn(process.execPath, [TSC, ...args, '--pretty', 'false'], { cwd, stdio: ['ignore', 'pipe', 'pipe'] })
      onChild(c)
      c.stdout!.on('data', (d: Buffer) => { out += d })
      c.stderr!.on('data', (d: Buffer) => { out += d })
      c.on('error', (err) => { out += `${err.message}\n`; resolve(1) })
      c.on('close', (exit, signal) => resolve(exit ?? (signal ? 1 : 0)))
    })
    if (code !== 0) {
      const lines = out.split('\n').filter((l) => l.trim() !== '')
      failures.push({
        command: `tsc ${args.join(' ')}`,
        lines: lines.length > KEPT_LINES ? [...lines.slice(0, KEPT_LINES), `… ${lines.length - KEPT_LINES} more lines`] : lines,
      })
    }
  }
  return { failures, ms: performance.now() - started }
}

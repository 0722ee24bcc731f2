import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

// The runnable blocks of README.md and of every page of docs/, as test/readme.test.ts runs them.
// Convention (README.md, "Development"): a ```sh block is run by the tests, word for word; a line `#> text`
// under a command is what it prints (`…` stands for any text, and a line that is only `#> …` for
// any number of lines); a block that must not run is ```text. Each ```sh block runs on its own in
// one bash; each page's blocks run top to bottom in a fresh directory of their own.

/** README.md, then every docs/**\/*.md, as paths under `root` (the pages whose sh blocks run). */
/** Pages whose blocks run at the checkout's root, by a test of their own (a fresh directory has no package.json). */
export const AT_ROOT: Record<string, string> = { 'docs/openapi.md': 'test/api/openapi-lint.test.ts' }

/** The pages whose ```sh blocks run in a fresh directory: every page but AT_ROOT's. */
export const shellPages = (root: string): string[] => docPages(root).filter((p) => !(p in AT_ROOT))

export function docPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(root, 'docs', f))
    .sort()
  return [join(root, 'README.md'), ...docs].map((f) => relative(root, f))
}

const _ROOT = fileURLToPath(new URL('../../', import.meta.url))

export interface Block {
  lang: string
  /** 1-based line of the opening fence. */
  line: number
  lines: string[]
}

export interface Step {
  /** The commands (with their comments), as written. */
  script: string
  /** The `#>` lines under them, without the marker. */
  expected: string[]
  /** 1-based line in the README of the step's first line. */
  line: number
}

export function readmeBlocks(file: string, lang: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n')
  const blocks: Block[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const start = i
    const body: string[] = []
    while (++i < lines.length && !/^```\s*$/.test(lines[i]!)) body.push(lines[i]!)
    if (open[1] === lang) blocks.push({ lang, line: start + 1, lines: body })
  }
  return blocks
}

/** A block cut after each run of `#>` lines: the commands before it, and what they print. */
export function steps(block: Block): Step[] {
  const out: Step[] = []
  let script: string[] = []
  let expected: string[] = []
  let first = block.line + 1
  const flush = (next: number) => {
    if (script.some((l) => l.trim() && !l.trim().startsWith('#')) || expected.length) out.push({ script: script.join('\n'), expected, line: first })
    script = []
    expected = []
    first = next
  }
  block.lines.forEach((l, i) => {
    const lineNo = block.line + 1 + i
    const m = /^#>(?: (.*))?$/.exec(l)
    if (m) expected.push(m[1] ?? '')
    else {
      if (expected.length) flush(lineNo)
      script.push(l)
    }
  })
  flush(0)
  return out
}

/**
 * Whether `output` is what the README says: line for line, `…` matching any text within a line,
 * a line `…` any number of lines, runs of spaces any run of spaces. Trailing blank lines ignored.
 */
export function matches(expected: string[], output: string): boolean {
  const got = output.replace(/\s+$/, '').split('\n').map((l) => l.trimEnd())
  const want = expected.map((l) => l.trimEnd())
  const line = (pattern: string) => new RegExp(`^${pattern.split('…').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ +/g, ' +')).join('.*')}$`)
  const walk = (w: number, g: number): boolean => {
    if (w === want.length) return g === got.length
    if (want[w] === '…') {
      for (let k = g; k <= got.length; k++) if (walk(w + 1, k)) return true
      return false
    }
    return g < got.length && line(want[w]!).test(got[g]!) && walk(w + 1, g + 1)
  }
  return walk(0, 0)
}

/** Commands of the pages' sh blocks not run by the tests, each with what runs it instead. Anything else in a sh block runs. */
const NOT_RUN_HERE: Record<string, string> = {
  'npm install': 'the suite runs in a checkout that is installed already (.ci/run starts with npm ci)',
  'npm test': 'this suite is npm test',
  'npm run package': 'npm run test:package builds the executable (.ci/run)',
  'npm run test:package': '.ci/run runs it after npm test',
  'npm run bench': 'minutes of load; the benchmark is run by hand',
  'npm run bench -- --quick': 'test/bench/quick.test.ts runs it (in the checkout, not in a fresh directory)',
}

/**
 * Runs every ```sh block of `readme` (README.md or a page of docs/) word for word, one after the other in a fresh directory
 * under `dir` (as a reader following the README would), each block in its own bash, with
 * `./travelops` and `npx travelops` being `travelops` (the checkout's launcher or the
 * executable); checks each step finished and printed what its `#>` lines say. The README's
 * ports 3000 and 8080 become `ports` (and PORT is the first, for a serve started without --port).
 */
export async function assertShellBlocksRun(readme: string, opts: { travelops: string; dir: string; ports: number[]; env?: Record<string, string>; minBlocks?: number }): Promise<void> {
  const blocks = readmeBlocks(readme, 'sh')
  assert.ok(blocks.length >= (opts.minBlocks ?? 0), `${readme} has its shell blocks`)
  if (!blocks.length) return
  const text = blocks.flatMap((b) => b.lines).join('\n')
  for (const tool of ['bash', 'curl', 'jq', 'openssl'].filter((t) => t === 'bash' || new RegExp(`\\b${t}\\b`).test(text))) {
    assert.equal(spawnSync('sh', ['-c', `command -v ${tool}`]).status, 0, `the commands of ${readme} need ${tool} (.ci/run installs it)`)
  }
  const { travelops, dir, ports } = opts
  const bin = join(dir, '.bin')
  mkdirSync(bin)
  writeFileSync(join(bin, 'npx'), `#!/bin/sh\nif [ "$1" = travelops ]; then shift; exec '${travelops}' "$@"; fi\necho "npx $*: only npx travelops is available here" >&2\nexit 127\n`)
  chmodSync(join(bin, 'npx'), 0o755)
  const work = join(dir, 'work')
  mkdirSync(work)
  symlinkSync(travelops, join(work, 'travelops'))
  const name = relative(_ROOT, readme)
  for (const block of blocks) {
    const { script, count } = _script(block, ports)
    const { code, output } = await _runBash(script, work, bin, ports[0]!, opts.env ?? {})
    const parts = _split(output)
    const stepList = steps(block)
    for (const [i, step] of stepList.entries()) {
      const part = parts.get(i)
      assert.ok(part?.ended, `${name} line ${step.line}: the step did not finish (exit ${code}); its output:\n${part?.text ?? output}`)
      const expected = step.expected.map((l) => _ports(l, ports))
      if (expected.length) {
        assert.ok(matches(expected, part.text), `${name} line ${step.line}: printed\n${part.text}\nbut the page says\n${expected.join('\n')}`)
      }
    }
    assert.equal(count, stepList.length)
    assert.equal(code, 0, `block at ${name} line ${block.line} exited ${code}:\n${output}`)
  }
}

/**
 * One bash script for a block: each step between markers, every line as written except the
 * commands of NOT_RUN_HERE (left out), a `serve` in the foreground (run until it prints its URL,
 * then stopped with Ctrl-C's signal, as a reader would), and a `serve &` awaited until it
 * printed its URL. README ports become the test's free ports.
 */
function _script(block: Block, ports: number[]): { script: string; count: number } {
  const list = steps(block)
  const body = list.map((step, i) => {
    const lines = _ports(step.script, ports).split('\n').map(_rewrite)
    const background = lines.some((l) => /travelops serve\b.*&\s*(#.*)?$/.test(l))
    return [`echo '@@step ${i}'`, ...lines, ...(background ? [`__await ${i} 'travelops listening on'`] : []), `printf '\\n@@end ${i}\\n'`].join('\n')
  })
  const prelude = [
    'set -euo pipefail',
    'exec 2>&1',
    '__await() { for _ in $(seq 400); do sed -n "/^@@step $1\\$/,\\$p" "$__OUT" | grep -qF -- "$2" && return 0; sleep 0.05; done; echo "waited 20 s for: $2"; return 1; }',
  ]
  return { script: [...prelude, ...body].join('\n') + '\n', count: list.length }
}

const _ports = (text: string, ports: number[]) => text.replace(/\b3000\b/g, String(ports[0])).replace(/\b8080\b/g, String(ports[1]))

function _rewrite(line: string): string {
  const code = line.replace(/\s+#\s.*$/, '')
  for (const [cmd] of Object.entries(NOT_RUN_HERE)) {
    if (code.trim() === cmd) return `: not run here: ${cmd}`
    if (code.trimStart().startsWith(`${cmd} && `)) return _rewrite(code.trimStart().slice(cmd.length + 4))
  }
  if (/travelops serve\b/.test(code) && !/&\s*$/.test(code) && !code.trim().startsWith('#')) {
    return `${code} & __fg=$!; __await "$__STEP" 'travelops listening on'; kill -INT $__fg; wait $__fg`
  }
  return line
}

/** Runs the script with its output (stdout and stderr together) in a file it can read itself; kills what it left running. */
async function _runBash(script: string, cwd: string, bin: string, port: number, extraEnv: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const out = join(cwd, '.output')
  writeFileSync(out, '')
  const steps = script.replace(/echo '@@step (\d+)'/g, "__STEP=$1; echo '@@step $1'")
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TRAVELOPS_') && k !== 'PORT' && k !== 'HOST'))
  const child = spawn('bash', ['-c', `exec >>"$__OUT"\n${steps}`], {
    cwd, detached: true, stdio: 'ignore',
    env: { ...env, HOME: cwd, NO_COLOR: '1', ...extraEnv, PORT: String(port), __OUT: out, PATH: `${bin}:${extraEnv.PATH ?? process.env.PATH}` },
  })
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 90_000)
    child.on('exit', (c) => {
      clearTimeout(timer)
      resolve(c)
    })
  })
  try {
    process.kill(-child.pid!, 'SIGTERM') // a server the block left running
  } catch {
    // nothing left
  }
  return { code, output: readFileSync(out, 'utf8') }
}

function _split(output: string): Map<number, { text: string; ended: boolean }> {
  const parts = new Map<number, { text: string; ended: boolean }>()
  let current: number | undefined
  for (const line of output.split('\n')) {
    const step = /^@@step (\d+)$/.exec(line)
    const end = /^@@end (\d+)$/.exec(line)
    if (step) parts.set((current = Number(step[1])), { text: '', ended: false })
    else if (end) parts.get(Number(end[1]))!.ended = true
    else if (current !== undefined) parts.get(current)!.text += `${line}\n`
  }
  return parts
}


import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

// Drives the real bash, zsh and fish with a completion script of `travelops completion <shell>`:
// each helper answers the completions the shell itself produces for a command line typed up to
// its end. `dir` is the working directory (file names complete there) and the shells' HOME and
// XDG directories, so nothing is read from or written to the user's own.

export interface ShellRun {
  status: number | null
  stdout: string
  stderr: string
}

/** Whether `shell` is on PATH. */
export function hasShell(shell: string): boolean {
  return spawnSync('sh', ['-c', 'command -v "$1"', 'sh', shell], { stdio: 'ignore' }).status === 0
}

/** Runs `shell args…` in `dir` with HOME and XDG_* inside `dir`. */
export function runShell(dir: string, shell: string, args: string[]): ShellRun {
  const env = { ...process.env, HOME: dir, XDG_CONFIG_HOME: join(dir, '.config'), XDG_DATA_HOME: join(dir, '.local/share'), XDG_CACHE_HOME: join(dir, '.cache'), ZDOTDIR: dir }
  // The timeout only keeps a broken script from hanging the suite; nothing is timed.
  const r = spawnSync(shell, args, { cwd: dir, env, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' })
  if (r.error) throw r.error
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/**
 * bash: COMPREPLY of the completion function for `line` (the cursor at its end), with COMP_WORDS
 * split as bash splits them (blanks, and `=` on its own, as in COMP_WORDBREAKS).
 */
export function bashComplete(dir: string, script: string, line: string): string[] {
  const words = line.split(' ').flatMap((w) => w.split(/(=)/).filter((p, i, all) => p !== '' || all.length === 1))
  const body = [
    'source "$1" || exit 7',
    'complete -p travelops >/dev/null || exit 8',
    'fn=$(complete -p travelops | sed -n "s/.*-F \\([^ ]*\\) .*/\\1/p")',
    'shift',
    'COMP_WORDS=("$@")',
    'COMP_CWORD=$((${#COMP_WORDS[@]} - 1))',
    'COMP_POINT=${#COMP_LINE}',
    '"$fn" travelops "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
    '((${#COMPREPLY[@]} == 0)) || printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n')
  const r = runShell(dir, 'bash', ['--norc', '--noprofile', '-c', `COMP_LINE=${_sq(line)}\n${body}`, 'bash', script, ...words])
  if (r.status !== 0 || r.stderr) throw new Error(`bash completion of '${line}' failed (${r.status}): ${r.stderr}`)
  return _lines(r.stdout)
}

/** fish: the candidates `complete -C` gives for `line` (descriptions dropped). */
export function fishComplete(dir: string, script: string, line: string): string[] {
  const r = runShell(dir, 'fish', ['--no-config', '-c', 'source $argv[1]; or exit 7; complete -C $argv[2]', script, line])
  if (r.status !== 0 || r.stderr) throw new Error(`fish completion of '${line}' failed (${r.status}): ${r.stderr}`)
  return _lines(r.stdout).map((l) => l.split('\t')[0]!)
}

/**
 * zsh: for each line, the matches the completion system added when Tab was pressed at its end, in
 * an interactive `zsh -f` on a pseudo-terminal (zsh/zpty) with compinit and the script sourced.
 */
export function zshComplete(dir: string, script: string, lines: string[]): string[][] {
  const r = runShell(dir, 'zsh', ['-f', DRIVER, script, join(dir, '.zcompdump-pty'), ...lines])
  if (r.status !== 0 || r.stderr) throw new Error(`zsh completion failed (${r.status}): ${r.stderr}\n${r.stdout}`)
  const answers = r.stdout.split('<end>\n')
  if (answers.length !== lines.length + 1) throw new Error(`zsh answered ${answers.length - 1} of ${lines.length} lines:\n${r.stdout}`)
  return answers.slice(0, -1).map((a) => _lines(a).map((l) => l.replace(/^<hit>/, '').replace(/<\/hit>$/, '')))
}

const DRIVER = fileURLToPath(new URL('../fixtures/zsh-complete.zsh', import.meta.url))

const _sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
const _lines = (s: string) => s.split('\n').filter((l) => l !== '')

import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import { Command, Option } from 'commander'
import { renderCompletion } from '../../cli/completion-scripts.ts'
import { describeProgram, flatten, SHELLS, type CommandSpec } from '../../cli/completion-model.ts'
import { createProgram } from '../../cli/program.ts'
import { LOG_LEVELS as SERVE_LOG_LEVELS } from '../../cli/serve.ts'
import { LOG_LEVELS } from '../../src/lib/logger.ts'
import { runCli } from '../helpers/cli.ts'
import { bashComplete, fishComplete, hasShell, runShell, zshComplete } from '../helpers/shells.ts'

const FILES = ['backup-a.db', 'backup-b.db', 'tls.key', 'tls.pem']

/** Command line (cursor at its end) → what every shell completes there. */
const CASES: [string, string[]][] = [
  ['travelops ', ['serve', 'migrate', 'tenants', 'keys', 'deliveries', 'listen', 'verify', 'backup', 'db', 'dashboard', 'completion']],
  ['travelops de', ['deliveries']],
  ['travelops deliveries ', ['list', 'show', 'retry', 'replay']],
  ['travelops tenants ', ['create', 'list']],
  ['travelops keys ', ['create', 'list', 'revoke']],
  ['travelops deliveries list --st', ['--status']],
  ['travelops deliveries list --status ', ['pending', 'delivered', 'failed']],
  ['travelops deliveries list --status f', ['failed']],
  ['travelops deliveries replay --status ', ['failed', 'delivered']],
  ['travelops serve --log-level ', ['debug', 'info', 'warn', 'error', 'silent']],
  ['travelops completion ', ['bash', 'zsh', 'fish']],
  ['travelops completion bash ', []],
  ['travelops keys create --tenant ', []],
  ['travelops tenants create --', ['--db', '--json', '--name', '--help']],
  ['travelops deliveries replay --webhook show --y', ['--yes']],
  ['travelops deliveries list --limit 5 --web', ['--webhook']],
  ['travelops serve --tls-cert tl', ['tls.key', 'tls.pem']],
  ['travelops serve --tls-key tls.k', ['tls.key']],
  ['travelops deliveries list --db backup-', ['backup-a.db', 'backup-b.db']],
  ['travelops verify --file back', ['backup-a.db', 'backup-b.db']],
  ['travelops backup back', ['backup-a.db', 'backup-b.db']],
]

const sorted = (list: string[]) => [...list].sort()

/**
 * Whether `shell` is installed to run its part of a test. bash always is; zsh and fish may not be
 * on a stock machine: then the script's text is what was checked, and the summary of npm test
 * says so (TRAVELOPS_REQUIRE_SHELLS=1, set by .ci/run, makes a missing shell a failure).
 */
function installed(t: TestContext, shell: 'zsh' | 'fish', what: string): boolean {
  if (hasShell(shell)) return true
  if (process.env.TRAVELOPS_REQUIRE_SHELLS === '1') assert.fail(`TRAVELOPS_REQUIRE_SHELLS=1 but ${shell} is not installed`)
  t.diagnostic(`left out: ${shell} is not installed, so ${what} was not run in ${shell} (install ${shell} to run it)`)
  return false
}

const _sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
const _fq = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
const _commands = () => flatten(describeProgram(createProgram()))
const _parent = (c: CommandSpec) => c.path.slice(0, -1).join(' ')

/** The zsh script's text holds the whole model: a case branch per command with its subcommands and options, and each option's choices. */
function checkZshText(script: string): void {
  assert.match(script, /^#compdef travelops\n/, 'compinit finds it by its first line')
  assert.match(script, /^_travelops\(\) \{$/m)
  assert.match(script, /^ {2}compdef _travelops 'travelops'$/m, 'sourced, it registers itself')
  for (const c of _commands()) {
    const key = c.path.join(' ')
    const at = script.indexOf(`\n    ${_sq(key)})\n`)
    assert.ok(at >= 0, `a branch for '${key}'`)
    const branch = script.slice(at, script.indexOf(' ;;', at))
    assert.ok(branch.includes(`_travelops_names=(${c.commands.map((s) => _sq(s.name)).join(' ')})`), `'${key}' subcommands`)
    assert.ok(branch.includes(`_travelops_opts=(${c.options.flatMap((o) => o.flags).map(_sq).join(' ')})`), `'${key}' options`)
    for (const o of c.options.filter((o) => o.choices.length)) {
      assert.ok(script.includes(`${_sq(`${key}|${o.flags.at(-1)}`)}) _travelops_words=(${o.choices.map(_sq).join(' ')})`), `'${key} ${o.flags.at(-1)}' choices`)
    }
  }
}

/** The fish script's text: every command path, a `complete` line per subcommand and per long option, each option's choices. */
function checkFishText(script: string): void {
  const all = _commands()
  assert.ok(script.includes(`set -g __travelops_commands ${all.filter((c) => c.path.length).map((c) => _fq(c.path.join(' '))).join(' ')}\n`), 'the command paths')
  assert.match(script, /^complete -c 'travelops' -f$/m, 'no file names where none is asked for')
  for (const c of all) {
    const key = c.path.join(' ')
    if (c.path.length) assert.ok(script.includes(`complete -c 'travelops' -n '__travelops_at \\'${_parent(c)}\\' 0' -f -a '\\'${c.name}\\'' -d `), `'${key}' offered`)
    for (const o of c.options) {
      const long = o.flags.find((f) => f.startsWith('--'))!.slice(2)
      const line = script.split('\n').find((l) => l.startsWith(`complete -c 'travelops' -n '__travelops_at \\'${key}\\'' `) && l.includes(` -l '${long}' `))
      assert.ok(line, `'${key} --${long}'`)
      if (o.choices.length) assert.ok(line.endsWith(` -a '${o.choices.map((v) => `\\'${v}\\'`).join(' ')}'`), `'${key} --${long}' choices`)
    }
  }
}

describe('travelops completion <shell>, run in the real shells', () => {
  let dir: string
  const scripts: Record<string, string> = {}
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'travelops-completion-'))
    for (const f of FILES) writeFileSync(join(dir, f), '')
    mkdirSync(join(dir, '.scripts'))
    for (const shell of SHELLS) {
      const r = await runCli(['completion', shell])
      assert.equal(r.code, 0, r.stderr)
      assert.equal(r.stderr, '')
      scripts[shell] = join(dir, '.scripts', shell === 'zsh' ? '_travelops' : `travelops.${shell}`)
      writeFileSync(scripts[shell], r.stdout)
    }
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  test('bash: the script registers a completion function that completes commands, options, values and files', () => {
    assert.match(runShell(dir, 'bash', ['--norc', '--noprofile', '-c', 'source "$1" && complete -p travelops', 'bash', scripts.bash!]).stdout, /^complete -F _travelops travelops$/m)
    for (const [line, want] of CASES) assert.deepEqual(sorted(bashComplete(dir, scripts.bash!, line)), sorted(want), line)
    // bash hands `--status=f` over as `--status`, `=`, `f`; the reply replaces only `f`.
    assert.deepEqual(bashComplete(dir, scripts.bash!, 'travelops deliveries list --status=f'), ['failed'])
    assert.deepEqual(sorted(bashComplete(dir, scripts.bash!, 'travelops deliveries list --status=')), ['delivered', 'failed', 'pending'])
  })

  test('fish: the script holds every command, option and choice; complete -C gives the same completions', (t) => {
    checkFishText(readFileSync(scripts.fish!, 'utf8'))
    if (!installed(t, 'fish', 'complete -C')) return
    for (const [line, want] of CASES) assert.deepEqual(sorted(fishComplete(dir, scripts.fish!, line)), sorted(want), line)
    assert.deepEqual(fishComplete(dir, scripts.fish!, 'travelops deliveries list --status=f'), ['--status=failed'])
    const described = runShell(dir, 'fish', ['--no-config', '-c', 'source $argv[1]; complete -C $argv[2]', scripts.fish!, 'travelops deliveries ']).stdout
    assert.match(described, /^replay\tqueue every delivered or failed delivery/m, 'subcommands come with their descriptions')
  })

  test('zsh: the script holds every command, option and choice, and loads without a word on stderr, both sourced and autoloaded from $fpath', (t) => {
    checkZshText(readFileSync(scripts.zsh!, 'utf8'))
    if (!installed(t, 'zsh', 'loading the script')) return
    const sourced = runShell(dir, 'zsh', ['-f', '-c', 'autoload -U compinit; compinit -u -d "$2"; source "$1"; whence -w _travelops; print -r -- "$_comps[travelops]"', 'zsh', scripts.zsh!, join(dir, '.zcompdump-sourced')])
    assert.equal(sourced.stderr, '')
    assert.equal(sourced.status, 0)
    assert.equal(sourced.stdout, '_travelops: function\n_travelops\n')
    const autoloaded = runShell(dir, 'zsh', ['-f', '-c', 'fpath=("$1" $fpath); autoload -U compinit; compinit -u -d "$2"; print -r -- "$_comps[travelops]"', 'zsh', join(dir, '.scripts'), join(dir, '.zcompdump-fpath')])
    assert.equal(autoloaded.stderr, '')
    assert.equal(autoloaded.stdout, '_travelops\n', 'compinit picks the #compdef line up')
  })

  test('zsh: Tab on a pseudo-terminal completes the same (zsh/zpty)', (t) => {
    if (!installed(t, 'zsh', 'Tab on a pseudo-terminal')) return
    const lines = [...CASES.map(([line]) => line), 'travelops deliveries list --status=f']
    const answers = zshComplete(dir, scripts.zsh!, lines)
    CASES.forEach(([line, want], i) => assert.deepEqual(sorted(answers[i]!), sorted(want), line))
    assert.deepEqual(answers.at(-1), ['failed'])
  })

  test('the completion command is in --help, explains how to install, and refuses an unknown shell with exit 2', async () => {
    assert.match((await runCli(['--help'])).stdout, /^ {2}completion <shell>\s+print a shell completion script/m)
    const help = await runCli(['completion', '--help'])
    for (const text of ['~/.local/share/bash-completion/completions/travelops', '~/.zfunc/_travelops', 'fpath=(~/.zfunc $fpath)', 'autoload -U compinit && compinit', '~/.config/fish/completions/travelops.fish']) assert.ok(help.stdout.includes(text), text)
    const r = await runCli(['completion', 'powershell'])
    assert.equal(r.code, 2)
    assert.match(r.stderr, /'powershell' is invalid for argument 'shell'\. Allowed choices are bash, zsh, fish\./)
    assert.equal(r.stdout, '')
    assert.equal((await runCli(['completion'])).code, 2)
  })

  test('the model is read from commander: every command, option and choice of the program', () => {
    const all = flatten(describeProgram(createProgram()))
    const paths = all.map((c) => c.path.join(' '))
    for (const p of ['', 'serve', 'tenants create', 'keys revoke', 'deliveries replay', 'backup', 'completion']) assert.ok(paths.includes(p), p)
    const serve = all.find((c) => c.path.join(' ') === 'serve')!
    assert.deepEqual(serve.options.find((o) => o.flags.includes('--log-level'))?.choices, [...LOG_LEVELS])
    assert.deepEqual(SERVE_LOG_LEVELS, [...LOG_LEVELS], 'serve --log-level offers exactly the logger\'s levels')
    const fileOptions = all.flatMap((c) => c.options.filter((o) => o.files).map((o) => o.flags.at(-1)!))
    assert.deepEqual(sorted([...new Set(fileOptions)]), ['--db', '--file', '--tls-cert', '--tls-key'], 'the options whose value is a file')
    assert.deepEqual(all.find((c) => c.path.join(' ') === 'backup')!.args, [{ choices: [], files: true }])
    assert.deepEqual(all.find((c) => c.path.join(' ') === 'deliveries retry')!.args, [{ choices: [], files: false }])
  })

  test('quoting: names, descriptions and choices with quotes, $, backslashes and brackets reach every shell verbatim and run nothing', (t) => {
    const odd = ["it's", '$(touch pwned)', 'a"b', 'back\\slash', '`touch pwned`', '[x]:y']
    const program = new Command('travelops').description('odd')
    program.command('odd').description("it's [odd]: $(touch pwned) `touch pwned` \\ \"q\"")
      .addOption(new Option('--mode <m>', "say 'hi' $HOME \\ [x]: `touch pwned`").choices(odd))
    const spec = describeProgram(program)
    const quirky = mkdtempSync(join(dir, 'quirky-'))
    for (const shell of SHELLS) writeFileSync(join(quirky, shell), renderCompletion(shell, spec))
    assert.deepEqual(sorted(bashComplete(quirky, join(quirky, 'bash'), 'travelops odd --mode ')), sorted(odd))
    assert.deepEqual(bashComplete(quirky, join(quirky, 'bash'), "travelops odd --mode it"), ["it's"])
    if (installed(t, 'fish', 'the quoting check')) {
      assert.deepEqual(sorted(fishComplete(quirky, join(quirky, 'fish'), 'travelops odd --mode ')), sorted(odd))
      assert.deepEqual(fishComplete(quirky, join(quirky, 'fish'), 'travelops o'), ['odd'])
    }
    if (installed(t, 'zsh', 'the quoting check')) {
      const [modes, commands] = zshComplete(quirky, join(quirky, 'zsh'), ['travelops odd --mode ', 'travelops o'])
      assert.deepEqual(sorted(modes!), sorted(odd))
      assert.deepEqual(commands, ['odd'])
    }
    assert.ok(!readdirSync(quirky).includes('pwned'), 'nothing in a string was run')
  })
})

import { commandKey, functionName, type CommandSpec, type ValueSpec } from './completion-model.ts'

// The fish script of `travelops completion fish`: one `complete` line per command, option and
// argument with values, each guarded by a condition (`__<name>_at PATH [N]`) that walks the words
// before the cursor as the bash and zsh scripts do (./completion-scripts.ts).

/** fish: a single-quoted word (\\ and \' are its only escapes). */
const _fq = (s: string) => `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`

export function renderFish(name: string, commands: CommandSpec[]): string {
  const fn = `_${functionName(name)}`
  const c = `complete -c ${_fq(name)}`
  const valuesOf = (v: ValueSpec) => (v.files ? '-F' : `-f -a ${_fq(v.choices.map(_fq).join(' '))}`)
  const lines = commands.flatMap((cmd) => {
    const at = (args?: string) => `-n ${_fq(`${fn}_at ${_fq(commandKey(cmd))}${args === undefined ? '' : ` ${args}`}`)}`
    return [
      ...cmd.commands.map((s) => `${c} ${at('0')} -f -a ${_fq(_fq(s.name))} -d ${_fq(s.description)}`),
      ...cmd.options.map((o) => {
        const flags = o.flags.map((f) => (f.startsWith('--') ? `-l ${_fq(f.slice(2))}` : f.length === 2 ? `-s ${_fq(f.slice(1))}` : `-o ${_fq(f.slice(1))}`))
        const value = o.value === 'none' ? '' : o.choices.length || o.files ? ` -r ${valuesOf(o)}` : ' -x'
        return `${c} ${at()} ${flags.join(' ')} -d ${_fq(o.description)}${value}`
      }),
      ...cmd.args.flatMap((a, i) => (a.choices.length || a.files ? [`${c} ${at(`${i}${cmd.variadic && i === cmd.args.length - 1 ? '+' : ''}`)} ${valuesOf(a)}`] : [])),
    ]
  })
  return `# fish completion for ${name}, printed by \`${name} completion fish\` (static: ${name} is not run at Tab time).
# Install: ${name} completion fish > ~/.config/fish/completions/${name}.fish

# Command paths (words after the program name) and the options that take the next word.
set -g ${fn}_commands ${commands.filter((x) => x.path.length).map((x) => _fq(commandKey(x))).join(' ')}
set -g ${fn}_valued ${commands.flatMap((x) => x.options.filter((o) => o.value === 'required').flatMap((o) => o.flags.map((f) => _fq(`${commandKey(x)}|${f}`)))).join(' ')}

# Prints the number of positional arguments, then the command path, of the words before the cursor.
function ${fn}_state
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l path
    set -l args 0
    set -l skip 0
    set -l dashdash 0
    for word in $tokens
        set -l key (string join ' ' -- $path)
        if test $skip = 1
            set skip 0
        else if test $dashdash = 1; or not string match -qr -- '^-.' $word
            if test $dashdash = 0 -a $args = 0; and contains -- (string join ' ' -- $path $word) $${fn}_commands
                set -a path $word
            else
                set args (math $args + 1)
            end
        else if test $word = --
            set dashdash 1
        else if contains -- "$key|$word" $${fn}_valued
            set skip 1
        end
    end
    echo $args
    string join ' ' -- $path
end

# ${fn}_at PATH [N | N+]: the cursor is in command PATH (after N, or at least N, positional arguments).
function ${fn}_at
    set -l state (${fn}_state)
    test "$state[2]" = "$argv[1]"; or return 1
    set -q argv[2]; or return 0
    if string match -q -- '*+' $argv[2]
        test $state[1] -ge (string trim -r -c + -- $argv[2])
    else
        test $state[1] -eq $argv[2]
    end
end

complete -c ${_fq(name)} -f
${lines.join('\n')}
`
}

import { commandKey, flatten, functionName, type CommandSpec, type Shell, type ValueSpec } from './completion-model.ts'
import { renderFish } from './completion-fish.ts'

// The three renderers of `travelops completion <shell>`. Each script carries the command tree as
// data (case arms in bash and zsh, `complete` lines in fish) and walks the words typed so far the
// same way: a word naming a subcommand descends into it, an option that takes a value skips the
// next word (`--opt=value` is one word), `--` ends the options; then it completes the value of the
// option before the cursor, an option (after `-`), a subcommand, or the positional argument there.
// Every string from the program is single-quoted for its shell. The fish script is in ./completion-fish.ts.

export function renderCompletion(shell: Shell, program: CommandSpec): string {
  const commands = flatten(program)
  return shell === 'bash' ? _bash(program.name, commands) : shell === 'zsh' ? _zsh(program.name, commands) : renderFish(program.name, commands)
}

/** bash and zsh (no RC_QUOTES): a single-quoted word. */
const _sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
const _words = (list: string[]) => list.map(_sq).join(' ')
const _key = commandKey

/** Value lists keyed `<path>|<option>` and `<path>|#<n>` (n-th positional, from 0). */
function _values(commands: CommandSpec[]): [string, ValueSpec][] {
  return commands.flatMap((c) => [
    ...c.options.filter((o) => o.value !== 'none' && (o.choices.length || o.files)).flatMap((o) => o.flags.map((f): [string, ValueSpec] => [`${_key(c)}|${f}`, o])),
    ...c.args.flatMap((a, i): [string, ValueSpec][] => (a.choices.length || a.files ? [[`${_key(c)}|#${i}`, a]] : [])),
  ])
}

/** The data functions shared by bash and zsh (`zsh` adds descriptions for _describe). */
function _data(fn: string, commands: CommandSpec[], zsh: boolean): string {
  const desc = (name: string, d: string) => _sq(`${name.replace(/[\\:]/g, '\\$&')}:${d}`)
  const spec = commands.map((c) => {
    const opts = c.options.flatMap((o) => o.flags)
    const lines = [
      `${fn}_names=(${_words(c.commands.map((s) => s.name))})`,
      `${fn}_opts=(${_words(opts)})`,
      `${fn}_valued=(${_words(c.options.filter((o) => o.value === 'required').flatMap((o) => o.flags))})`,
      `${fn}_nargs=${c.args.length} ${fn}_variadic=${c.variadic ? 1 : 0}`,
    ]
    if (zsh) {
      lines.push(`${fn}_cmds=(${c.commands.map((s) => desc(s.name, s.description)).join(' ')})`)
      lines.push(`${fn}_optdescs=(${c.options.flatMap((o) => o.flags.map((f) => desc(f, o.description))).join(' ')})`)
    }
    return `    ${_sq(_key(c))})\n      ${lines.join('\n      ')} ;;`
  })
  const values = _values(commands).map(([k, v]) => `    ${_sq(k)}) ${fn}_words=(${_words(v.choices)}) ${fn}_files=${v.files ? 1 : 0} ;;`)
  return `# ${fn}_spec PATH: what the command PATH (its words after the program name, joined by spaces) accepts.
${fn}_spec() {
  case $1 in
${spec.join('\n')}
    *) return 1 ;;
  esac
}

# ${fn}_values PATH WHAT: the values of option WHAT, or of positional argument #N, of command PATH.
${fn}_values() {
  ${fn}_words=() ${fn}_files=0
  case "$1|$2" in
${values.join('\n')}
    *) return 1 ;;
  esac
}

# ${fn}_in WORD LIST...: whether WORD is one of LIST.
${fn}_in() {
  local w=$1 x
  shift
  for x in "$@"; do [[ $x == "$w" ]] && return 0; done
  return 1
}

# ${fn}_walk: the command path, positional count and state of the words before the cursor.
${fn}_walk() {
  local word i end=$1 first=$2
  cmdpath='' pos=0 dashdash=0
  ${fn}_spec ''
  for ((i = first; i < end; i++)); do
    word=\${words[i]}
    if ((dashdash)) || [[ $word != -?* ]]; then
      if ((!dashdash && pos == 0)) && ${fn}_in "$word" "\${${fn}_names[@]}"; then
        cmdpath=\${cmdpath:+$cmdpath }$word
        ${fn}_spec "$cmdpath"
      else
        ((pos++))
      fi
    elif [[ $word == -- ]]; then
      dashdash=1
    elif [[ $word != *=* ]] && ${fn}_in "$word" "\${${fn}_valued[@]}"; then
      ((i++))
      [[ \${words[i]} == = ]] && ((i++))  # bash splits --opt=value into --opt = value
    fi
  done
  return 0
}
`
}

function _locals(fn: string): string {
  return `local cmdpath pos dashdash ${fn}_nargs ${fn}_variadic ${fn}_files
  local -a ${fn}_names ${fn}_opts ${fn}_valued ${fn}_words ${fn}_cmds ${fn}_optdescs`
}

function _bash(name: string, commands: CommandSpec[]): string {
  const fn = functionName(name)
  return `# bash completion for ${name}, printed by \`${name} completion bash\` (static: ${name} is not run at Tab time).
# Install: ${name} completion bash > ~/.local/share/bash-completion/completions/${name}

${_data(fn, commands, false)}
${fn}_reply() {
  local cur=$1 w
  shift
  for w in "$@"; do [[ $w == "$cur"* ]] && COMPREPLY+=("$w"); done
  return 0
}

${fn}_complete_values() {
  if ((${fn}_files)); then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$1")
  else
    ${fn}_reply "$1" "\${${fn}_words[@]}"
  fi
}

${fn}() {
  ${_locals(fn)}
  local -a words=("\${COMP_WORDS[@]}")
  local cur=\${COMP_WORDS[COMP_CWORD]} prev='' opt='' n
  ((COMP_CWORD > 0)) && prev=\${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  ${fn}_walk "$COMP_CWORD" 1
  if ((!dashdash)); then
    if [[ $cur == = && $prev == -?* ]]; then opt=$prev cur=''
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)) && [[ \${COMP_WORDS[COMP_CWORD-2]} == -?* ]]; then opt=\${COMP_WORDS[COMP_CWORD-2]}
    elif [[ $cur == -?*=* ]]; then opt=\${cur%%=*} cur=\${cur#*=}
    elif ${fn}_in "$prev" "\${${fn}_valued[@]}"; then opt=$prev
    fi
  fi
  if [[ -n $opt ]]; then
    ${fn}_values "$cmdpath" "$opt" && ${fn}_complete_values "$cur"
    return 0
  fi
  if ((!dashdash)) && [[ $cur == -* ]]; then
    ${fn}_reply "$cur" "\${${fn}_opts[@]}"
  elif ((pos == 0 && \${#${fn}_names[@]})); then
    ${fn}_reply "$cur" "\${${fn}_names[@]}"
  else
    n=$pos
    ((${fn}_variadic && n >= ${fn}_nargs)) && n=$((${fn}_nargs - 1))
    ${fn}_values "$cmdpath" "#$n" && ${fn}_complete_values "$cur"
  fi
  return 0
}

complete -F ${fn} ${_sq(name)}
`
}

function _zsh(name: string, commands: CommandSpec[]): string {
  const fn = functionName(name)
  return `#compdef ${name}
# zsh completion for ${name}, printed by \`${name} completion zsh\` (static: ${name} is not run at Tab time).
# Install: ${name} completion zsh > "\${fpath[1]}/_${name}"   (with autoload -U compinit && compinit in ~/.zshrc)

${_data(fn, commands, true)}
${fn}_complete_values() {
  if ((${fn}_files)); then
    _files
  else
    compadd -a -- ${fn}_words
  fi
}

${fn}() {
  # (no emulate -L zsh: _describe needs the options _main_complete set, extendedglob among them)
  ${_locals(fn)}
  local cur=\${words[CURRENT]} prev=\${words[CURRENT-1]} opt='' n
  ${fn}_walk "$CURRENT" 2
  if ((!dashdash)); then
    if [[ $cur == -?*=* ]]; then
      opt=\${cur%%=*}
      compset -P '*='
    elif ${fn}_in "$prev" "\${${fn}_valued[@]}"; then
      opt=$prev
    fi
  fi
  if [[ -n $opt ]]; then
    ${fn}_values "$cmdpath" "$opt" && ${fn}_complete_values
    return 0
  fi
  if ((!dashdash)) && [[ $cur == -* ]]; then
    _describe -t options option ${fn}_optdescs
  elif ((pos == 0 && \${#${fn}_names[@]})); then
    _describe -t commands command ${fn}_cmds
  else
    n=$pos
    ((${fn}_variadic && n >= ${fn}_nargs)) && n=$((${fn}_nargs - 1))
    ${fn}_values "$cmdpath" "#$n" && ${fn}_complete_values
  fi
  return 0
}

# Autoloaded from $fpath, this file is the body of ${fn}: run it; sourced, register it.
if [[ \${funcstack[1]-} == ${fn} ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${_sq(name)}
fi
`
}

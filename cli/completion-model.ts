import { Help, type Command, type Option } from 'commander'

// The completion model: commander's tree of commands, options, choices and file values, as the
// renderers of ./completion-scripts.ts and ./completion-fish.ts read it.

export const SHELLS = ['bash', 'zsh', 'fish'] as const
export type Shell = (typeof SHELLS)[number]

/** What may follow an option, or fill a positional argument. */
export interface ValueSpec {
  /** the fixed set of values (commander's `.choices()`), else empty */
  choices: string[]
  /** the value names a file or directory (its placeholder ends in file, path or dir) */
  files: boolean
}

export interface OptionSpec extends ValueSpec {
  /** e.g. ['-y', '--yes'] */
  flags: string[]
  description: string
  /** 'required': `--x <v>` takes the next word; 'optional': `--x [v]` only as `--x=v`; 'none': a switch */
  value: 'none' | 'required' | 'optional'
}

export interface CommandSpec {
  /** words after the program name, e.g. ['deliveries', 'list']; [] for the program itself */
  path: string[]
  name: string
  description: string
  commands: CommandSpec[]
  options: OptionSpec[]
  /** positional arguments in order */
  args: ValueSpec[]
  /** the last positional argument repeats (`<del_id...>`) */
  variadic: boolean
}

/** The completion model of `program` and every (sub)command below it, read from commander. */
export function describeProgram(program: Command): CommandSpec {
  return _describe(program, [], new Help())
}

/** Every command of the tree, the program first, parents before their subcommands. */
export function flatten(spec: CommandSpec): CommandSpec[] {
  return [spec, ...spec.commands.flatMap(flatten)]
}

function _describe(cmd: Command, path: string[], help: Help): CommandSpec {
  // commander's implicit `help [command]` is left out: every command has --help.
  const commands = help.visibleCommands(cmd).filter((sub) => cmd.commands.includes(sub)).map((sub) => _describe(sub, [...path, sub.name()], help))
  return {
    path,
    name: cmd.name(),
    description: cmd.description(),
    commands,
    options: help.visibleOptions(cmd).map(_option),
    args: cmd.registeredArguments.map((a) => ({ choices: [...(a.argChoices ?? [])], files: _isFileName(a.name()) })),
    variadic: cmd.registeredArguments.at(-1)?.variadic ?? false,
  }
}

function _option(opt: Option): OptionSpec {
  const placeholder = /[<[]([^>\]]*)[>\]]/.exec(opt.flags)?.[1] ?? ''
  return {
    flags: [opt.short, opt.long].filter((f): f is string => typeof f === 'string'),
    description: opt.description,
    value: opt.required ? 'required' : opt.optional ? 'optional' : 'none',
    choices: [...(opt.argChoices ?? [])],
    files: (opt.required || opt.optional) && _isFileName(placeholder),
  }
}

/** A command's words after the program name, joined by spaces ('' for the program). */
export const commandKey = (c: CommandSpec) => c.path.join(' ')

/** The prefix of the scripts' function names: `_` and the program name, anything but [A-Za-z0-9_] made `_`. */
export const functionName = (name: string) => `_${name.replace(/\W/g, '_')}`

/** `path`, `file`, `dest-file`, `body-file`, `dir`: a value the shell should complete as a file name. */
const _isFileName = (name: string) => /(^|[-_])(file|path|dir)$/i.test(name.replace(/\.\.\.$/, ''))

import { Argument, Command } from 'commander'
import { describeProgram, SHELLS, type Shell } from './completion-model.ts'

// `travelops completion <shell>` prints a static completion script: everything it completes
// (commands, options, option values, file arguments) is read from commander's own definitions
// (./completion-model.ts), so a new command or option is completed without touching this file.
// The scripts never run travelops at Tab time; the renderers live in ./completion-scripts.ts,
// loaded lazily.

export function completionCommand(): Command {
  return new Command('completion')
    .description('print a shell completion script (bash, zsh or fish) on stdout')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(SHELLS))
    .addHelpText('after', [
      '',
      'Examples (install once for your user, then open a new shell):',
      '  $ travelops completion bash > ~/.local/share/bash-completion/completions/travelops',
      '  $ travelops completion zsh > ~/.zfunc/_travelops',
      '  $ travelops completion fish > ~/.config/fish/completions/travelops.fish',
      '',
      'bash needs the bash-completion package (or add  source <(travelops completion bash)  to ~/.bashrc);',
      'zsh needs  fpath=(~/.zfunc $fpath); autoload -U compinit && compinit  in ~/.zshrc.',
      'Create the directories first (mkdir -p) if they do not exist.',
    ].join('\n'))
    .action(async (shell: Shell, _opts: unknown, cmd: Command) => {
      const { renderCompletion } = await import('./completion-scripts.ts')
      process.stdout.write(renderCompletion(shell, describeProgram(_root(cmd))))
    })
}

function _root(cmd: Command): Command {
  let c = cmd
  while (c.parent) c = c.parent
  return c
}

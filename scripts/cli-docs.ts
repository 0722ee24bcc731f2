import { readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Command } from 'commander'
import { createProgram } from '../cli/program.ts'

// docs/cli.md is generated from commander's tree (cli/program.ts): every command's description
// and its --help text, as `travelops <command> --help` prints it at 100 columns without colour.
// `npx tsx scripts/cli-docs.ts` rewrites it; test/unit/cli-docs.test.ts fails when it is stale.

export const CLI_DOCS = fileURLToPath(new URL('../docs/cli.md', import.meta.url))
export const CLI_DOCS_COMMAND = 'npx tsx scripts/cli-docs.ts'

/** docs/cli.md as the current CLI defines it. */
export function renderCliDocs(): string {
  const program = createProgram()
  const all = _walk(program, [])
  const out = [
    '# CLI reference',
    '',
    `<!-- Generated from the CLI's own definitions by \`${CLI_DOCS_COMMAND}\`; do not edit by hand. -->`,
    '',
    'Every command but `serve` and `completion` takes `--json` and then prints exactly one JSON document on',
    'stdout; errors go to stderr. Exit codes: `0` done, `1` the operation failed, `2` usage error, `141` when',
    'the reader of stdout went away first. Flags win over environment variables, which win over defaults.',
    'The [operator guide](operator.md) says how the commands fit together.',
    '',
    '| command | does |',
    '|---|---|',
    ...all.filter(({ cmd }) => !cmd.commands.length).map(({ cmd, path }) => `| [\`${path.join(' ')}\`](#${_anchor(path)}) | ${cmd.description().replace(/\|/g, '\\|')} |`),
    '',
  ]
  for (const { cmd, path } of all) {
    out.push(`## ${path.join(' ')}`, '', '```text', _help(cmd).trimEnd(), '```', '')
  }
  return out.join('\n')
}

function _walk(cmd: Command, parent: string[]): { cmd: Command; path: string[] }[] {
  const path = [...parent, cmd.name()]
  return [{ cmd, path }, ...cmd.commands.flatMap((c) => _walk(c, path))]
}

function _help(cmd: Command): string {
  let text = ''
  cmd.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s), getOutHasColors: () => false, getErrHasColors: () => false })
  cmd.configureHelp({ helpWidth: 100 })
  cmd.outputHelp()
  return text.split('\n').map((l) => l.trimEnd()).join('\n')
}

const _anchor = (path: string[]) => path.join('-').toLowerCase()

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const text = renderCliDocs()
  if (process.argv.includes('--check')) {
    const stale = readFileSync(CLI_DOCS, 'utf8') !== text
    if (stale) console.error(`docs/cli.md is stale: run ${CLI_DOCS_COMMAND}`)
    process.exitCode = stale ? 1 : 0
  } else writeFileSync(CLI_DOCS, text)
}

import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { CLI_DOCS, CLI_DOCS_COMMAND, renderCliDocs } from '../../scripts/cli-docs.ts'

// docs/cli.md is generated from commander's tree; a new command or option makes it stale.

test('docs/cli.md is what the CLI defines', () => {
  const want = renderCliDocs()
  assert.match(want, /## travelops deliveries replay\n/)
  assert.match(want, /--dry-run/)
  assert.ok(readFileSync(CLI_DOCS, 'utf8') === want, `docs/cli.md is stale: run ${CLI_DOCS_COMMAND}`)
})

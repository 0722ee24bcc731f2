import { Command, Option } from 'commander'
import { CliError, jsonOption, print, quietExit } from './util.ts'

export function verifyCommand(): Command {
  return new Command('verify')
    .description('check a webhook signature (X-Webhook-Signature) against the exact body bytes; prints valid (exit 0) or invalid (exit 1)')
    .addOption(new Option('--secret <secret>', 'the subscription\'s signing secret').env('TRAVELOPS_WEBHOOK_SECRET').makeOptionMandatory())
    .requiredOption('--signature <sig>', 'the signature: lower-case hex, or sha256=<hex>')
    .option('--file <body-file>', 'file holding the exact body received (default: read it from stdin)')
    .addOption(jsonOption())
    .addHelpText('after', [
      '',
      'Examples:',
      '  $ travelops verify --secret "$WEBHOOK_SECRET" --signature sha256=5d41… --file body.json',
      '  $ TRAVELOPS_WEBHOOK_SECRET=… travelops verify --signature 5d41… < body.json',
    ].join('\n'))
    .action(async (opts) => {
      const { verifySignature } = await import('../src/delivery/sign.ts')
      const body = opts.file !== undefined ? await _readFile(opts.file) : await _readStdin()
      const valid = verifySignature(String(opts.secret), body, String(opts.signature))
      print(opts, { valid }, () => (valid ? 'valid' : 'invalid'))
      if (!valid) throw quietExit(1)
    })
}

async function _readFile(file: string): Promise<Buffer> {
  const { readFile } = await import('node:fs/promises')
  try {
    return await readFile(file)
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`)
  }
}

/** The body as raw bytes, nothing trimmed. A terminal is not a body: that is a usage error. */
async function _readStdin(): Promise<Buffer> {
  if (process.stdin.isTTY) throw new CliError('give the body with --file <body-file> or on stdin', 2)
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

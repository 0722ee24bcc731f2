import { Command, Option } from 'commander'
import { CliError, jsonOption, print, quietExit } from './util.ts'

export function verifyCommand(): Command {
  return new Command('verify')
    .description('check a webhook signature (X-Webhook-Signature, or webhook-signature with --id and --timestamp) against the exact body bytes; prints valid (exit 0) or invalid (exit 1)')
    .addOption(new Option('--secret <secret>', 'the subscription\'s signing secret').env('TRAVELOPS_WEBHOOK_SECRET').makeOptionMandatory())
    .requiredOption('--signature <sig>', 'X-Webhook-Signature (hex, or sha256=<hex>), or webhook-signature (v1,<base64>; with --id and --timestamp)')
    .option('--id <webhook-id>', 'the webhook-id header (the event id), for a v1,… signature')
    .option('--timestamp <seconds>', 'the webhook-timestamp header (Unix seconds), for a v1,… signature')
    .option('--file <body-file>', 'file holding the exact body received (default: read it from stdin)')
    .addOption(jsonOption())
    .addHelpText('after', [
      '',
      'Examples:',
      '  $ travelops verify --secret "$WEBHOOK_SECRET" --signature sha256=5d41… --file body.json',
      '  $ TRAVELOPS_WEBHOOK_SECRET=… travelops verify --signature 5d41… < body.json',
      '  $ travelops verify --secret "$WEBHOOK_SECRET" --signature "v1,K5oZ…" --id evt_… --timestamp 1767225600 --file body.json',
      '',
      'A whsec_ secret (whsec_ + base64 of 24-64 bytes) keys webhook-signature with its decoded bytes, as the',
      'Standard Webhooks libraries do; X-Webhook-Signature is always keyed with the whole string.',
    ].join('\n'))
    .action(async (opts) => {
      const standard = /^\s*v1,/.test(String(opts.signature))
      if (standard && (opts.id === undefined || opts.timestamp === undefined)) throw new CliError('a v1,… signature (webhook-signature) needs --id and --timestamp', 2)
      if (standard && !/^\d{1,12}$/.test(String(opts.timestamp))) throw new CliError('--timestamp must be Unix seconds, as in the webhook-timestamp header', 2)
      if (!standard && (opts.id !== undefined || opts.timestamp !== undefined)) throw new CliError('--id and --timestamp go with a v1,… signature (webhook-signature)', 2)
      const { verifySignature, verifyStandardSignature } = await import('../src/delivery/sign.ts')
      const body = opts.file !== undefined ? await _readFile(opts.file) : await _readStdin()
      const valid = standard
        ? verifyStandardSignature(String(opts.secret), String(opts.id), Number(opts.timestamp), body, String(opts.signature))
        : verifySignature(String(opts.secret), body, String(opts.signature))
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

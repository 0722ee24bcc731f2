import { createInterface } from 'node:readline/promises'

/**
 * Asks a yes/no question on stderr (stdout stays for the command's answer, e.g. `--json`) and
 * reads one line from stdin. Only "y" or "yes" (any case) is a yes; an empty line, anything
 * else or end of input is a no. Callers ask only when stdin and stderr are terminals.
 */
export async function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr })
  try {
    const answer = await Promise.race([
      rl.question(`${question} [y/N] `),
      new Promise<string>((resolve) => rl.once('close', () => resolve(''))),
    ])
    return /^\s*y(es)?\s*$/i.test(answer)
  } finally {
    rl.close()
  }
}

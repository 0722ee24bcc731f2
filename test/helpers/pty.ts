import { spawn } from 'node:child_process'
import { cliCommand } from './cli.ts'

export interface PtyResult {
  code: number | null
  /** stdout and stderr together, as the terminal showed them (with the echoed answer), cursor escapes and CRs removed. */
  output: string
  /** The same with every escape sequence kept (colours), CRs removed. */
  raw: string
}

/**
 * Runs the real CLI on a pseudo-terminal (util-linux `script`), so stdin, stdout and stderr
 * are all TTYs. When the output shows `waitFor`, `answer` is typed (followed by Enter).
 * `cols` sets the terminal's width. Stops the process after `timeoutMs` and rejects, rather than hanging the suite.
 */
export async function runInPty(args: string[], opts: { waitFor?: string; answer?: string; env?: Record<string, string>; timeoutMs?: number; cols?: number } = {}): Promise<PtyResult> {
  const cli = await cliCommand(args, opts.env)
  const command = (opts.cols ? `stty cols ${opts.cols} rows 50; exec ` : '') + cli.argv.map(_quote).join(' ')
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: cli.env, stdio: ['pipe', 'pipe', 'pipe'] })
    let output = ''
    let answered = false
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`travelops ${args.join(' ')} on a pty did not finish; output so far: ${output}`))
    }, opts.timeoutMs ?? 20_000)
    const onData = (d: Buffer) => {
      output += d
      if (!answered && opts.waitFor !== undefined && output.includes(opts.waitFor)) {
        answered = true
        child.stdin.write(`${opts.answer ?? ''}\r`)
      }
    }
    child.stdout.on('data', onData)
    child.stderr.on('data', onData)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, output: _plain(output), raw: output.replaceAll('\r', '') })
    })
  })
}

const _quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

// eslint-disable-next-line no-control-regex
const _plain = (s: string) => s.replace(/\x1B\[[0-9;?]*[A-Za-z]/g, '').replaceAll('\r', '')

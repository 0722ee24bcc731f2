import { run } from './program.ts'

const serving = process.argv.includes('serve')

// A reader that stops early (`travelops tenants list | head`) closes the pipe under stdout: end
// as a program stopped by SIGPIPE would, quietly with status 141, not with a stack trace. `serve`
// writes one line there and keeps serving whoever reads its stdout.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err
  if (!serving) process.exit(141)
})

// `serve` keeps the process alive and exits from its signal handlers; everything else ends here.
run(process.argv).then((code) => {
  if (code !== 0 || !serving) process.exitCode = code
})

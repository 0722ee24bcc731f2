import { run } from './program.ts'

// `serve` keeps the process alive and exits from its signal handlers; everything else ends here.
run(process.argv).then((code) => {
  if (code !== 0 || !process.argv.includes('serve')) process.exitCode = code
})

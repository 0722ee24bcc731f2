#!/usr/bin/env node
'use strict'
// Entry of `npx travelops` in a checkout. Kept as plain CommonJS so an old Node can read it
// far enough to say what is wrong instead of crashing on syntax it does not know.
const major = Number(process.versions.node.split('.')[0])
if (major < 22) {
  process.stderr.write(
    `travelops needs Node.js 22 or newer; this is ${process.version}.\n` +
      'In a checkout, run it as `npx travelops` after `npm install` (that uses the Node 24 from\n' +
      'node_modules), or use the packaged executable dist/travelops, which needs no Node at all.\n',
  )
  process.exit(1)
}
const failed = (err) => {
  process.stderr.write(`error: ${err && err.stack ? err.stack : err}\n`)
  process.exit(1)
}
if (process.features.typescript) {
  // Node strips the types itself (24, and 22 from 22.18), with its compile cache: 0.3 s of CPU
  // for a command where tsx's loader took 0.6 s.
  require('node:module').enableCompileCache?.()
  import(require('node:url').pathToFileURL(require('node:path').join(__dirname, 'index.ts')).href).catch(failed)
} else {
  require('tsx/esm/api').tsImport('./index.ts', __filename).catch(failed)
}

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
require('tsx/esm/api')
  .tsImport('./index.ts', __filename)
  .catch((err) => {
    process.stderr.write(`error: ${err && err.stack ? err.stack : err}\n`)
    process.exit(1)
  })

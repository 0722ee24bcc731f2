import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import type { AppDeps } from '../src/context.ts'
import { servedDocument } from '../src/http/openapi-route.ts'
import { allRoutes, WEBHOOK_EVENTS } from '../src/routes.ts'

/**
 * `npm run openapi [file]`: writes the document GET /v1/openapi.json serves (default
 * `openapi.json` at the root, which redocly.yaml and .spectral.yaml lint; not committed) —
 * built from the routes alone, no database or server needed.
 */
const file = resolve(process.argv[2] ?? 'openapi.json')
writeFileSync(file, `${JSON.stringify(servedDocument(allRoutes({} as AppDeps), WEBHOOK_EVENTS), null, 2)}\n`)
console.log(`wrote ${file}`)

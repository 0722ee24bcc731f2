// The baseline of every HTTP figure: a bare h3 v2 route returning a small JSON object, on
// node:http through h3's own Node adapter, exactly as `serve` mounts the real app.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { H3 } from 'h3'
import { toNodeHandler } from 'h3/node'
import { send } from './child.ts'

const app = new H3().get('/v1/ping', () => ({ data: { id: 'ord_0198', status: 'ok', total: 299 } }))
const server = createServer({ keepAliveTimeout: 5_000 }, toNodeHandler(app))
server.listen(0, '127.0.0.1', () => {
  send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
})

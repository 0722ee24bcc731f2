import assert from 'node:assert/strict'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import type { LookupAddress } from 'node:dns'
import { describe, it } from 'node:test'
import type { buildConnector } from 'undici'
import { guardConnector, guardLookup, TARGET_REFUSED } from '../../src/delivery/guard-connect.ts'
import type { ResolveAll } from '../../src/delivery/guard-connect.ts'
import { startReceiver } from '../helpers/receiver.ts'

type Outcome = { err: Error | null; socket: Socket | null }
const connectWith = (connector: buildConnector.connector, hostname: string) =>
  new Promise<Outcome>((resolve) => {
    connector({ hostname, host: hostname, protocol: 'http:', port: '80' }, (err, socket) => resolve({ err, socket }))
  })
const fakeSocket = (remoteAddress: string | undefined) => {
  const socket = { remoteAddress, destroyed: false, destroy: () => ((socket.destroyed = true), socket) }
  return socket
}

describe('guardConnector', () => {
  it('checks the address actually connected to: a socket that reached loopback is destroyed and refused', async () => {
    const rx = await startReceiver()
    try {
      const port = Number(new URL(rx.url).port)
      let socket: Socket | undefined
      // a connector that ignores the (public-looking) host name and lands on 127.0.0.1,
      // as DNS rebinding or a misbehaving resolver would
      const lying: buildConnector.connector = (_options, callback) => {
        socket = connect(port, '127.0.0.1', () => callback(null, socket!))
      }
      const { err, socket: handed } = await connectWith(guardConnector(lying), 'hooks.example.com')
      assert.equal(handed, null)
      assert.equal(err?.message, 'target address 127.0.0.1 is not allowed (loopback); start the server with --allow-private-targets to permit it')
      assert.equal((err as { code?: string }).code, TARGET_REFUSED)
      assert.equal(socket?.destroyed, true)
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.equal(rx.connections, 1)
      assert.equal(rx.requests.length, 0)
    } finally {
      await rx.close()
    }
  })

  it('hands over a socket whose peer is a public address', async () => {
    const socket = fakeSocket('93.184.215.14')
    const inner: buildConnector.connector = (_o, callback) => callback(null, socket as unknown as Socket)
    const { err, socket: handed } = await connectWith(guardConnector(inner), 'hooks.example.com')
    assert.equal(err, null)
    assert.equal(handed, socket)
    assert.equal(socket.destroyed, false)
  })

  it('refuses a socket without a remote address (fails closed)', async () => {
    const socket = fakeSocket(undefined)
    const inner: buildConnector.connector = (_o, callback) => callback(null, socket as unknown as Socket)
    const { err } = await connectWith(guardConnector(inner), 'hooks.example.com')
    assert.equal((err as { code?: string }).code, TARGET_REFUSED)
    assert.equal(socket.destroyed, true)
  })

  it('refuses a forbidden IP-literal host without calling the inner connector', async () => {
    const never: buildConnector.connector = () => assert.fail('inner connector must not be called')
    for (const host of ['10.0.0.1', '::1', '[fe80::1]', '169.254.169.254']) {
      const { err } = await connectWith(guardConnector(never), host)
      assert.match(err?.message ?? '', /^target address .* is not allowed/, host)
    }
  })

  it('passes connection errors through unchanged', async () => {
    const failure = new Error('connect ECONNREFUSED 93.184.215.14:80')
    const inner: buildConnector.connector = (_o, callback) => callback(failure, null)
    assert.equal((await connectWith(guardConnector(inner), 'hooks.example.com')).err, failure)
  })
})

describe('guardLookup', () => {
  const answers = (...addresses: string[]): ResolveAll => (_host, _opts, cb) =>
    cb(null, addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })))
  const run = (resolve: ResolveAll, all: boolean) =>
    new Promise<{ err: Error | null; address: unknown; family: unknown }>((done) => {
      guardLookup(resolve)('hooks.example.com', { all }, (err, address, family) => done({ err, address, family }))
    })

  it('drops forbidden addresses and keeps the allowed ones, in order', async () => {
    const resolve = answers('10.0.0.7', '93.184.215.14', '::1', '2606:2800::1')
    assert.deepEqual((await run(resolve, true)).address, [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800::1', family: 6 },
    ])
    const single = await run(resolve, false)
    assert.deepEqual([single.err, single.address, single.family], [null, '93.184.215.14', 4])
  })

  it('fails with the refusal when every address is forbidden', async () => {
    for (const all of [true, false]) {
      const { err } = await run(answers('127.0.0.1', '::1'), all)
      assert.equal((err as { code?: string }).code, TARGET_REFUSED)
      assert.match(err?.message ?? '', /^target address 127\.0\.0\.1 is not allowed \(loopback\)/)
    }
  })

  it('passes resolver errors through', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND hooks.example.com'), { code: 'ENOTFOUND' })
    const { err } = await run((_h, _o, cb) => cb(notFound, []), true)
    assert.equal(err, notFound)
  })
})

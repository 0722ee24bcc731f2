import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { checkTargetUrl, forbiddenRange, isForbiddenAddress } from '../../src/delivery/ssrf.ts'
import type { LookupAll } from '../../src/delivery/ssrf.ts'

// No test here touches real DNS: name resolution is injected.
const resolvesTo = (...addresses: string[]): LookupAll => async () => addresses.map((address) => ({ address }))
const notFound: LookupAll = async (name) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' })
}
const noLookup: LookupAll = async (name) => assert.fail(`unexpected lookup of ${name}`)

describe('isForbiddenAddress', () => {
  const forbidden: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'linkLocal'],
    ['fe80::1%eth0', 'linkLocal'],
    ['febf::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456:789a::1', 'uniqueLocal'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'linkLocal'],
    ['64:ff9b::a9fe:a9fe', 'linkLocal'], // NAT64 of 169.254.169.254
    ['::7f00:1', 'reserved'], // deprecated IPv4-compatible form, outside 2000::/3
    ['not an ip', 'invalid'],
    ['127.1', 'invalid'],
    ['', 'invalid'],
  ]
  for (const [ip, range] of forbidden) {
    it(`forbids ${ip || '(empty)'} (${range})`, () => {
      assert.equal(isForbiddenAddress(ip), true)
      assert.equal(forbiddenRange(ip), range)
    })
  }

  const allowed = ['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '172.15.255.255', '100.128.0.1', '169.255.0.1', '11.0.0.1',
    '2606:4700:4700::1111', '2a00:1450:4001:81c::200e', '::ffff:8.8.8.8', '64:ff9b::808:808']
  for (const ip of allowed) {
    it(`allows ${ip}`, () => {
      assert.equal(isForbiddenAddress(ip), false)
      assert.equal(forbiddenRange(ip), null)
    })
  }
})

describe('checkTargetUrl', () => {
  const strict = (lookup: LookupAll = noLookup) => ({ allowPrivate: false, lookup })

  it('accepts a public IP literal and a name that resolves to public addresses only', async () => {
    assert.deepEqual(await checkTargetUrl('https://93.184.215.14/hooks', strict()), { ok: true })
    assert.deepEqual(await checkTargetUrl('https://[2606:4700::1111]:8443/x', strict()), { ok: true })
    assert.deepEqual(await checkTargetUrl('https://hooks.example.com/in', strict(resolvesTo('93.184.215.14', '2606:2800::1'))), { ok: true })
  })

  for (const url of ['http://localhost:3000/x', 'http://LOCALHOST/', 'http://localhost./', 'https://api.localhost/x']) {
    it(`refuses ${url} without resolving it`, async () => {
      const res = await checkTargetUrl(url, strict())
      assert.equal(res.ok, false)
      assert.match(!res.ok ? res.reason : '', /is not allowed.*--allow-private-targets/)
    })
  }

  const literals: [string, string][] = [
    ['http://127.0.0.1:8080/', '127.0.0.1'],
    ['http://[::1]/', '::1'],
    ['http://10.1.2.3/', '10.1.2.3'],
    ['http://169.254.169.254/latest/meta-data', '169.254.169.254'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://0.0.0.0/', '0.0.0.0'],
    ['http://2130706433/', '127.0.0.1'], // WHATWG URL normalises the integer form
    ['http://0x7f.1/', '127.0.0.1'],
  ]
  for (const [url, ip] of literals) {
    it(`refuses the IP literal in ${url}`, async () => {
      const res = await checkTargetUrl(url, strict())
      assert.deepEqual(res, { ok: false, reason: `target address ${ip} is not allowed (${forbiddenRange(ip)}); start the server with --allow-private-targets to permit it` })
    })
  }

  it('refuses a name when ANY of its addresses is forbidden', async () => {
    const res = await checkTargetUrl('https://mixed.example.com/', strict(resolvesTo('93.184.215.14', '10.0.0.7')))
    assert.equal(res.ok, false)
    assert.match(!res.ok ? res.reason : '', /10\.0\.0\.7 is not allowed \(private\)/)
  })

  it('accepts a name that does not resolve yet', async () => {
    assert.deepEqual(await checkTargetUrl('https://hooks.not-yet.invalid/in', strict(notFound)), { ok: true })
  })

  it('allows private targets, names and localhost with allowPrivate, without resolving', async () => {
    for (const url of ['http://127.0.0.1:9/', 'http://[::1]/', 'http://localhost/', 'http://intranet.example.com/']) {
      assert.deepEqual(await checkTargetUrl(url, { allowPrivate: true, lookup: noLookup }), { ok: true }, url)
    }
  })

  it('accepts http and https only, even with allowPrivate', async () => {
    for (const url of ['ftp://example.com/x', 'file:///etc/passwd', 'ws://example.com/', 'javascript:alert(1)', 'gopher://example.com/']) {
      assert.deepEqual(await checkTargetUrl(url, { allowPrivate: true }), { ok: false, reason: 'url must use http or https' }, url)
    }
  })

  it('refuses credentials in the URL and URLs that do not parse', async () => {
    assert.deepEqual(await checkTargetUrl('https://user:pw@example.com/', strict()), { ok: false, reason: 'url must not contain credentials' })
    assert.deepEqual(await checkTargetUrl('https://user@example.com/', strict()), { ok: false, reason: 'url must not contain credentials' })
    for (const url of ['', 'example.com/hook', 'http://', 'https://exa mple.com/']) {
      assert.deepEqual(await checkTargetUrl(url, strict()), { ok: false, reason: 'url is not a valid absolute URL' }, url)
    }
  })
})

import { Command, Option } from 'commander'
import { CliError, dataCommand, print, table, withDb } from './util.ts'

/** Loaded when a keys command runs, never for `--help`/`--version`. */
const _deps = async () => ({
  ...(await import('../src/lib/ids.ts')),
  ...(await import('../src/http/scopes.ts')),
  ...(await import('../src/modules/keys/service.ts')),
  ...(await import('../src/modules/tenants/service.ts')),
})

export function keysCommand(): Command {
  const cmd = new Command('keys').description('issue, list and revoke API keys')
  dataCommand(cmd.command('create').description('create an API key; the full key is printed once and never again'))
    .requiredOption('--tenant <ten_id>', 'tenant the key belongs to')
    .option('--name <label>', 'a label to recognise the key by')
    .option('--scopes <s1,s2>', 'comma-separated scopes, e.g. orders:read,webhooks:*', '*')
    .addOption(new Option('--rate-limit <n>', 'requests per hour (default: the server\'s --rate-limit)'))
    .option('--expires-in <duration>', 'lifetime such as 90d, 12h, 30m')
    .action((opts) => withDb(opts, async ({ db }) => {
      const { isId, isValidScope, parseDuration, findTenant, createKey } = await _deps()
      if (!isId('ten', opts.tenant)) throw new CliError(`--tenant must be a tenant id (ten_…), got '${opts.tenant}'`, 2)
      const scopes = [...new Set(String(opts.scopes).split(',').map((s) => s.trim()).filter(Boolean))]
      const bad = scopes.filter((s) => !isValidScope(s))
      if (scopes.length === 0 || bad.length) {
        throw new CliError(`invalid scope${bad.length > 1 ? 's' : ''} ${bad.join(', ') || '(none given)'}; use '*', '<resource>:read', '<resource>:write' or '<resource>:*'`, 2)
      }
      let rateLimit: number | undefined
      if (opts.rateLimit !== undefined) {
        rateLimit = Number(opts.rateLimit)
        if (!/^\d+$/.test(String(opts.rateLimit)) || rateLimit < 1 || rateLimit > 1e9) throw new CliError('--rate-limit must be a whole number ≥ 1', 2)
      }
      let lifetimeMs: number | undefined
      if (opts.expiresIn !== undefined) {
        const ms = parseDuration(String(opts.expiresIn))
        if (ms === null) throw new CliError('--expires-in must look like 90d, 12h, 30m, 45s or 2w', 2)
        lifetimeMs = ms
      }
      if (!(await findTenant(db, opts.tenant))) throw new CliError(`no tenant ${opts.tenant}`)
      // One clock reading: expires_at is exactly created_at + the lifetime asked for.
      const now = new Date()
      const expiresAt = lifetimeMs === undefined ? undefined : new Date(now.getTime() + lifetimeMs)
      const key = await createKey(db, { tenantId: opts.tenant, name: opts.name, scopes, rateLimit, expiresAt }, now)
      print(opts, key, () => [
        `created key ${key.id} for tenant ${key.tenant_id}`,
        `scopes: ${key.scopes.join(',')}   rate limit: ${key.rate_limit ?? 'server default'}   expires: ${key.expires_at ?? 'never'}`,
        '',
        `  ${key.key}`,
        '',
        'Store it now: it is shown only this once.',
      ].join('\n'))
    }))
  dataCommand(cmd.command('list').description('list the keys of a tenant (never their secrets)'))
    .requiredOption('--tenant <ten_id>', 'tenant whose keys to list')
    .action((opts) => withDb(opts, async ({ db }) => {
      const { isId, findTenant, listKeys } = await _deps()
      if (!isId('ten', opts.tenant)) throw new CliError(`--tenant must be a tenant id (ten_…), got '${opts.tenant}'`, 2)
      if (!(await findTenant(db, opts.tenant))) throw new CliError(`no tenant ${opts.tenant}`)
      const keys = await listKeys(db, opts.tenant)
      print(opts, keys, () => table(keys, ['id', 'name', 'prefix', 'scopes', 'rate_limit', 'created_at', 'expires_at', 'revoked_at', 'last_used_at']))
    }))
  dataCommand(cmd.command('revoke').description('revoke a key; it stops working at once, also for a running server'))
    .argument('<key_id>', 'id of the key (key_…)')
    .action((keyId: string, opts) => withDb(opts, async ({ db }) => {
      const { isId, revokeKey } = await _deps()
      const key = isId('key', keyId) ? await revokeKey(db, keyId, new Date()) : undefined
      if (!key) throw new CliError(`no key ${keyId}`)
      print(opts, { revoked: 1, key }, () => `revoked key ${key.id} at ${key.revoked_at}`)
    }))
  return cmd
}

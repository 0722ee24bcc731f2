import { Command, Option } from 'commander'
import { renderTable, statusColour, styleFor, timeCell } from './format.ts'
import { CliError, dataCommand, print, tableCommand, withDb } from './util.ts'

/** Loaded when a keys command runs, never for `--help`/`--version`. */
const _deps = async () => ({
  ...(await import('../src/lib/ids.ts')),
  ...(await import('../src/lib/scopes.ts')),
  ...(await import('../src/modules/keys/index.ts')),
  ...(await import('../src/modules/tenants/index.ts')),
  ...(await import('./short-ids.ts')),
})

export function keysCommand(): Command {
  const cmd = new Command('keys').description('issue, list and revoke API keys')
    .addHelpText('after', '\nExamples:\n  $ travelops keys create --tenant ten_019ab3c4 --name website\n  $ travelops keys list --tenant ten_019ab3c4\n  $ travelops keys revoke key_019ab3c4-9f10')
  dataCommand(cmd.command('create').description('create an API key; the full key is printed once and never again'))
    .requiredOption('--tenant <ten_id>', 'tenant the key belongs to (a unique prefix of the id is enough)')
    .option('--name <label>', 'a label to recognise the key by')
    .option('--scopes <s1,s2>', 'comma-separated scopes, e.g. orders:read,webhooks:*,events:read', '*')
    .addOption(new Option('--rate-limit <n>', 'requests per hour (default: the server\'s --rate-limit)'))
    .option('--expires-in <duration>', 'lifetime <integer><s|m|h|d> from 1s to 3650d, such as 90d, 12h, 30m (default: never expires)')
    .addHelpText('after', '\nExamples:\n  $ travelops keys create --tenant ten_019ab3c4 --name website --scopes orders:*,webhooks:* --expires-in 365d\n  $ travelops keys create --tenant ten_019ab3c4 --scopes orders:read --rate-limit 100 --json')
    .action((opts) => withDb(opts, async ({ db, engine }) => {
      const { isValidScope, parseDuration, durationError, KEY_LIFETIME, resolveId, createKey } = await _deps()
      const scopes = [...new Set(String(opts.scopes).split(',').map((s) => s.trim()).filter(Boolean))]
      const bad = scopes.filter((s) => !isValidScope(s))
      if (scopes.length === 0 || bad.length) {
        throw new CliError(`invalid scope${bad.length > 1 ? 's' : ''} ${bad.join(', ') || '(none given)'}; use '*', '<resource>:read', '<resource>:write' or '<resource>:*' (events: events:read only)`, 2)
      }
      let rateLimit: number | undefined
      if (opts.rateLimit !== undefined) {
        rateLimit = Number(opts.rateLimit)
        if (!/^\d+$/.test(String(opts.rateLimit)) || rateLimit < 1 || rateLimit > 1e9) throw new CliError('--rate-limit must be a whole number ≥ 1', 2)
      }
      let lifetimeMs: number | undefined
      if (opts.expiresIn !== undefined) {
        const ms = parseDuration(String(opts.expiresIn), KEY_LIFETIME)
        if (ms === null) throw new CliError(`--expires-in ${durationError(String(opts.expiresIn), KEY_LIFETIME)}`, 2)
        lifetimeMs = ms
      }
      const tenantId = await resolveId(db, 'tenants', 'ten', opts.tenant, 'tenant', '--tenant')
      // One clock reading: expires_at is exactly created_at + the lifetime asked for.
      const now = new Date()
      const expiresAt = lifetimeMs === undefined ? undefined : new Date(now.getTime() + lifetimeMs)
      const key = await createKey(engine, { tenantId, name: opts.name, scopes, rateLimit, expiresAt }, now)
      print(opts, key, () => [
        `created key ${key.id} for tenant ${key.tenant_id}`,
        `scopes: ${key.scopes.join(',')}   rate limit: ${key.rate_limit ?? 'server default'}   expires: ${key.expires_at ?? 'never'}`,
        '',
        `  ${key.key}`,
        '',
        'Store it now: it is shown only this once.',
      ].join('\n'))
    }))
  tableCommand(cmd.command('list').description('list the keys of a tenant (never their secrets)'))
    .requiredOption('--tenant <ten_id>', 'tenant whose keys to list (a unique prefix of the id is enough)')
    .addHelpText('after', '\nExamples:\n  $ travelops keys list --tenant ten_019ab3c4\n  $ travelops keys list --tenant ten_019ab3c4 --wide --no-color')
    .action((opts) => withDb(opts, async ({ db }) => {
      const { resolveId, listKeys, shortIds } = await _deps()
      const tenantId = await resolveId(db, 'tenants', 'ten', opts.tenant, 'tenant', '--tenant')
      const keys = await listKeys(db, tenantId)
      if (opts.json) return print(opts, keys, () => '')
      const now = new Date()
      const short = opts.wide ? undefined : await shortIds(db, 'api_keys', keys.map((k) => k.id))
      const time = timeCell(opts.wide, now)
      type K = (typeof keys)[number]
      const state = (k: K) => (k.revoked_at ? 'revoked' : k.expires_at && Date.parse(k.expires_at) <= now.getTime() ? 'expired' : 'active')
      print(opts, keys, () => renderTable(keys, [
        { header: 'ID', value: (k) => short?.get(k.id) ?? k.id },
        { header: 'NAME', value: (k) => k.name, flex: true },
        { header: 'PREFIX', value: (k) => k.prefix, drop: 2 },
        { header: 'SCOPES', value: (k) => k.scopes.join(','), flex: true },
        { header: 'STATUS', value: state, colour: (k) => statusColour[state(k)] },
        { header: 'LIMIT/H', value: (k) => (k.rate_limit === null ? 'default' : String(k.rate_limit)), right: true, drop: 3 },
        { header: 'LAST USED', value: (k) => time(k.last_used_at) ?? 'never', drop: 1 },
        { header: 'EXPIRES', value: (k) => time(k.expires_at) ?? 'never' },
        ...(opts.wide ? [
          { header: 'CREATED', value: (k: K) => time(k.created_at) },
          { header: 'REVOKED', value: (k: K) => time(k.revoked_at) },
        ] : []),
      ], styleFor(opts), `no keys for ${tenantId}: create one with travelops keys create --tenant ${tenantId}`))
    }))
  dataCommand(cmd.command('revoke').description('revoke a key; it stops working at once, also for a running server'))
    .argument('<key_id>', 'id of the key (key_…; a unique prefix is enough)')
    .option('-y, --yes', 'revoke without asking (needed when stdin/stderr is not a terminal)')
    .option('--dry-run', 'only say what would be revoked; change nothing (--json: { "revoked": 0, "would_revoke": 0|1, "key" })')
    .addHelpText('after', '\nExamples:\n  $ travelops keys revoke key_019ab3c4-9f10\n  $ travelops keys revoke key_019ab3c4-9f10 --yes --json')
    .action((input: string, opts) => withDb(opts, async ({ db, engine }) => {
      const { resolveId, getKey, revokeKey } = await _deps()
      const found = await getKey(db, await resolveId(db, 'api_keys', 'key', input, 'key'))
      if (!found) throw new CliError(`no key ${input}`)
      const what = `key ${found.id}${found.name ? ` (${found.name})` : ''} of tenant ${found.tenant_id}`
      const live = found.revoked_at === null
      if (opts.dryRun) {
        print(opts, { revoked: 0, would_revoke: live ? 1 : 0, key: found }, () => live
          ? `would revoke ${what} (dry run: nothing was changed)`
          : `${what} was already revoked at ${found.revoked_at} (dry run: nothing was changed)`)
        return
      }
      if (live && !opts.yes) await _confirm(what)
      const key = await revokeKey(engine, found.id, new Date())
      if (!key) throw new CliError(`no key ${input}`)
      print(opts, { revoked: 1, key }, () => `revoked key ${key.id} at ${key.revoked_at}`)
    }))
  return cmd
}

/**
 * Revoking a live key goes ahead only when confirmed: asked on a terminal, refused with exit 2
 * without one, so a script must say `--yes` (as `deliveries replay`).
 */
async function _confirm(what: string): Promise<void> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new CliError(`this would revoke ${what}, and there is no terminal to confirm on: pass --yes to revoke it, or --dry-run to only check`, 2)
  }
  const { askYesNo } = await import('./prompt.ts')
  if (!(await askYesNo(`revoke ${what}? It stops working at once.`))) throw new CliError('cancelled; the key was not revoked')
}

import { Command } from 'commander'
import { DEFAULT_CONFIG as D } from '../src/config-defaults.ts'
import { CliError, dataCommand, print, withDb } from './util.ts'

/** Loaded when a dashboard command runs, never for `--help`/`--version`. */
const _deps = async () => ({
  ...(await import('../src/lib/duration.ts')),
  ...(await import('../src/modules/dashboard/index.ts')),
  ...(await import('./short-ids.ts')),
})

/** Where `serve` listens by the same environment it reads (PORT, TRAVELOPS_TLS_CERT): the link's default base. */
function _defaultBase(): string {
  const port = process.env.PORT && /^\d+$/.test(process.env.PORT) ? process.env.PORT : String(D.port)
  return `${process.env.TRAVELOPS_TLS_CERT ? 'https' : 'http'}://localhost:${port}`
}

export function dashboardCommand(): Command {
  const cmd = new Command('dashboard').description('sign-in links to the administration dashboard (served by `serve` at /dashboard)')
    .addHelpText('after', '\nExamples:\n  $ travelops dashboard link\n  $ travelops dashboard link --tenant ten_019ab3c4 --base-url https://travelops.example.com\n  $ travelops dashboard revoke --all')
  dataCommand(cmd.command('link').description('print a one-time sign-in URL: the operator\'s (every tenant), or one tenant\'s with --tenant'))
    .option('--tenant <ten_id>', 'a link that sees this tenant only (a unique prefix of the id is enough)')
    .option('--expires-in <duration>', 'how long the link can be used, <integer><s|m|h|d> from 1s to 7d, e.g. 15m, 2h (default: 15m)', '15m')
    .option('--base-url <url>', 'the address browsers reach serve at (default: the running serve\'s address, else http://localhost:$PORT, https with TRAVELOPS_TLS_CERT; port 3000)')
    .addHelpText('after', '\nThe link works once; the session it opens lasts 12 h (sign out, or `dashboard revoke`, ends it earlier).\n\nExamples:\n  $ travelops dashboard link\n  $ travelops dashboard link --tenant ten_019ab3c4 --expires-in 1h --json')
    .action((opts) => withDb(opts, async ({ db, engine }) => {
      const { parseDuration, durationError, LINK_LIFETIME, issueLink, linkUrl, resolveId } = await _deps()
      const ttl = parseDuration(String(opts.expiresIn), LINK_LIFETIME)
      if (ttl === null) throw new CliError(`--expires-in ${durationError(String(opts.expiresIn), LINK_LIFETIME)}`, 2)
      // An address given wins (a proxy's public one); else where the database's serve listens.
      const base = String(opts.baseUrl ?? (await engine.runningServeUrl()) ?? _defaultBase())
      let parsed: URL
      try {
        parsed = new URL(base)
      } catch {
        throw new CliError(`--base-url must be an http(s) URL such as https://travelops.example.com, not '${base}'`, 2)
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new CliError('--base-url must start with http:// or https://', 2)
      const tenantId = opts.tenant ? await resolveId(db, 'tenants', 'ten', opts.tenant, 'tenant', '--tenant') : null
      const link = await issueLink(db, tenantId, ttl, new Date())
      const url = linkUrl(parsed.origin + parsed.pathname, link.token)
      print(opts, { url, expires_at: link.expires_at, role: link.role }, () => [
        url,
        '',
        `${link.role === 'operator' ? 'Operator (every tenant)' : `Tenant ${tenantId}`}; works once, until ${link.expires_at}.`,
      ].join('\n'))
    }))
  dataCommand(cmd.command('revoke').description('end dashboard sessions now: one tenant\'s (--tenant) or every one (--all); unused links stop working too'))
    .option('--tenant <ten_id>', 'end the sessions of this tenant')
    .option('--all', 'end every session, the operator\'s too')
    .addHelpText('after', '\nExamples:\n  $ travelops dashboard revoke --tenant ten_019ab3c4\n  $ travelops dashboard revoke --all --json')
    .action((opts) => withDb(opts, async ({ db, engine }) => {
      if (!opts.tenant === !opts.all) throw new CliError('give either --tenant <ten_id> or --all', 2)
      const { revokeSessions, resolveId } = await _deps()
      const which = opts.all ? { all: true as const } : { tenantId: await resolveId(db, 'tenants', 'ten', opts.tenant, 'tenant', '--tenant') }
      const ended = await revokeSessions(engine, which, new Date())
      print(opts, { ended }, () => `ended ${ended} session${ended === 1 ? '' : 's'}${'tenantId' in which ? ` of tenant ${which.tenantId}` : ''}`)
    }))
  return cmd
}

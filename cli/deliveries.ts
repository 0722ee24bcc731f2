import { Command, Option } from 'commander'
import type { Delivery, DeliveryDetail } from '../src/modules/webhooks/schema.ts'
import { CliError, dataCommand, print, table, withDb } from './util.ts'

const STATUSES = ['pending', 'delivered', 'failed']
const REPLAY_STATUSES = ['failed', 'delivered']
const MAX_LIMIT = 1000

/** Loaded when a deliveries command runs, never for `--help`/`--version`. */
const _deps = async () => ({
  ...(await import('../src/lib/ids.ts')),
  ...(await import('../src/modules/webhooks/operator.ts')),
  ...(await import('../src/modules/tenants/service.ts')),
  ...(await import('../src/delivery/requeue.ts')),
})

export function deliveriesCommand(): Command {
  const cmd = new Command('deliveries').description('inspect webhook deliveries of every tenant, and queue them again')

  dataCommand(cmd.command('list').description('delivery records, newest first (all tenants unless --tenant)'))
    .option('--tenant <ten_id>', 'only this tenant\'s deliveries')
    .option('--webhook <wh_id>', 'only this subscription\'s deliveries')
    .addOption(new Option('--status <status>', 'only deliveries in this status').choices(STATUSES))
    .option('--limit <n>', `at most this many records (1-${MAX_LIMIT})`, '20')
    .action((opts) => withDb(opts, async ({ db }) => {
      const d = await _deps()
      if (opts.tenant !== undefined && !d.isId('ten', opts.tenant)) throw new CliError(`--tenant must be a tenant id (ten_…), got '${opts.tenant}'`, 2)
      if (opts.webhook !== undefined && !d.isId('wh', opts.webhook)) throw new CliError(`--webhook must be a webhook id (wh_…), got '${opts.webhook}'`, 2)
      const limit = Number(opts.limit)
      if (!/^\d+$/.test(String(opts.limit)) || limit < 1 || limit > MAX_LIMIT) throw new CliError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`, 2)
      if (opts.tenant && !(await d.findTenant(db, opts.tenant))) throw new CliError(`no tenant ${opts.tenant}`)
      if (opts.webhook && !(await d.findWebhookAnyTenant(db, opts.webhook))) throw new CliError(`no webhook ${opts.webhook}`)
      const list = await d.listDeliveriesAnyTenant(db, { tenantId: opts.tenant, webhookId: opts.webhook, status: opts.status, limit })
      print(opts, list, () => table(list.map(_row), ['id', 'tenant', 'webhook_id', 'event', 'status', 'attempts', 'response_code', 'created_at', 'next_retry_at']))
    }))

  dataCommand(cmd.command('show').description('one delivery with its payload and every attempt'))
    .argument('<del_id>', 'id of the delivery (del_…)')
    .action((id: string, opts) => withDb(opts, async ({ db }) => {
      const d = await _deps()
      const delivery = d.isId('del', id) ? await d.getDeliveryAnyTenant(db, id) : undefined
      if (!delivery) throw new CliError(`no delivery ${id}`)
      print(opts, delivery, () => _human(delivery))
    }))

  dataCommand(cmd.command('retry').description('queue an immediate new attempt of each delivery (a running serve picks it up within a second)'))
    .argument('<del_id...>', 'ids of the deliveries (del_…)')
    .action((ids: string[], opts) => withDb(opts, async ({ db }) => {
      const d = await _deps()
      const malformed = ids.filter((id) => !d.isId('del', id))
      const report = malformed.length ? { unknown: malformed, requeued: [], skipped: [] } : await d.retryDeliveriesAnyTenant(db, ids, new Date())
      if (report.unknown.length) throw new CliError(`no delivery ${report.unknown.join(', ')}; nothing was queued`)
      print(opts, { requeued: report.requeued.length, skipped: report.skipped }, () => `requeued ${_count(report.requeued.length)}`)
      for (const s of report.skipped) process.stderr.write(`not requeued: ${s.id}: ${s.reason}\n`)
      if (report.skipped.length) throw new CliError(`${_count(report.skipped.length)} not requeued`)
    }))

  dataCommand(cmd.command('replay').description('queue every delivered or failed delivery of a subscription again; asks first, prints how many'))
    .requiredOption('--webhook <wh_id>', 'the subscription whose deliveries to send again')
    .option('--since <time>', 'only deliveries created at or after this ISO 8601 time (e.g. 2026-11-21T15:00:00Z)')
    .addOption(new Option('--status <status>', 'only deliveries in this status (default: delivered and failed)').choices(REPLAY_STATUSES))
    .option('-y, --yes', 'requeue without asking (needed when stdin/stderr is not a terminal)')
    .option('--dry-run', 'only count what would be requeued; change nothing (--json: { "requeued": 0, "would_requeue": N })')
    .addHelpText('after', '\nExamples:\n  $ travelops deliveries replay --webhook wh_… --status failed --dry-run\n  $ travelops deliveries replay --webhook wh_… --since 2026-11-21T15:00:00Z --yes --json')
    .action((opts) => withDb(opts, async ({ db }) => {
      const d = await _deps()
      if (!d.isId('wh', opts.webhook)) throw new CliError(`--webhook must be a webhook id (wh_…), got '${opts.webhook}'`, 2)
      const since = opts.since === undefined ? undefined : await _isoTime(opts.since)
      const hook = await d.findWebhookAnyTenant(db, opts.webhook)
      if (!hook) throw new CliError(`no webhook ${opts.webhook}`)
      if (hook.deleted_at !== null) throw new CliError(`webhook ${hook.id} is deleted; nothing can be queued`)
      if (hook.active !== 1) throw new CliError(`webhook ${hook.id} is inactive; activate it first (PATCH /v1/webhooks/${hook.id} {"active":true})`)
      const filter = { webhookId: hook.id, since, status: opts.status }
      const wouldRequeue = await d.countRequeueable(db, filter)
      if (opts.dryRun) {
        print(opts, { requeued: 0, would_requeue: wouldRequeue }, () => `would requeue ${_count(wouldRequeue)} of ${hook.id} (dry run: nothing was changed)`)
        return
      }
      if (!opts.yes) await _confirm(`requeue ${_count(wouldRequeue)} of ${hook.id}?`, wouldRequeue)
      const queued = await d.requeueDeliveries(db, filter, new Date())
      print(opts, { requeued: queued.length }, () => `requeued ${_count(queued.length)}`)
    }))
  return cmd
}

/** `--since`: an ISO 8601 date or time, as the API's `created_after` takes it; anything else is a usage error. */
async function _isoTime(value: string): Promise<string> {
  const [v, { TimestampQuery }] = await Promise.all([import('valibot'), import('../src/modules/fields.ts')])
  const r = v.safeParse(TimestampQuery, value)
  if (!r.success) throw new CliError(`--since must be an ISO 8601 time such as 2026-11-21T15:00:00Z, got '${value}'`, 2)
  return r.output
}

/**
 * A bulk change goes ahead only when confirmed: asked on a terminal (nothing to ask when
 * nothing matches), refused with exit 2 without one, so a script must say `--yes`.
 */
async function _confirm(question: string, count: number): Promise<void> {
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    throw new CliError(`this would requeue ${_count(count)}, and there is no terminal to confirm on: pass --yes to requeue them, or --dry-run to only count`, 2)
  }
  if (count === 0) return
  const { askYesNo } = await import('./prompt.ts')
  if (!(await askYesNo(question))) throw new CliError('cancelled; nothing was queued')
}

const _count = (n: number) => `${n} ${n === 1 ? 'delivery' : 'deliveries'}`

function _row(d: Delivery): Record<string, unknown> {
  return { ...d, tenant: (d.payload as { tenant_id?: string } | null)?.tenant_id }
}

function _human(d: DeliveryDetail): string {
  const lines = [
    `${d.id}  ${d.event}  ${d.status}  (webhook ${d.webhook_id}, event ${d.event_id})`,
    `created ${d.created_at}   attempts ${d.attempts}   last ${d.last_attempt_at ?? '-'}   delivered ${d.delivered_at ?? '-'}   next retry ${d.next_retry_at ?? '-'}`,
    '',
    table((d.attempt_log ?? []).map((a) => ({ ...a, error: a.error ?? '' })), ['attempt', 'at', 'trigger', 'response_code', 'duration_ms', 'error']),
    '',
    'payload:',
    JSON.stringify(d.payload, null, 2),
  ]
  return lines.join('\n')
}

import { Command, Option } from 'commander'
import type { Delivery, DeliveryDetail } from '../src/modules/webhooks/index.ts'
import { paint, renderTable, relativeTime, statusColour, styleFor, timeCell, type Column } from './format.ts'
import { CliError, dataCommand, print, tableCommand, withDb } from './util.ts'

const STATUSES = ['pending', 'delivered', 'failed']
const REPLAY_STATUSES = ['failed', 'delivered']
const MAX_LIMIT = 1000

/** Loaded when a deliveries command runs, never for `--help`/`--version`. */
const _deps = async () => ({
  ...(await import('../src/lib/ids.ts')),
  ...(await import('../src/modules/webhooks/index.ts')),
  ...(await import('../src/modules/tenants/index.ts')),
  ...(await import('../src/delivery/requeue.ts')),
  ...(await import('./short-ids.ts')),
})

export function deliveriesCommand(): Command {
  const cmd = new Command('deliveries').description('inspect webhook deliveries of every tenant, and queue them again')
    .addHelpText('after', '\nExamples:\n  $ travelops deliveries list --status failed\n  $ travelops deliveries show del_019ab3c4-5d6e\n  $ travelops deliveries replay --webhook wh_019ab3c4 --status failed --dry-run')

  tableCommand(cmd.command('list').description('delivery records, newest first (all tenants unless --tenant)'))
    .option('--tenant <ten_id>', 'only this tenant\'s deliveries (a unique prefix of the id is enough)')
    .option('--webhook <wh_id>', 'only this subscription\'s deliveries (a unique prefix of the id is enough)')
    .addOption(new Option('--status <status>', 'only deliveries in this status').choices(STATUSES))
    .option('--limit <n>', `at most this many records (1-${MAX_LIMIT})`, '20')
    .addHelpText('after', '\nExamples:\n  $ travelops deliveries list --status failed\n  $ travelops deliveries list --tenant ten_019ab3c4 --limit 100 --wide')
    .action((opts) => withDb(opts, async ({ db }) => {
      const d = await _deps()
      const limit = Number(opts.limit)
      if (!/^\d+$/.test(String(opts.limit)) || limit < 1 || limit > MAX_LIMIT) throw new CliError(`--limit must be a whole number from 1 to ${MAX_LIMIT}`, 2)
      const tenantId = opts.tenant === undefined ? undefined : await d.resolveId(db, 'tenants', 'ten', opts.tenant, 'tenant', '--tenant')
      const webhookId = opts.webhook === undefined ? undefined : await d.resolveId(db, 'webhooks', 'wh', opts.webhook, 'webhook', '--webhook')
      const list = await d.listDeliveriesAnyTenant(db, { tenantId, webhookId, status: opts.status, limit })
      if (opts.json) return print(opts, list, () => '')
      const rows = list.map(_row)
      const short = opts.wide ? undefined : {
        del: await d.shortIds(db, 'deliveries', rows.map((r) => r.id)),
        ten: await d.shortIds(db, 'tenants', rows.map((r) => r.tenant)),
        wh: await d.shortIds(db, 'webhooks', rows.map((r) => r.webhook_id)),
      }
      const time = timeCell(opts.wide, new Date())
      const columns: Column<Row>[] = [
        { header: 'ID', value: (r) => short?.del.get(r.id) ?? r.id },
        ...(tenantId ? [] : [{ header: 'TENANT', value: (r: Row) => (r.tenant && short?.ten.get(r.tenant)) ?? r.tenant, drop: 5 }]),
        ...(webhookId ? [] : [{ header: 'WEBHOOK', value: (r: Row) => short?.wh.get(r.webhook_id) ?? r.webhook_id, drop: 4 }]),
        { header: 'EVENT', value: (r) => r.event, flex: true },
        { header: 'STATUS', value: (r) => r.status, colour: (r) => statusColour[r.status] },
        { header: 'ATTEMPTS', value: (r) => String(r.attempts), right: true, drop: 3 },
        { header: 'CODE', value: (r) => (r.response_code === null ? null : String(r.response_code)), colour: (r) => _codeColour(r.response_code), right: true, drop: 1 },
        { header: 'CREATED', value: (r) => time(r.created_at) },
        { header: 'NEXT RETRY', value: (r) => time(r.next_retry_at), drop: 2 },
        ...(opts.wide ? [
          { header: 'LAST ATTEMPT', value: (r: Row) => time(r.last_attempt_at) },
          { header: 'DELIVERED', value: (r: Row) => time(r.delivered_at) },
          { header: 'EVENT ID', value: (r: Row) => r.event_id },
        ] : []),
      ]
      print(opts, list, () => renderTable(rows, columns, styleFor(opts), 'no deliveries match'))
    }))

  tableCommand(cmd.command('show').description('one delivery with its payload and every attempt'))
    .argument('<del_id>', 'id of the delivery (del_…; a unique prefix is enough)')
    .addHelpText('after', '\nExamples:\n  $ travelops deliveries show del_019ab3c4-5d6e\n  $ travelops deliveries show del_019ab3c4-5d6e --json | jq .payload')
    .action((input: string, opts) => withDb(opts, async ({ db }) => {
      const d = await _deps()
      const id = await d.resolveId(db, 'deliveries', 'del', input, 'delivery')
      const delivery = await d.getDeliveryAnyTenant(db, id)
      if (!delivery) throw new CliError(`no delivery ${input}`)
      print(opts, delivery, () => _human(delivery, opts))
    }))

  dataCommand(cmd.command('retry').description('queue an immediate new attempt of each delivery (a running serve picks it up within a second)'))
    .argument('<del_id...>', 'ids of the deliveries (del_…; unique prefixes are enough)')
    .addHelpText('after', '\nExamples:\n  $ travelops deliveries retry del_019ab3c4-5d6e\n  $ travelops deliveries retry del_019ab3c4-5d6e del_019ab3c5-01f2 --json')
    .action((inputs: string[], opts) => withDb(opts, async ({ db, engine }) => {
      const d = await _deps()
      const ids: string[] = []
      const unmatched: string[] = []
      for (const input of inputs) {
        const found = await d.matchIds(db, 'deliveries', 'del', input)
        if (found && found.length > 1) await d.resolveId(db, 'deliveries', 'del', input, 'delivery') // throws: names several
        if (found?.length === 1) ids.push(found[0]!)
        else unmatched.push(input)
      }
      const report = unmatched.length ? { unknown: unmatched, requeued: [], skipped: [] } : await d.retryDeliveriesAnyTenant({ db, engine }, ids, new Date())
      if (report.unknown.length) throw new CliError(`no delivery ${report.unknown.join(', ')}; nothing was queued`)
      print(opts, { requeued: report.requeued.length, skipped: report.skipped }, () => `requeued ${_count(report.requeued.length)}`)
      for (const s of report.skipped) process.stderr.write(`not requeued: ${s.id}: ${s.reason}\n`)
      if (report.skipped.length) throw new CliError(`${_count(report.skipped.length)} not requeued`)
    }))

  dataCommand(cmd.command('replay').description('queue every delivered or failed delivery of a subscription again; asks first, prints how many'))
    .requiredOption('--webhook <wh_id>', 'the subscription whose deliveries to send again (a unique prefix of the id is enough)')
    .option('--since <time>', 'only deliveries created at or after this ISO 8601 time (e.g. 2026-11-21T15:00:00Z)')
    .addOption(new Option('--status <status>', 'only deliveries in this status (default: delivered and failed)').choices(REPLAY_STATUSES))
    .option('-y, --yes', 'requeue without asking (needed when stdin/stderr is not a terminal)')
    .option('--dry-run', 'only count what would be requeued; change nothing (--json: { "requeued": 0, "would_requeue": N })')
    .addHelpText('after', '\nExamples:\n  $ travelops deliveries replay --webhook wh_… --status failed --dry-run\n  $ travelops deliveries replay --webhook wh_… --since 2026-11-21T15:00:00Z --yes --json')
    .action((opts) => withDb(opts, async ({ db, engine }) => {
      const d = await _deps()
      const since = opts.since === undefined ? undefined : await _isoTime(opts.since)
      const webhook = await d.findWebhookAnyTenant(db, await d.resolveId(db, 'webhooks', 'wh', opts.webhook, 'webhook', '--webhook'))
      if (!webhook) throw new CliError(`no webhook ${opts.webhook}`)
      if (webhook.deleted_at !== null) throw new CliError(`webhook ${webhook.id} is deleted; nothing can be queued`)
      if (webhook.active !== 1) throw new CliError(`webhook ${webhook.id} is inactive; activate it first (PATCH /v1/webhooks/${webhook.id} {"active":true})`)
      const filter = { tenantId: webhook.tenant_id, webhookId: webhook.id, since, status: opts.status }
      const wouldRequeue = await d.countReplayable(db, filter)
      if (opts.dryRun) {
        print(opts, { requeued: 0, would_requeue: wouldRequeue }, () => `would requeue ${_count(wouldRequeue)} of ${webhook.id} (dry run: nothing was changed)`)
        return
      }
      if (!opts.yes) await _confirm(`requeue ${_count(wouldRequeue)} of ${webhook.id}?`, wouldRequeue)
      const queued = await d.replayDeliveries({ db, engine }, filter, new Date())
      print(opts, { requeued: queued }, () => `requeued ${_count(queued)}`)
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

type Row = Delivery & { tenant: string | undefined }

function _row(d: Delivery): Row {
  return { ...d, tenant: (d.payload as { tenant_id?: string } | null)?.tenant_id }
}

const _codeColour = (code: number | null) => (code === null ? undefined : code >= 200 && code < 300 ? 'green' : 'red')

function _human(d: DeliveryDetail, opts: { wide?: boolean; color?: boolean }): string {
  const style = styleFor(opts)
  const now = new Date()
  const when = (iso: string | null) => (iso ? `${iso} (${relativeTime(iso, now)})` : '-')
  const lines = [
    `delivery   ${d.id}`,
    `status     ${paint(d.status, statusColour[d.status], style)}   ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`,
    `event      ${d.event}   ${d.event_id}${(d.payload as { test?: boolean } | null)?.test ? '   (test event)' : ''}`,
    `webhook    ${d.webhook_id}`,
    `created    ${when(d.created_at)}`,
    `last       ${when(d.last_attempt_at)}`,
    `delivered  ${when(d.delivered_at)}`,
    `next retry ${when(d.next_retry_at)}`,
    '',
    renderTable(d.attempt_log ?? [], [
      { header: '#', value: (a) => String(a.attempt), right: true },
      { header: 'AT', value: (a) => (opts.wide ? a.at : relativeTime(a.at, now)) },
      { header: 'TRIGGER', value: (a) => a.trigger },
      { header: 'CODE', value: (a) => (a.response_code === null ? null : String(a.response_code)), colour: (a) => _codeColour(a.response_code), right: true },
      { header: 'DURATION', value: (a) => (a.duration_ms === null ? null : `${a.duration_ms} ms`), right: true },
      { header: 'ERROR', value: (a) => a.error, flex: true },
    ], style, '(no attempt yet)'),
    '',
    'payload:',
    JSON.stringify(d.payload, null, 2),
  ]
  return lines.join('\n')
}

import type { TenantContext } from '../../context.ts'
import type { WebhookRow } from '../../db/schema.ts'
import { withTx } from '../../engine/tx.ts'
import { lookupAll } from '../../delivery/guard-connect.ts'
import { generateSecret } from '../../delivery/sign.ts'
import { checkTargetUrl } from '../../delivery/ssrf.ts'
import { toWebhook as renderWebhook, webhookJson } from '../../delivery/webhook-json.ts'
import { ConflictError, InvalidError, NotFoundError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { changedColumns } from '../fields.ts'
import * as repo from './repo.ts'
import type { CreatedWebhook, CreateWebhookInput, UpdateWebhookInput, Webhook } from './schema.ts'

/**
 * The subscription as the API shows it: delivery/webhook-json.ts renders it, the one function
 * for these answers and for the `data` of the `webhook.disabled` event (CONTRACT §15).
 * Its events were validated when stored, so they are the view's names.
 */
export const toWebhook = renderWebhook as (row: WebhookRow) => Webhook

export { webhookJson }

/** Loopback/private targets are refused unless the server allows them (checked again on every attempt). */
async function _checkUrl(ctx: TenantContext, url: string): Promise<void> {
  const r = await checkTargetUrl(url, { allowPrivate: ctx.config.allowPrivateTargets, lookup: lookupAll(ctx.resolve) })
  if (!r.ok) throw new InvalidError([{ path: 'url', message: r.reason }])
}

export async function createWebhook(ctx: TenantContext, input: CreateWebhookInput): Promise<CreatedWebhook> {
  await _checkUrl(ctx, input.url)
  const now = ctx.clock.now().toISOString()
  const row: WebhookRow = {
    id: newId('wh'),
    tenant_id: ctx.tenantId,
    url: input.url,
    events: JSON.stringify(input.events),
    secret: input.secret ?? generateSecret(),
    headers: JSON.stringify(input.headers ?? {}),
    active: 1,
    retry_count: 3,
    created_at: now,
    updated_at: now,
    deleted_at: null,
    failing_since: null,
    disabled_at: null,
    disabled_reason: null,
  }
  // Count and insert in one write transaction: concurrent creates cannot both pass the limit.
  await withTx(ctx.engine, async ({ tx }) => {
    if (await repo.countWebhooks(tx, ctx.tenantId) >= ctx.config.maxWebhooks) {
      throw new ConflictError(`This tenant already has ${ctx.config.maxWebhooks} webhook subscriptions, the most allowed (--max-webhooks); delete one first`)
    }
    await repo.webhooks.insert(tx, row)
  })
  return input.secret === undefined ? { ...toWebhook(row), secret: row.secret } : toWebhook(row)
}

export async function getWebhook(ctx: TenantContext, id: string): Promise<Webhook> {
  const row = await repo.findWebhook(ctx.db, ctx.tenantId, id)
  if (!row) throw new NotFoundError(`No webhook ${id}`)
  return toWebhook(row)
}

export function listWebhooks(ctx: TenantContext, q: { limit: number; cursor?: string }): ReturnType<typeof repo.listWebhooks> {
  return repo.listWebhooks(ctx.db, ctx.tenantId, q.cursor, q.limit)
}

export async function updateWebhook(ctx: TenantContext, id: string, input: UpdateWebhookInput): Promise<Webhook> {
  if (input.url !== undefined) await _checkUrl(ctx, input.url)
  const webhook = await withTx(ctx.engine, async ({ tx }) => {
    const row = await repo.findWebhook(tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No webhook ${id}`)
    const set: Partial<WebhookRow> = {}
    if (input.url !== undefined) set.url = input.url
    if (input.events !== undefined) set.events = JSON.stringify(input.events)
    if (input.secret !== undefined) set.secret = input.secret
    if (input.headers !== undefined) set.headers = JSON.stringify(input.headers ?? {})
    if (input.active !== undefined) set.active = input.active ? 1 : 0
    // Enabling again (CONTRACT §11) clears why it was disabled and starts its health afresh.
    if (input.active === true && (row.active === 0 || row.disabled_at !== null)) Object.assign(set, { disabled_at: null, disabled_reason: null, failing_since: null })
    const changed = changedColumns(row, set).length > 0
    if (!changed) return toWebhook(row)
    set.updated_at = ctx.clock.now().toISOString()
    await repo.webhooks.update(tx, ctx.tenantId, id, set)
    return toWebhook({ ...row, ...set })
  })
  // Answered once its queue is dropped too (CONTRACT §7), in a statement of its own (repo.ts);
  // also when it was inactive already, so a PATCH repeated after a failed drop completes it.
  if (input.active === false) await repo.dropQueued(ctx.engine, ctx.tenantId, id)
  return webhook
}

/** Soft delete: the delivery records stay and keep naming the subscription; its secret is erased. */
export async function deleteWebhook(ctx: TenantContext, id: string): Promise<{ id: string; deleted: true }> {
  await withTx(ctx.engine, async ({ tx }) => {
    const row = await repo.findWebhook(tx, ctx.tenantId, id)
    if (!row) throw new NotFoundError(`No webhook ${id}`)
    const now = ctx.clock.now().toISOString()
    await repo.webhooks.update(tx, ctx.tenantId, id, { deleted_at: now, updated_at: now, active: 0, secret: '', headers: '{}' })
  })
  await repo.dropQueued(ctx.engine, ctx.tenantId, id)
  return { id, deleted: true as const }
}

import type { Db } from '../src/db/connect.ts'
import { CliError } from './util.ts'

// Short ids for human tables, as git shows commits: the shortest prefix (at least the type and
// 8 characters) that names one record in the whole table, not only among the rows shown, so
// it can be typed back into `show`, `retry`, `revoke`, `--tenant` or `--webhook`. Ids are
// `<type>_<UUID>` whose first 12 hex digits are a 256 ms window and a count (lib/ids.ts), so
// even the records of one fan-out differ within them. Loaded lazily by the commands that print or accept them.

export type IdTable = 'tenants' | 'api_keys' | 'webhooks' | 'deliveries'

const MIN_AFTER_TYPE = 8

/** id → its shortest unique prefix in `table` (ids not found there keep the minimum length). */
export async function shortIds(db: Db, table: IdTable, ids: Iterable<string | null | undefined>): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  for (const id of new Set(ids)) {
    if (!id || out.has(id)) continue
    const [before, after] = await Promise.all([
      db.selectFrom(table).select('id').where('id', '<', id).orderBy('id', 'desc').limit(1).executeTakeFirst(),
      db.selectFrom(table).select('id').where('id', '>', id).orderBy('id', 'asc').limit(1).executeTakeFirst(),
    ])
    const shared = Math.max(_common(id, before?.id), _common(id, after?.id))
    let length = Math.max(id.indexOf('_') + 1 + MIN_AFTER_TYPE, shared + 1)
    if (id[length - 1] === '-') length++ // never end on a dash
    out.set(id, id.slice(0, length))
  }
  return out
}

/**
 * The full id that `input` names in `table`: a full id, or a unique prefix of one (the type and
 * at least 4 characters). For an option (`--tenant`), a malformed value is a usage error (exit 2);
 * for an argument it names nothing (exit 1), as an unknown full id does. Several → exit 1.
 */
export async function resolveId(db: Db, table: IdTable, type: string, input: string, what: string, option?: string): Promise<string> {
  const ids = await matchIds(db, table, type, input)
  if (ids === null && option) throw new CliError(`${option} must be a ${what} id (${type}_…) or a unique prefix of one, got '${input}'`, 2)
  if (!ids?.length) throw new CliError(`no ${what} ${input}`)
  if (ids.length > 1) throw new CliError(_ambiguous(input, ids, what))
  return ids[0]!
}

/** Every id `input` may name: null when it is not an id or prefix of this type; [] none; [id] one; more when ambiguous (at most 6). */
export async function matchIds(db: Db, table: IdTable, type: string, input: string): Promise<string[] | null> {
  if (!new RegExp(`^${type}_[0-9a-f][0-9a-f-]{3,35}$`).test(input)) return null
  const rows = await db.selectFrom(table).select('id').where('id', '>=', input).where('id', '<', `${input}~`).orderBy('id').limit(6).execute()
  return rows[0]?.id === input ? [input] : rows.map((r) => r.id)
}

function _ambiguous(input: string, ids: string[], what: string): string {
  return `${input} names more than one ${what} (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}); give more of the id`
}

function _common(a: string, b: string | undefined): number {
  if (!b) return 0
  let i = 0
  while (i < a.length && a[i] === b[i]) i++
  return i
}

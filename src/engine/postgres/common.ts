// What engine/open.ts and the PostgreSQL adapter need to know about PostgreSQL without loading its driver.

/** The NOTIFY channel on which key writes are announced to every process's key cache (engine/postgres/keys-watch.ts). */
export const KEYS_CHANNEL = 'travelops_keys'

/** Whether `--db` names a PostgreSQL database (CONTRACT §10) rather than a SQLite file. No driver loaded. */
export const isPostgresUrl = (target: string) => /^postgres(ql)?:\/\//i.test(target)

/** The URL without its password, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres://…'
  }
}

/** SQLSTATE of a PostgreSQL error, if it is one. */
export function pgCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}

/** Serialization failure or deadlock: the transaction may simply be run again. */
export const isRetryable = (err: unknown) => ['40001', '40P01'].includes(pgCode(err) ?? '')

/**
 * A prepared statement whose result columns a migration changed since this connection prepared
 * it (engine/postgres/pool.ts): its transaction may simply be run again, under a freshly prepared one.
 */
export const isStalePlan = (err: unknown) => pgCode(err) === '0A000' && /cached plan must not change result type/.test(String((err as Error).message))

/**
 * Runs `run` again, from its start, while PostgreSQL ends it in a way that running it again
 * resolves (isRetryable(), isStalePlan()), at most `tries` times in all; before each new try a
 * random pause of up to 2^try ms, at most 100 ms. `run` must have no effect that outlives a
 * failed try (one transaction, or one statement).
 */
export async function rerunRetryable<T>(tries: number, run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (err) {
      if (!(isRetryable(err) || isStalePlan(err)) || attempt >= tries) throw err
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 ** attempt, 100)))
    }
  }
}

/** A unique index refused the row (two writers raced to the same slug, code or key). */
export const isUniqueViolation = (err: unknown) => pgCode(err) === '23505'


import pg from 'pg'
import { KEYS_CHANNEL } from './common.ts'

/**
 * When API keys may have changed, for a cache of key rows on PostgreSQL (http/auth.ts), where
 * several processes and the CLI write keys. Every key write announces itself in its own
 * transaction (`NOTIFY travelops_keys`, see keysWrite() in engine.ts), so a process that
 * LISTENs hears it as soon as it commits; the writer's own process also counts its writes
 * at once, before its answer is sent. As a backstop against a write that announces nothing
 * (a hand-written UPDATE), the version also moves every TTL_MS, so nothing cached is older
 * than that (CONTRACT §10: a revoked key stops working within 1 s at every process).
 *
 * The listening connection is opened on first use (only `serve` authenticates) and while it
 * is not listening — connecting, lost, reconnecting — the version is null: nothing is cached.
 */
const TTL_MS = 500
const RECONNECT_MS = 1_000

export class KeysWatch {
  #epoch = 0
  #listening = false
  #client: pg.Client | undefined
  #started = false
  #closed = false
  #retry: NodeJS.Timeout | undefined

  #url: string

  constructor(url: string) {
    this.#url = url
  }

  /** Changes whenever keys may have changed; null: do not cache. */
  version(): string | null {
    if (!this.#started) this.#start()
    return this.#listening ? `${this.#epoch}.${Math.floor(Date.now() / TTL_MS)}` : null
  }

  /** This process wrote keys (committed). */
  changed(): void {
    this.#epoch++
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#listening = false
    clearTimeout(this.#retry)
    await this.#client?.end().catch(() => {})
  }

  #start(): void {
    this.#started = true
    void this.#connect()
  }

  async #connect(): Promise<void> {
    if (this.#closed) return
    const client = new pg.Client({ connectionString: this.#url, application_name: 'travelops keys' })
    this.#client = client
    const lost = () => {
      if (this.#client !== client) return
      this.#client = undefined
      this.#listening = false
      this.#epoch++
      client.end().catch(() => {})
      if (!this.#closed) this.#retry = setTimeout(() => void this.#connect(), RECONNECT_MS)
    }
    client.on('error', lost)
    client.on('end', lost)
    client.on('notification', (msg) => {
      if (msg.channel === KEYS_CHANNEL) this.#epoch++
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${KEYS_CHANNEL}`)
    } catch {
      lost()
      return
    }
    if (this.#client !== client) return
    if (this.#closed) {
      await client.end().catch(() => {})
      return
    }
    // Anything may have changed while nobody listened.
    this.#epoch++
    this.#listening = true
  }
}

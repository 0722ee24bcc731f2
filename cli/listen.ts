import { Command, Option } from 'commander'
import { CliError } from './util.ts'

// `travelops listen` (CONTRACT §15): webhooks on a developer's machine, the way `stripe listen`
// gives them. It follows GET /v1/events/stream of a running serve and POSTs each event to
// --forward-to as a delivery would be sent (same body, §7 and Standard Webhooks headers), signed
// with a secret printed at start. It resumes by itself (Last-Event-ID) when the stream ends.

/** How long a forward may take before it counts as failed (as a delivery's deadline). */
const FORWARD_TIMEOUT_MS = 30_000
/** Waits between two tries to reach the stream: the first, then each later one. */
const RETRY_MS = [250, 1_000]

export function listenCommand(): Command {
  return new Command('listen')
    .description('forward the tenant\'s events, as they happen, to a URL on this machine: each POSTed and signed as a delivery is (Ctrl-C to stop)')
    .requiredOption('--forward-to <url>', 'where to POST each event (http or https; loopback and private addresses allowed)')
    .option('--events <names>', 'only these events: comma-separated names or families (order.created,payment.*)')
    .addOption(new Option('--server <url>', 'the running serve to follow').env('TRAVELOPS_SERVER').default('http://127.0.0.1:3000'))
    .addOption(new Option('--key <key>', 'an API key with events:read').env('TRAVELOPS_API_KEY').makeOptionMandatory())
    .option('--secret <secret>', 'sign with this secret (default: a new whsec_ secret, printed at start)')
    .option('--json', 'print one JSON object per event on stdout instead of a line')
    .addHelpText('after', [
      '',
      'Each event is sent as a delivery would be: the envelope as the body, Content-Type, User-Agent, X-Webhook-ID,',
      'X-Webhook-Timestamp, X-Webhook-Signature and the Standard Webhooks webhook-id, webhook-timestamp and',
      'webhook-signature headers. One line per event: time, event name, id, the answer\'s status and how long it took.',
      'When serve restarts, listen reconnects and resumes after the last event it forwarded.',
      '',
      'Examples:',
      '  $ travelops listen --forward-to http://localhost:4242/webhooks --key "$TRAVELOPS_API_KEY"',
      '  $ travelops listen --forward-to http://127.0.0.1:8000/hooks --events order.*,payment.received --secret whsec_…',
    ].join('\n'))
    .action(async (opts) => {
      const target = _httpUrl(String(opts.forwardTo), '--forward-to')
      const server = _httpUrl(String(opts.server), '--server').replace(/\/+$/, '')
      if (String(opts.key).trim() === '') throw new CliError('--key (or TRAVELOPS_API_KEY) must be an API key with events:read', 2)
      const { generateSecret } = await import('../src/delivery/sign.ts')
      const secret = opts.secret === undefined ? generateSecret() : String(opts.secret)
      if (secret.length === 0) throw new CliError('--secret must not be empty', 2)
      await listen({ server, key: String(opts.key), target, secret, events: opts.events as string | undefined, json: opts.json === true })
    })
}

function _httpUrl(value: string, flag: string): string {
  let u: URL
  try {
    u = new URL(value)
  } catch {
    throw new CliError(`${flag} must be an http or https URL, not '${value}'`, 2)
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError(`${flag} must be an http or https URL, not '${value}'`, 2)
  return u.href
}

interface ListenOptions {
  server: string
  key: string
  target: string
  secret: string
  events?: string
  json: boolean
}

async function listen(o: ListenOptions): Promise<void> {
  const [{ SseParser }, { deliveryHeaders }, { VERSION }] = await Promise.all([
    import('../src/lib/sse.ts'), import('../src/delivery/sign.ts'), import('../src/version.ts'),
  ])
  const userAgent = `travelops/${VERSION}`
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const say = (line: string) => process.stderr.write(`${line}\n`)
  say(`Forwarding events from ${o.server} to ${o.target}${o.events ? ` (${o.events})` : ''}`)
  say(`Signing secret: ${o.secret}`)
  say('Ctrl-C to stop.')
  let lastId: string | undefined
  let tries = 0
  try {
    while (!stop.signal.aborted) {
      const url = `${o.server}/v1/events/stream${o.events ? `?type=${encodeURIComponent(o.events)}` : ''}`
      let res: Response
      try {
        res = await fetch(url, {
          headers: { authorization: `Bearer ${o.key}`, accept: 'text/event-stream', ...(lastId ? { 'last-event-id': lastId } : {}) },
          signal: stop.signal,
        })
      } catch (err) {
        if (stop.signal.aborted) break
        if (tries === 1) say(`Cannot reach ${o.server} (${_reason(err)}); trying again every ${RETRY_MS[1]! / 1000} s`)
        await _wait(RETRY_MS[Math.min(tries++, RETRY_MS.length - 1)]!, stop.signal)
        continue
      }
      if (res.status !== 200) {
        const text = await res.text().catch(() => '')
        let message = text
        try {
          message = (JSON.parse(text) as { error: { message: string } }).error.message
        } catch { /* not the error shape */ }
        if (res.status === 429 || res.status >= 500) {
          const wait = Math.min(Number(res.headers.get('retry-after')) || 1, 30) * 1000
          say(`The server answered ${res.status} (${message}); trying again in ${wait / 1000} s`)
          await _wait(wait, stop.signal)
          continue
        }
        throw new CliError(`the server refused the stream: ${res.status} ${message}`)
      }
      say(`Connected to ${o.server}${lastId ? `, resuming after ${lastId}` : ''}`)
      tries = 0
      const parser = new SseParser()
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          for (const m of parser.push(chunk)) {
            await _forward(m, o, userAgent, deliveryHeaders, stop.signal)
            lastId = m.id
          }
        }
        if (!stop.signal.aborted) say('The stream ended; reconnecting')
      } catch (err) {
        if (stop.signal.aborted) break
        say(`The stream broke off (${_reason(err)}); reconnecting`)
      }
      await _wait(RETRY_MS[0]!, stop.signal)
      tries = 1
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

type Headers = typeof import('../src/delivery/sign.ts').deliveryHeaders

/** POSTs one event to the target, signed as a delivery is, and prints its line. */
async function _forward(m: { id: string; event: string; data: string }, o: ListenOptions, userAgent: string, headersOf: Headers, stop: AbortSignal): Promise<void> {
  let at = ''
  try {
    at = String((JSON.parse(m.data) as { timestamp?: unknown }).timestamp ?? '')
  } catch { /* not JSON: sent as it came */ }
  const started = performance.now()
  let status: number | null = null
  let error: string | undefined
  try {
    const res = await fetch(o.target, {
      method: 'POST',
      headers: headersOf({ id: m.id, at, payload: m.data }, o.secret, Math.floor(Date.now() / 1000), userAgent),
      body: m.data,
      redirect: 'manual',
      signal: AbortSignal.any([stop, AbortSignal.timeout(FORWARD_TIMEOUT_MS)]),
    })
    status = res.status
    await res.body?.cancel().catch(() => {})
  } catch (err) {
    if (stop.aborted) return
    error = _reason(err)
  }
  const ms = Math.round(performance.now() - started)
  const time = new Date()
  if (o.json) {
    process.stdout.write(`${JSON.stringify({ time: time.toISOString(), event: m.event, id: m.id, status, duration_ms: ms, ...(error ? { error } : {}) })}\n`)
  } else {
    const clock = time.toTimeString().slice(0, 8)
    process.stdout.write(`${clock}  ${m.event.padEnd(18)}  ${m.id}  ${error ? `→ ${error}` : `→ ${status}`}  ${ms} ms\n`)
  }
}

function _reason(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e?.name === 'TimeoutError') return `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
  return e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err)
}

function _wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done)
  })
}

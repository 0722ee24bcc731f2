import type { ComponentChildren } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import { messageOf } from './api.ts'

/** Loads `fn` (again when `deps` change, or when `reload()` is called); keeps the last data while reloading. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): { data: T | undefined; error: string | null; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true })
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setState((s) => ({ ...s, loading: true }))
    fn().then((data) => live && setState({ data, error: null, loading: false }), (err) => live && setState((s) => ({ data: s.data, error: messageOf(err), loading: false })))
    return () => void (live = false)
  }, [...deps, tick])
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) }
}

/**
 * Loads `async` again `ms` after its last answer, while the page is visible. Never while a load
 * is on its way: a list slower than `ms` (a filtered page scanning far back on a busy server) is
 * shown when it comes, instead of being asked for again and thrown away at every tick.
 */
export function useRefresh(async: { loading: boolean; reload: () => void }, ms: number | null): void {
  const { loading, reload } = async
  useEffect(() => {
    if (ms === null || loading) return
    const id = setInterval(() => document.visibilityState === 'visible' && reload(), ms)
    return () => clearInterval(id)
  }, [ms, loading, reload])
}

export function ErrorBox({ children }: { children: ComponentChildren }) {
  return children ? <div class="error" role="alert">{children}</div> : null
}

export function Notice({ children }: { children: ComponentChildren }) {
  return <div class="notice" role="status">{children}</div>
}

export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {children ? <div class="empty-body">{children}</div> : null}
    </div>
  )
}

export function Loading() {
  return <p class="loading" aria-live="polite">Loading…</p>
}

const TONES: Record<string, string> = {
  delivered: 'ok', active: 'ok', succeeded: 'ok', live: 'ok',
  failed: 'bad', disabled: 'bad', revoked: 'bad', expired: 'bad', failing: 'warn',
  pending: 'info', inactive: 'muted', test: 'info',
}

export function Badge({ label, tone }: { label: string; tone?: string }) {
  return <span class={`badge badge-${tone ?? TONES[label.toLowerCase()] ?? 'muted'}`}>{label}</span>
}

const UNITS: [number, string][] = [[60, 's'], [60, 'min'], [24, 'h'], [30, 'd']]

/** "3 min ago", "in 2 h"; the full time in the tooltip. */
export function relative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—'
  let diff = (Date.parse(iso) - now) / 1000
  const future = diff > 0
  diff = Math.abs(diff)
  if (diff < 5) return 'just now'
  let unit = 's'
  for (const [size, name] of UNITS) {
    unit = name
    if (diff < size) break
    diff /= size
    unit = ''
  }
  if (!unit) return new Date(iso).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' })
  const n = Math.floor(diff)
  return future ? `in ${n} ${unit}` : `${n} ${unit} ago`
}

export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>
  return <time dateTime={at} title={new Date(at).toLocaleString()}>{relative(at)}</time>
}

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' })
}

/** A value shown once with a copy button (a new key, a new secret). */
export function SecretOnce({ label, value, note }: { label: string; value: string; note: string }) {
  const [copied, setCopied] = useState(false)
  const input = useRef<HTMLInputElement>(null)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setCopied(true)
    } catch {
      input.current?.select()
    }
  }
  return (
    <div class="secret" role="region" aria-label={label}>
      <label class="secret-label">{label}
        <div class="secret-row">
          <input ref={input} class="mono" readOnly value={value} onFocus={(e) => (e.target as HTMLInputElement).select()} data-secret />
          <button type="button" class="btn" onClick={copy}>{copied ? 'Copied' : 'Copy'}</button>
        </div>
      </label>
      <p class="hint">{note}</p>
    </div>
  )
}

/** A modal question (the native dialog: focus is kept inside, Escape closes). */
export function Confirm({ open, title, children, confirm, danger, onConfirm, onClose }: {
  open: boolean; title: string; children: ComponentChildren; confirm: string; danger?: boolean; onConfirm: () => void | Promise<void>; onClose: () => void
}) {
  const ref = useRef<HTMLDialogElement>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    const d = ref.current
    if (!d) return
    if (open && !d.open) {
      setError(null)
      d.showModal()
    }
    if (!open && d.open) d.close()
  }, [open])
  const go = async () => {
    setBusy(true)
    setError(null)
    try {
      await onConfirm()
      onClose()
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }
  return (
    <dialog ref={ref} class="dialog" onClose={onClose} aria-labelledby="dialog-title">
      <h2 id="dialog-title">{title}</h2>
      <div class="dialog-body">{children}</div>
      <ErrorBox>{error}</ErrorBox>
      <div class="actions">
        <button type="button" class="btn" onClick={onClose}>Cancel</button>
        <button type="button" class={`btn ${danger ? 'btn-danger' : 'btn-primary'}`} disabled={busy} onClick={go}>{confirm}</button>
      </div>
    </dialog>
  )
}

/** Formatted JSON, always as text. */
export function Json({ value, label }: { value: unknown; label: string }) {
  return <pre class="json" tabIndex={0} aria-label={label}>{JSON.stringify(value, null, 2)}</pre>
}

export function PageHead({ title, sub, children }: { title: string; sub?: ComponentChildren; children?: ComponentChildren }) {
  return (
    <header class="page-head">
      <div>
        <h1>{title}</h1>
        {sub ? <p class="sub">{sub}</p> : null}
      </div>
      {children ? <div class="page-actions">{children}</div> : null}
    </header>
  )
}

/** A form's submit state: runs `fn`, shows its error where the form is. */
export function useSubmit<A extends unknown[]>(fn: (...a: A) => Promise<void>) {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const run = async (...a: A) => {
    setBusy(true)
    setError(null)
    try {
      await fn(...a)
    } catch (err) {
      setError(messageOf(err))
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, run, setError }
}

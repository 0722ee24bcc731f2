import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js'
import { useEffect, useRef } from 'preact/hooks'
import { get, list } from '../api.ts'
import type { StatsRow, Webhook } from '../types.ts'
import { Badge, Empty, ErrorBox, Loading, PageHead, Time, useAsync, useRefresh } from '../ui.tsx'

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend)

const HOUR = 3_600_000
const DAY = 24 * HOUR

function _css(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim()
}

/** Succeeded and failed attempts per bucket, stacked (Chart.js draws; the numbers are the API's). */
function AttemptsChart({ rows, label, unit }: { rows: StatsRow[]; label: string; unit: 'hour' | 'day' }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  useEffect(() => {
    const fmt = (iso: string) => unit === 'hour'
      ? new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' })
      : new Date(iso).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric' })
    const text = _css('--text-muted')
    const grid = _css('--border')
    const chart = new Chart(canvas.current!, {
      type: 'bar',
      data: {
        labels: rows.map((r) => fmt(r.start)),
        datasets: [
          { label: 'Succeeded', data: rows.map((r) => r.succeeded), backgroundColor: _css('--ok'), stack: 'a' },
          { label: 'Failed', data: rows.map((r) => r.failed), backgroundColor: _css('--bad'), stack: 'a' },
        ],
      },
      options: {
        responsive: true, maintainAspectRatio: false, animation: false,
        scales: {
          x: { stacked: true, ticks: { color: text, maxRotation: 0, autoSkip: true }, grid: { display: false } },
          y: { stacked: true, beginAtZero: true, ticks: { color: text, precision: 0 }, grid: { color: grid } },
        },
        plugins: { legend: { labels: { color: text } }, tooltip: { mode: 'index', intersect: false } },
      },
    })
    return () => chart.destroy()
  }, [rows, document.documentElement.dataset.theme])
  const total = rows.reduce((n, r) => n + r.attempts, 0)
  return (
    <figure class="chart">
      <figcaption>{label}</figcaption>
      <div class="chart-box"><canvas ref={canvas} role="img" aria-label={`${label}: ${total} attempts`} /></div>
    </figure>
  )
}

function _summary(rows: StatsRow[]) {
  const attempts = rows.reduce((n, r) => n + r.attempts, 0)
  const succeeded = rows.reduce((n, r) => n + r.succeeded, 0)
  return { attempts, succeeded, failed: attempts - succeeded, rate: attempts ? (100 * succeeded) / attempts : null }
}

export function Overview({ base }: { base: string }) {
  const now = Date.now()
  const hourStart = Math.floor(now / HOUR) * HOUR
  const dayStart = Math.floor(now / DAY) * DAY
  const stats = useAsync(async () => {
    const [hours, days, webhooks] = await Promise.all([
      get<StatsRow[]>('/v1/webhooks/stats', { bucket: 'hour', since: new Date(hourStart - 23 * HOUR).toISOString(), until: new Date(hourStart + HOUR).toISOString() }),
      get<StatsRow[]>('/v1/webhooks/stats', { bucket: 'day', since: new Date(dayStart - 6 * DAY).toISOString(), until: new Date(dayStart + DAY).toISOString() }),
      list<Webhook>('/v1/webhooks', { limit: '100' }),
    ])
    return { hours, days, webhooks: webhooks.data }
  }, [base])
  useRefresh(stats, 30_000)
  if (!stats.data) return stats.error ? <ErrorBox>{stats.error}</ErrorBox> : <Loading />
  const { hours, days, webhooks } = stats.data
  const day = _summary(hours)
  const week = _summary(days)
  const lastDay = days[days.length - 1]
  const troubled = webhooks.filter((h) => h.disabled_at || h.failing_since)
  return (
    <>
      <PageHead title="Overview" sub="Webhook attempts of this tenant: the last 24 hours and the last 7 days." />
      <ErrorBox>{stats.error}</ErrorBox>
      <section class="cards" aria-label="Figures">
        <div class="card stat"><span class="stat-label">Attempts, 24 h</span><span class="stat-value" data-stat="attempts">{day.attempts}</span></div>
        <div class="card stat"><span class="stat-label">Success rate, 24 h</span><span class="stat-value" data-stat="rate">{day.rate === null ? '—' : `${day.rate.toFixed(1)} %`}</span></div>
        <div class="card stat"><span class="stat-label">Success rate, 7 days</span><span class="stat-value">{week.rate === null ? '—' : `${week.rate.toFixed(1)} %`}</span></div>
        <div class="card stat"><span class="stat-label">Duration today, p50 / p95</span>
          <span class="stat-value">{lastDay?.p50_ms == null ? '—' : `${lastDay.p50_ms} / ${lastDay.p95_ms} ms`}</span></div>
      </section>
      <section class="charts">
        <div class="card"><AttemptsChart rows={hours} label="Attempts per hour, last 24 hours" unit="hour" /></div>
        <div class="card"><AttemptsChart rows={days} label="Attempts per day, last 7 days" unit="day" /></div>
      </section>
      <section class="card">
        <h2>Endpoints failing or disabled now</h2>
        {troubled.length === 0
          ? <Empty title={webhooks.length ? 'Every endpoint is healthy.' : 'No endpoints yet.'}>
              {webhooks.length ? null : <a class="btn btn-primary" href={`${base}/endpoints/new`}>Add an endpoint</a>}
            </Empty>
          : (
            <ul class="plain">
              {troubled.map((h) => (
                <li key={h.id} class="row-line">
                  <a href={`${base}/endpoints/${h.id}`} class="mono url">{h.url}</a>
                  {h.disabled_at ? <Badge label={`Disabled: ${h.disabled_reason ?? 'by hand'}`} tone="bad" /> : <Badge label="Failing" tone="warn" />}
                  <span class="muted">since <Time at={h.disabled_at ?? h.failing_since} /></span>
                </li>
              ))}
            </ul>
          )}
      </section>
    </>
  )
}

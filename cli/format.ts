import { styleText } from 'node:util'

// Human output of the CLI: aligned tables, relative times, status colours. Node built-ins only,
// so command files may import it at the top without slowing `--help`. `--json` never comes here.

export type Colour = 'green' | 'red' | 'yellow' | 'cyan' | 'dim'

export interface Column<R> {
  header: string
  value: (row: R) => string | null | undefined
  /** The colour of this cell (TTY only, see `useColour`). */
  colour?: (row: R) => Colour | undefined
  /** Numbers line up on the right. */
  right?: boolean
  /** May be cut with `…` to fit the terminal's width (names, event types, errors). */
  flex?: boolean
  /** May be left out when the terminal is too narrow even after cutting: the highest first. */
  drop?: number
}

export interface Style {
  colour: boolean
  /** Columns of the terminal to fit into; undefined = no limit (a pipe, `--wide`). */
  width?: number
}

/** The style for stdout: colour on a terminal unless `--no-color` or NO_COLOR; fit to the terminal unless `--wide`. */
export function styleFor(opts: { color?: boolean; wide?: boolean }, stream: NodeJS.WriteStream = process.stdout): Style {
  return { colour: useColour(opts, stream), width: !opts.wide && stream.isTTY ? stream.columns || undefined : undefined }
}

/** https://no-color.org: `NO_COLOR` (non-empty) or `--no-color` turn it off; `FORCE_COLOR` (not 0) turns it on; else a TTY decides. */
export function useColour(opts: { color?: boolean }, stream: NodeJS.WriteStream = process.stdout): boolean {
  if (opts.color === false) return false
  if (process.env.NO_COLOR) return false
  const force = process.env.FORCE_COLOR
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false'
  return stream.isTTY === true
}

export function paint(text: string, colour: Colour | undefined, style: Style): string {
  return style.colour && colour && text ? styleText(colour, text, { validateStream: false }) : text
}

/** Aligned columns with upper-case headers; empty → `none`. Shrinks `flex` columns to fit `style.width`. */
export function renderTable<R>(rows: readonly R[], columns: readonly Column<R>[], style: Style, none = '(none)'): string {
  if (rows.length === 0) return none
  const cells = rows.map((r) => columns.map((c) => _cell(c.value(r))))
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => _len(row[i]!))))
  if (style.width) {
    const kept = _fit(widths, columns, style.width)
    if (kept.length < columns.length) {
      return renderTable(rows, kept.map((i) => columns[i]!), style, none)
    }
  }
  const line = (vals: string[], colours: (Colour | undefined)[]) =>
    vals.map((v, i) => {
      const cut = _cut(v, widths[i]!)
      const pad = ' '.repeat(widths[i]! - _len(cut))
      const painted = paint(cut, colours[i], style)
      return columns[i]!.right ? pad + painted : painted + (i === vals.length - 1 ? '' : pad)
    }).join('  ').trimEnd()
  const header = line(columns.map((c) => c.header), columns.map(() => (style.colour ? 'dim' : undefined)))
  return [header, ...rows.map((r, n) => line(cells[n]!, columns.map((c) => c.colour?.(r))))].join('\n')
}

/** "just now", "42 s ago", "3 min ago", "5 h ago", "2 d ago", "in 30 s"; past 30 days the date. */
export function relativeTime(iso: string | null | undefined, now: Date = new Date()): string | null {
  if (!iso) return null
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return iso
  const ms = t - now.getTime()
  const abs = Math.abs(ms)
  if (abs < 1000) return 'just now'
  const units: [number, string][] = [[86_400_000, 'd'], [3_600_000, 'h'], [60_000, 'min'], [1000, 's']]
  if (abs >= 30 * 86_400_000) return iso.slice(0, 10)
  const [size, unit] = units.find(([size]) => abs >= size)!
  const n = Math.floor(abs / size)
  return ms < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`
}

/** Time columns: relative by default, the exact ISO time with `--wide`. */
export const timeCell = (wide: boolean | undefined, now: Date) => (iso: string | null | undefined) => (wide ? iso : relativeTime(iso, now))

export const statusColour: Record<string, Colour> = {
  delivered: 'green', failed: 'red', pending: 'yellow',
  active: 'green', revoked: 'red', expired: 'dim', applied: 'green',
}

const _cell = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? '-' : v.replace(/[\r\n\t]+/g, ' '))
const _len = (s: string) => [...s].length

function _cut(s: string, width: number): string {
  const chars = [...s]
  return chars.length <= width ? s : chars.slice(0, Math.max(0, width - 1)).join('') + '…'
}

/**
 * Makes the line fit `width`: takes characters from the widest `flex` column first (never below
 * 8 or its header); if that is not enough, answers the indexes of the columns to keep, leaving
 * out the `drop` columns, highest first, until the rest fits at full width.
 */
function _fit<R>(widths: number[], columns: readonly Column<R>[], width: number): number[] {
  const all = columns.map((_, i) => i)
  const total = (keep: number[]) => keep.reduce((a, i) => a + widths[i]!, 0) + 2 * (keep.length - 1)
  const full = [...widths]
  let excess = total(all) - width
  const shrinkable = columns.reduce((a, c, i) => a + (c.flex ? Math.max(0, widths[i]! - Math.max(8, c.header.length)) : 0), 0)
  if (excess > shrinkable) {
    const order = all.filter((i) => columns[i]!.drop !== undefined).sort((a, b) => columns[b]!.drop! - columns[a]!.drop!)
    let keep = all
    for (const i of order) {
      keep = keep.filter((k) => k !== i)
      const rest = keep.reduce((a, k) => a + (columns[k]!.flex ? Math.max(0, full[k]! - Math.max(8, columns[k]!.header.length)) : 0), 0)
      if (total(keep) - width <= rest) return keep
    }
    return keep
  }
  while (excess > 0) {
    let widest = -1
    columns.forEach((c, i) => {
      const floor = Math.max(8, c.header.length)
      if (c.flex && widths[i]! > floor && (widest < 0 || widths[i]! > widths[widest]!)) widest = i
    })
    if (widest < 0) return all
    widths[widest]!--
    excess--
  }
  return all
}

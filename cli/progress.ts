// Progress of a long operation on stderr, for a person watching: only when stderr is a
// terminal (never in a pipe, a log or CI), redrawn at most ten times a second on one line,
// which is cleared at the end. stdout stays for the command's answer (`--json`).

export interface Progress {
  update(done: number, total: number): void
  /** Prints a line of its own (e.g. one step finished), above the progress line. */
  line(text: string): void
  end(): void
}

export function progress(label: string, unit: (n: number) => string = String, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, line() {}, end() {} }
  let last = 0
  let shown = false
  const clear = () => {
    if (shown) stream.write('\r\x1b[2K')
    shown = false
  }
  return {
    update(done, total) {
      const now = Date.now()
      if (now - last < 100 && done < total) return
      last = now
      const pct = total > 0 ? Math.floor((100 * done) / total) : 100
      stream.write(`\r\x1b[2K${label} ${pct}% (${unit(done)} of ${unit(total)})`)
      shown = true
    },
    line(text) {
      clear()
      stream.write(`${text}\n`)
    },
    end: clear,
  }
}

/** 1536 → "1.5 KB"; bytes in powers of 1000, as `ls -lh --si` and disk vendors count. */
export function bytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let i = 0
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000
    i++
  }
  return i === 0 ? `${n} B` : `${n.toFixed(1)} ${units[i]}`
}

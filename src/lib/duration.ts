/** `90d`, `12h`, `30m`, `45s` (and `2w`) → milliseconds, or null when it is not such a duration. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,6})([smhdw])$/.exec(text.trim())
  if (!m) return null
  const unit = { s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w']
  const ms = Number(m[1]) * unit
  return ms > 0 ? ms : null
}

/** A duration setting where `0` means "never" (→ 0): `--disable-after`, `--retention`. */
export function parseDurationSetting(text: string): number | null {
  return text.trim() === '0' ? 0 : parseDuration(text)
}

/**
 * How GET /v1/webhooks/stats reads the attempts of [since, until) at a cost that does not grow
 * with them: attempt_stats (attempts summed per UTC hour, migrations/0013_attempt_rollup.sql)
 * for the whole hours, and delivery_attempts only for the two hours at the edges that the range
 * cuts. For each of those it reads whichever part has less time before `now` in it (attempts are
 * not made in the future): the part inside the range, added; or the part outside, taken away
 * from the hour's sums. The default range (the last 24 h, ending now) so reads at most half an
 * hour of attempts: the hour at its end is read as sums less its future. The answer is exact
 * either way; only the cost depends on the choice.
 */
export interface StatsPlan {
  /** attempt_stats rows of hours `from` ≤ hour < `to` (`YYYY-MM-DDTHH`), when any. */
  hours?: { from: string; to: string }
  /** delivery_attempts in [since, until), counted +1 each or −1 each (taken away from their hour). */
  raw: { since: string; until: string; sign: 1 | -1 }[]
}

const _H = 3_600_000

export function statsPlan(since: string, until: string, now: Date): StatsPlan {
  const [s, u, t] = [Date.parse(since), Date.parse(until), now.getTime()]
  // [a, b): the hours the range touches; [from, to): those read from attempt_stats.
  const a = Math.floor(s / _H) * _H
  const b = Math.ceil(u / _H) * _H
  let from = Math.ceil(s / _H) * _H
  let to = Math.floor(u / _H) * _H
  const raw: StatsPlan['raw'] = []
  const add = (sign: 1 | -1, x: number, y: number) => {
    if (x < y) raw.push({ since: _iso(x), until: _iso(y), sign })
  }
  // Time before now in [x, y): roughly what reading its attempts costs.
  const cost = (x: number, y: number) => Math.max(0, Math.min(y, t) - x)
  if (b - a === _H && (s > a || u < b)) {
    // One hour, cut on one side or both.
    if (cost(s, u) <= cost(a, s) + cost(u, b)) add(1, s, u)
    else {
      from = a
      to = b
      add(-1, a, s)
      add(-1, u, b)
    }
    return _plan(from, to, raw)
  }
  if (s > a) {
    if (cost(s, a + _H) <= cost(a, s)) add(1, s, a + _H)
    else {
      from = a
      add(-1, a, s)
    }
  }
  if (u < b) {
    if (cost(b - _H, u) <= cost(u, b)) add(1, b - _H, u)
    else {
      to = b
      add(-1, u, b)
    }
  }
  return _plan(from, to, raw)
}

function _plan(from: number, to: number, raw: StatsPlan['raw']): StatsPlan {
  return { hours: from < to ? { from: _iso(from).slice(0, 13), to: _iso(to).slice(0, 13) } : undefined, raw }
}

/** since and until come normalised (toISOString()), as attempt times are: compared as text, as they always were. */
function _iso(ms: number): string {
  return new Date(ms).toISOString()
}

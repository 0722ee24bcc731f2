/**
 * Endpoint health (CONTRACT §11), after one recorded attempt of a subscription: a success
 * clears `failing_since`; a failure sets it if unset, and disables a subscription that is still
 * active at once on a `410 Gone` (`gone`), or when it has been failing for at least
 * `disableAfterMs` (`failing`; 0 = never). `failing_since` is what clients and the dashboard
 * read as "failing since", so it follows every recorded attempt, an inactive subscription's too.
 *
 * Both stores call this with the subscription row as they read it inside the recording
 * transaction; what a disabling does to the queue is dropQueued() (queue-state.ts).
 */
export type DisabledReason = 'failing' | 'gone'

export interface WebhookHealth {
  active: boolean
  failingSince: string | null
}

export interface HealthVerdict {
  failingSince: string | null
  /** Set when this attempt disables the subscription. */
  disable?: DisabledReason
}

export function endpointHealth(webhook: WebhookHealth, attempt: { delivered: boolean; responseCode: number | null; at: string }, disableAfterMs: number): HealthVerdict {
  if (attempt.delivered) return { failingSince: null }
  const failingSince = webhook.failingSince ?? attempt.at
  if (!webhook.active) return { failingSince }
  if (attempt.responseCode === 410) return { failingSince, disable: 'gone' }
  if (disableAfterMs > 0 && Date.parse(attempt.at) - Date.parse(failingSince) >= disableAfterMs) return { failingSince, disable: 'failing' }
  return { failingSince }
}

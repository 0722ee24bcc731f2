import type { DeliveryStore } from '../delivery/port.ts'
import type { EventFeed } from './port.ts'

/**
 * A delivery store whose cycles announce the `webhook.disabled` events they commit to the event
 * feed (engine/port.ts), as emit() does for the API's events: the streams hear of them at once
 * rather than at their next poll.
 */
export function announcingDisabled(store: DeliveryStore, feed: EventFeed): DeliveryStore {
  const cycle = store.cycle.bind(store)
  store.cycle = async (outcomes, claim) => {
    const r = await cycle(outcomes, claim)
    if (r.disabled.length > 0) feed.committed()
    return r
  }
  return store
}

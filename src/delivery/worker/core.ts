import type { Clock } from '../../lib/clock.ts'
import type { Logger } from '../../lib/logger.ts'
import type { DeliveryStore, Job } from '../port.ts'
import type { SendResult } from '../send.ts'
import type { Reads } from './reads.ts'
import type { Slots } from './slots.ts'

/** An attempt started and not yet recorded. */
export interface Running {
  job: Job
  done: Promise<void>
  /** When it was started (performance.now()). */
  at: number
  /** Settles the attempt's wait for its answer (the backstop, or shutdown past its grace); null once the answer is in. */
  end: ((result: SendResult) => void) | null
}

/**
 * What the worker's parts share: its identity and store, the two parts every other one consults
 * (slots, reads), and the few facts more than one part reads. Each part keeps the rest of its
 * state to itself.
 */
export interface Core {
  readonly owner: string
  /** How long a claim or a lease holds unless renewed. */
  readonly leaseMs: number
  readonly store: DeliveryStore
  readonly clock: Clock
  readonly logger: Logger
  readonly slots: Slots
  readonly reads: Reads
  /** Settles once the store has recovered and listens (or failed to): no cycle or claim runs before. Set by the lifecycle at start. */
  ready: Promise<void>
  /** Attempts started and not yet recorded, by delivery id (those whose answer is being recorded included). */
  readonly running: Map<string, Running>
  /** Statements run beside the cycles (leases given back, a disabled subscription's queue dropped): stop() waits for these. */
  readonly background: Set<Promise<void>>
  /** Deliveries whose outcomes a cycle is recording now: a fast claim beside it leaves them alone. */
  recording: string[]
  /** stop() was called: nothing more is claimed, leased or started. */
  stopping: boolean
  /** Set once the store has recovered and listens: before that no lease is offered. */
  started: boolean
}

/** When a lease taken now ends. */
export function leaseUntil(core: Core, now: Date): string {
  return new Date(now.getTime() + core.leaseMs).toISOString()
}

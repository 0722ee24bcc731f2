import type { Job } from './port.ts'

/** Deliveries a commit has just queued: one per subscription listed (a subscription may be listed more than once). */
export interface FreshWork {
  tenantId: string
  webhookIds: readonly string[]
  /** Those deliveries, when they were written under the worker's lease: its jobs, ready to send. */
  jobs?: readonly Job[]
}

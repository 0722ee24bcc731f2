import type { Insertable, Selectable, Updateable } from 'kysely'

export interface TenantsTable {
  id: string
  name: string
  created_at: string
}

export interface ApiKeysTable {
  id: string
  tenant_id: string
  name: string | null
  key_hash: string
  key_prefix: string
  scopes: string
  rate_limit: number | null
  created_at: string
  expires_at: string | null
  revoked_at: string | null
  last_used_at: string | null
}

export interface CountersTable {
  tenant_id: string
  name: string
  value: number
}

export interface IdempotencyKeysTable {
  key_id: string
  idem_key: string
  tenant_id: string
  method: string
  path: string
  body_hash: string
  status: number | null
  response: string | null
  created_at: string
  /** The answer's parts in idempotency_parts (a streamed answer); null: `response` holds it whole. */
  parts: number | null
}

/** A streamed answer an Idempotency-Key keeps, in parts (migrations/0015_idempotency_parts.sql). */
export interface IdempotencyPartsTable {
  key_id: string
  idem_key: string
  tenant_id: string
  /** The claim's: idempotency_keys.created_at when the part was written. */
  created_at: string
  part: number
  body: string
}

export interface OrdersTable {
  id: string
  tenant_id: string
  order_number: string
  status: string
  customer_id: string | null
  customer: string
  items: string
  total: number
  currency: string
  travel_date: string | null
  notes: string | null
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface EventsTable {
  id: string
  tenant_id: string
  name: string
  payload: string
  created_at: string
}

export interface CustomersTable {
  id: string
  tenant_id: string
  first_name: string
  last_name: string
  email: string
  phone: string | null
  address: string | null
  notes: string | null
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface ProductsTable {
  id: string
  tenant_id: string
  name: string
  description: string | null
  code: string | null
  price: number
  currency: string
  duration_minutes: number | null
  location: string | null
  capacity: number | null
  active: number
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface ItinerariesTable {
  id: string
  tenant_id: string
  title: string
  order_id: string | null
  customer_id: string | null
  start_date: string
  end_date: string
  days: string
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface InvoicesTable {
  id: string
  tenant_id: string
  invoice_number: string
  order_id: string | null
  customer_id: string | null
  status: string
  lines: string
  total: number
  amount_paid: number
  currency: string
  due_date: string | null
  paid_at: string | null
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface PaymentsTable {
  id: string
  tenant_id: string
  amount: number
  currency: string
  method: string
  order_id: string | null
  invoice_id: string | null
  reference: string | null
  status: string
  refunded_amount: number
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface SuppliersTable {
  id: string
  tenant_id: string
  name: string
  type: string
  email: string | null
  phone: string | null
  address: string | null
  notes: string | null
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface InquiriesTable {
  id: string
  tenant_id: string
  name: string
  email: string
  phone: string | null
  message: string
  product_id: string | null
  travel_date: string | null
  travelers: number | null
  status: string
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface ContentTable {
  id: string
  tenant_id: string
  entity: string
  slug: string
  title: string
  body: string | null
  data: string
  status: string
  metadata: string | null
  created_at: string
  updated_at: string
}

export interface WebhooksTable {
  id: string
  tenant_id: string
  url: string
  events: string
  secret: string
  headers: string
  active: number
  retry_count: number
  created_at: string
  updated_at: string
  deleted_at: string | null
  /** When the current run of failed attempts began; null after a success (endpoint health, §11). */
  failing_since: string | null
  disabled_at: string | null
  disabled_reason: 'failing' | 'gone' | null
}

export interface DeliveriesTable {
  id: string
  tenant_id: string
  webhook_id: string
  event_id: string
  event: string
  status: string
  attempts: number
  retries: number
  response_code: number | null
  created_at: string
  delivered_at: string | null
  last_attempt_at: string | null
  next_retry_at: string | null
  due_at: string | null
  manual: number
  locked_until: string | null
  /** The worker holding the lease (see delivery/port.ts). */
  locked_by: string | null
}

/** A running `serve` (on SQLite at most one: engine/sqlite/process-lock.ts). */
export interface RateWindowsTable {
  key_id: string
  tenant_id: string
  hour: number
  count: number
}

export interface DashboardLinksTable {
  token_hash: string
  role: 'operator' | 'tenant'
  tenant_id: string | null
  created_at: string
  expires_at: string
  used_at: string | null
  /** The key whose POST /v1/dashboard/links made it (CONTRACT §16); null: the CLI's. */
  key_id: string | null
}

export interface DashboardSessionsTable {
  id: string
  token_hash: string
  role: 'operator' | 'tenant'
  tenant_id: string | null
  created_at: string
  expires_at: string
  ended_at: string | null
  /** The key whose link opened it: the session ends with that key and keeps within its bounds. */
  key_id: string | null
}

export interface ServeProcessesTable {
  id: string
  pid: number
  host: string
  file: string
  proc_start: string | null
  started_at: string
  /** Where it listens, once it does (null before, and for rows of versions before 0018). */
  url: string | null
}

export interface DeliveryAttemptsTable {
  delivery_id: string
  attempt: number
  tenant_id: string
  at: string
  trigger: string
  response_code: number | null
  duration_ms: number
  error: string | null
  response_body: string | null
}

/**
 * delivery_attempts summed per (tenant, subscription, UTC hour, duration), kept equal to it by
 * every writer in the same transaction (migrations/0013_attempt_rollup.sql): what stats read.
 */
export interface AttemptStatsTable {
  tenant_id: string
  /** The attempt time's first 13 characters: `2026-11-24T12`. */
  hour: string
  webhook_id: string
  duration_ms: number
  n: number
  /** Of those, answered with a 2xx. */
  ok: number
}

export interface Database {
  tenants: TenantsTable
  api_keys: ApiKeysTable
  counters: CountersTable
  idempotency_keys: IdempotencyKeysTable
  idempotency_parts: IdempotencyPartsTable
  orders: OrdersTable
  events: EventsTable
  customers: CustomersTable
  products: ProductsTable
  itineraries: ItinerariesTable
  invoices: InvoicesTable
  payments: PaymentsTable
  suppliers: SuppliersTable
  inquiries: InquiriesTable
  content: ContentTable
  webhooks: WebhooksTable
  deliveries: DeliveriesTable
  delivery_attempts: DeliveryAttemptsTable
  attempt_stats: AttemptStatsTable
  serve_processes: ServeProcessesTable
  rate_windows: RateWindowsTable
  dashboard_links: DashboardLinksTable
  dashboard_sessions: DashboardSessionsTable
}

export type Tenant = Selectable<TenantsTable>
export type DashboardSessionRow = Selectable<DashboardSessionsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKey = Insertable<ApiKeysTable>
export type OrderRow = Selectable<OrdersTable>
export type NewOrder = Insertable<OrdersTable>
export type OrderUpdate = Updateable<OrdersTable>
export type EventRow = Selectable<EventsTable>
export type WebhookRow = Selectable<WebhooksTable>
export type DeliveryRow = Selectable<DeliveriesTable>
export type DeliveryAttemptRow = Selectable<DeliveryAttemptsTable>
export type CustomerRow = Selectable<CustomersTable>
export type CustomerUpdate = Updateable<CustomersTable>
export type ProductRow = Selectable<ProductsTable>
export type ProductUpdate = Updateable<ProductsTable>
export type SupplierRow = Selectable<SuppliersTable>
export type SupplierUpdate = Updateable<SuppliersTable>
export type InquiryRow = Selectable<InquiriesTable>
export type InquiryUpdate = Updateable<InquiriesTable>
export type ContentRow = Selectable<ContentTable>
export type ContentUpdate = Updateable<ContentTable>
export type ItineraryRow = Selectable<ItinerariesTable>
export type ItineraryUpdate = Updateable<ItinerariesTable>
export type InvoiceRow = Selectable<InvoicesTable>
export type InvoiceUpdate = Updateable<InvoicesTable>
export type PaymentRow = Selectable<PaymentsTable>
export type PaymentUpdate = Updateable<PaymentsTable>

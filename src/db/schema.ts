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

export interface Database {
  tenants: TenantsTable
  api_keys: ApiKeysTable
  counters: CountersTable
  idempotency_keys: IdempotencyKeysTable
  orders: OrdersTable
  events: EventsTable
}

export type Tenant = Selectable<TenantsTable>
export type ApiKeyRow = Selectable<ApiKeysTable>
export type NewApiKey = Insertable<ApiKeysTable>
export type OrderRow = Selectable<OrdersTable>
export type NewOrder = Insertable<OrdersTable>
export type OrderUpdate = Updateable<OrdersTable>
export type EventRow = Selectable<EventsTable>

-- PostgreSQL twin of migrations/0002_domain.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- The rest of the travel domain. Money columns are integer minor units of `currency`;
-- JSON columns hold objects/arrays as text. References between resources (customer_id,
-- product_id, order_id, invoice_id) are checked by the services to be of the same tenant;
-- they carry no foreign key, so deleting a record leaves references to it as they were.

CREATE TABLE customers (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  first_name  TEXT NOT NULL,
  last_name   TEXT NOT NULL,
  email       TEXT NOT NULL,
  phone       TEXT,
  address     TEXT,                 -- JSON object or NULL
  notes       TEXT,
  metadata    TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX customers_tenant ON customers (tenant_id, id);
CREATE INDEX customers_tenant_email ON customers (tenant_id, email, id);

CREATE TABLE products (
  id                TEXT PRIMARY KEY,
  tenant_id         TEXT NOT NULL REFERENCES tenants (id),
  name              TEXT NOT NULL,
  description       TEXT,
  code              TEXT,
  price             BIGINT  NOT NULL,
  currency          TEXT NOT NULL,
  duration_minutes  INTEGER,
  location          TEXT,
  capacity          INTEGER,
  active            INTEGER NOT NULL DEFAULT 1,
  metadata          TEXT,
  created_at        TEXT NOT NULL,
  updated_at        TEXT NOT NULL,
  UNIQUE (tenant_id, code)
);
CREATE INDEX products_tenant ON products (tenant_id, id);
CREATE INDEX products_tenant_active ON products (tenant_id, active, id);

CREATE TABLE itineraries (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  title        TEXT NOT NULL,
  order_id     TEXT,
  customer_id  TEXT,
  start_date   TEXT NOT NULL,
  end_date     TEXT NOT NULL,
  days         TEXT NOT NULL,        -- JSON array
  metadata     TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX itineraries_tenant ON itineraries (tenant_id, id);
CREATE INDEX itineraries_tenant_order ON itineraries (tenant_id, order_id, id);

CREATE TABLE invoices (
  id              TEXT PRIMARY KEY,
  tenant_id       TEXT NOT NULL REFERENCES tenants (id),
  invoice_number  TEXT NOT NULL,
  order_id        TEXT,
  customer_id     TEXT,
  status          TEXT NOT NULL CHECK (status IN ('open', 'paid', 'void')),
  lines           TEXT NOT NULL,     -- JSON array, unit prices in minor units
  total           BIGINT  NOT NULL,
  amount_paid     BIGINT  NOT NULL DEFAULT 0,
  currency        TEXT NOT NULL,
  due_date        TEXT,
  paid_at         TEXT,
  metadata        TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL,
  UNIQUE (tenant_id, invoice_number)
);
CREATE INDEX invoices_tenant ON invoices (tenant_id, id);
CREATE INDEX invoices_tenant_status ON invoices (tenant_id, status, id);
CREATE INDEX invoices_tenant_order ON invoices (tenant_id, order_id, id);

CREATE TABLE payments (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL REFERENCES tenants (id),
  amount           BIGINT  NOT NULL,
  currency         TEXT NOT NULL,
  method           TEXT NOT NULL CHECK (method IN ('card', 'bank_transfer', 'cash', 'other')),
  order_id         TEXT,
  invoice_id       TEXT,
  reference        TEXT,
  status           TEXT NOT NULL CHECK (status IN ('received', 'refunded', 'partially_refunded')),
  refunded_amount  BIGINT  NOT NULL DEFAULT 0,
  metadata         TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX payments_tenant ON payments (tenant_id, id);
CREATE INDEX payments_tenant_order ON payments (tenant_id, order_id, id);
CREATE INDEX payments_tenant_invoice ON payments (tenant_id, invoice_id, id);

CREATE TABLE suppliers (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  name        TEXT NOT NULL,
  type        TEXT NOT NULL CHECK (type IN ('hotel', 'transport', 'guide', 'activity', 'other')),
  email       TEXT,
  phone       TEXT,
  address     TEXT,                 -- JSON object or NULL
  notes       TEXT,
  metadata    TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
CREATE INDEX suppliers_tenant ON suppliers (tenant_id, id);

CREATE TABLE inquiries (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  name         TEXT NOT NULL,
  email        TEXT NOT NULL,
  phone        TEXT,
  message      TEXT NOT NULL,
  product_id   TEXT,
  travel_date  TEXT,
  travelers    INTEGER,
  status       TEXT NOT NULL CHECK (status IN ('new', 'responded', 'closed')),
  metadata     TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX inquiries_tenant ON inquiries (tenant_id, id);

CREATE TABLE content (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  entity      TEXT NOT NULL,
  slug        TEXT NOT NULL,
  title       TEXT NOT NULL,
  body        TEXT,
  data        TEXT NOT NULL,        -- JSON object
  status      TEXT NOT NULL CHECK (status IN ('draft', 'published')),
  metadata    TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL,
  UNIQUE (tenant_id, entity, slug)
);
CREATE INDEX content_tenant_entity ON content (tenant_id, entity, id);
CREATE INDEX content_tenant_entity_status ON content (tenant_id, entity, status, id);

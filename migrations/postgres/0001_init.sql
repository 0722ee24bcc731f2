-- PostgreSQL twin of migrations/0001_init.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- travelops: tenants, API keys, idempotency records, per-tenant counters, orders and the
-- events outbox. Forward-only: never edit this file once it has landed.

CREATE TABLE tenants (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

CREATE TABLE api_keys (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  name          TEXT,
  key_hash      TEXT NOT NULL UNIQUE,       -- sha256 hex of the full key; the key itself is never stored
  key_prefix    TEXT NOT NULL,              -- first characters, to recognise a key in listings
  scopes        TEXT NOT NULL,              -- JSON array of scope strings
  rate_limit    INTEGER,                    -- requests per hour; NULL follows the server default
  created_at    TEXT NOT NULL,
  expires_at    TEXT,
  revoked_at    TEXT,
  last_used_at  TEXT
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id, id);

CREATE TABLE counters (
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  name       TEXT NOT NULL,
  value      BIGINT  NOT NULL,
  PRIMARY KEY (tenant_id, name)
);

CREATE TABLE idempotency_keys (
  key_id       TEXT NOT NULL REFERENCES api_keys (id),
  idem_key     TEXT NOT NULL,
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  method       TEXT NOT NULL,
  path         TEXT NOT NULL,
  body_hash    TEXT NOT NULL,
  status       INTEGER,                     -- NULL while the first request is still running
  response     TEXT,
  created_at   TEXT NOT NULL,
  PRIMARY KEY (key_id, idem_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE orders (
  id            TEXT PRIMARY KEY,
  tenant_id     TEXT NOT NULL REFERENCES tenants (id),
  order_number  TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'cancelled', 'completed')),
  customer_id   TEXT,
  customer      TEXT NOT NULL,              -- JSON {firstName,lastName,email,phone?}
  items         TEXT NOT NULL,              -- JSON [{productId?,description,quantity,unitPrice(minor)}]
  total         BIGINT  NOT NULL,           -- minor units
  currency      TEXT NOT NULL,
  travel_date   TEXT,
  notes         TEXT,
  metadata      TEXT,                       -- JSON object or NULL
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (tenant_id, order_number)
);
CREATE INDEX orders_tenant ON orders (tenant_id, id);
CREATE INDEX orders_tenant_status ON orders (tenant_id, status, id);
CREATE INDEX orders_tenant_customer ON orders (tenant_id, customer_id, id);

-- The outbox: one row per event, written in the transaction of the change that caused it.
-- payload is the exact JSON body receivers get.
CREATE TABLE events (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  name        TEXT NOT NULL,
  payload     TEXT NOT NULL,
  created_at  TEXT NOT NULL
);
CREATE INDEX events_tenant ON events (tenant_id, id);

-- PostgreSQL twin of migrations/0003_webhooks.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- Webhook subscriptions, one delivery per event per matching subscription, and one attempt
-- row per HTTP try. The delivery row is the queue: due_at says when the worker should try it
-- next (NULL = nothing queued), locked_until is the lease of the worker that claimed it.

CREATE TABLE webhooks (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants (id),
  url          TEXT NOT NULL,
  events       TEXT NOT NULL,              -- JSON array of event names, or ["*"]
  secret       TEXT NOT NULL,              -- signing secret; never returned by the API ('' once deleted)
  headers      TEXT NOT NULL DEFAULT '{}', -- JSON object of custom headers
  active       INTEGER NOT NULL DEFAULT 1,
  retry_count  INTEGER NOT NULL DEFAULT 3,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  deleted_at   TEXT                        -- deleted subscriptions stay for their delivery records
);
CREATE INDEX webhooks_tenant ON webhooks (tenant_id, id);

CREATE TABLE deliveries (
  id               TEXT PRIMARY KEY,
  tenant_id        TEXT NOT NULL REFERENCES tenants (id),
  webhook_id       TEXT NOT NULL REFERENCES webhooks (id),
  event_id         TEXT NOT NULL REFERENCES events (id),
  event            TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  retries          INTEGER NOT NULL DEFAULT 0,   -- automatic retries scheduled so far
  response_code    INTEGER,
  created_at       TEXT NOT NULL,
  delivered_at     TEXT,
  last_attempt_at  TEXT,
  next_retry_at    TEXT,                         -- the automatic schedule (shown to clients)
  due_at           TEXT,                         -- the next attempt of any kind (internal)
  manual           INTEGER NOT NULL DEFAULT 0,   -- the queued attempt was asked for (retry/replay)
  locked_until     TEXT
);
CREATE INDEX deliveries_due ON deliveries (due_at) WHERE due_at IS NOT NULL;
CREATE INDEX deliveries_tenant ON deliveries (tenant_id, id);
CREATE INDEX deliveries_tenant_webhook ON deliveries (tenant_id, webhook_id, id);

CREATE TABLE delivery_attempts (
  delivery_id    TEXT NOT NULL REFERENCES deliveries (id),
  attempt        INTEGER NOT NULL,
  tenant_id      TEXT NOT NULL REFERENCES tenants (id),
  at             TEXT NOT NULL,
  trigger        TEXT NOT NULL CHECK (trigger IN ('auto', 'manual')),
  response_code  INTEGER,
  duration_ms    INTEGER NOT NULL,
  error          TEXT,
  response_body  TEXT,                           -- the first 4 KB of the receiver's answer
  PRIMARY KEY (delivery_id, attempt)
);

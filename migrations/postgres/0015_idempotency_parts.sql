-- PostgreSQL twin of migrations/0015_idempotency_parts.sql: the same schema; the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- An Idempotency-Key's answer built a window at a time (a delivery's long attempt log) is kept as
-- its parts, one row per window, each written and read on a turn of its own; `parts` counts them
-- (NULL: the answer is `response`, whole). A part belongs to one claim of its key (`created_at`).
ALTER TABLE idempotency_keys ADD COLUMN parts INTEGER;

CREATE TABLE idempotency_parts (
  key_id      TEXT NOT NULL REFERENCES api_keys (id),
  idem_key    TEXT NOT NULL,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  created_at  TEXT NOT NULL,
  part        INTEGER NOT NULL,
  body        TEXT NOT NULL,
  PRIMARY KEY (key_id, idem_key, created_at, part)
);
CREATE INDEX idempotency_parts_created ON idempotency_parts (created_at);

-- PostgreSQL twin of migrations/0010_dashboard.sql: the same schema; the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- The administration dashboard (CONTRACT §14): one-time sign-in links and the sessions they open.
-- Only hashes of the link and session tokens are stored. tenant_id NULL: the operator (every tenant).
CREATE TABLE dashboard_links (
  token_hash  TEXT PRIMARY KEY,
  role        TEXT NOT NULL CHECK (role IN ('operator', 'tenant')),
  tenant_id   TEXT REFERENCES tenants (id),
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  used_at     TEXT,
  CHECK ((role = 'operator') = (tenant_id IS NULL))
);

CREATE TABLE dashboard_sessions (
  id          TEXT PRIMARY KEY,                 -- ses_…: what logs and rate limits name
  token_hash  TEXT NOT NULL UNIQUE,             -- the cookie's value, hashed
  role        TEXT NOT NULL CHECK (role IN ('operator', 'tenant')),
  tenant_id   TEXT REFERENCES tenants (id),
  created_at  TEXT NOT NULL,
  expires_at  TEXT NOT NULL,
  ended_at    TEXT,                             -- signed out or revoked
  CHECK ((role = 'operator') = (tenant_id IS NULL))
);
CREATE INDEX dashboard_sessions_tenant ON dashboard_sessions (tenant_id);

-- PostgreSQL twin of migrations/0006_endpoint_health.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- Endpoint health (CONTRACT §11): a subscription whose every attempt has failed for
-- --disable-after, or whose receiver answered 410 Gone, is disabled by the delivery worker.
-- failing_since: when the current run of failed attempts began (NULL after a success).
ALTER TABLE webhooks ADD COLUMN failing_since TEXT;
ALTER TABLE webhooks ADD COLUMN disabled_at TEXT;
ALTER TABLE webhooks ADD COLUMN disabled_reason TEXT CHECK (disabled_reason IN ('failing', 'gone'));

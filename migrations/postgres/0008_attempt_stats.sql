-- PostgreSQL twin of migrations/0008_attempt_stats.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- GET /v1/webhooks/stats (CONTRACT §11) reads a tenant's attempts by the time they were made.
CREATE INDEX delivery_attempts_tenant_at ON delivery_attempts (tenant_id, at);

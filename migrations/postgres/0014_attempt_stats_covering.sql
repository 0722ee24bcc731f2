-- PostgreSQL twin of migrations/0014_attempt_stats_covering.sql: the same schema; the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- GET /v1/webhooks/stats reads the attempts of the parts of its edge hours (0013) by (tenant_id, at),
-- and needs only their duration and answer code: with both in the index, PostgreSQL reads them by
-- an index-only scan (pages that vacuum has marked all-visible), not each attempt's row with the
-- receiver's answer in it (up to 4 KB).
DROP INDEX delivery_attempts_tenant_at;
CREATE INDEX delivery_attempts_tenant_at ON delivery_attempts (tenant_id, at, duration_ms, response_code);

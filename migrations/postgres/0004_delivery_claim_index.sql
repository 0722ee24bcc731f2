-- PostgreSQL twin of migrations/0004_delivery_claim_index.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- The delivery worker claims work per subscription (oldest due first within each), so a
-- subscription with a long queue costs one index seek instead of a walk over its queue.
-- The index on due_at alone served the old global claim and has no reader left.
CREATE INDEX deliveries_webhook_due ON deliveries (webhook_id, due_at) WHERE due_at IS NOT NULL;
DROP INDEX deliveries_due;

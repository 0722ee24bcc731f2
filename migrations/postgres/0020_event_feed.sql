-- GET /v1/events/stream (CONTRACT §15) reads the events of a tenant in an order that a commit can
-- never go back before: by the id of the transaction that wrote each, reading only those of
-- transactions older than every one still running (engine/postgres/event-feed.ts). Events
-- written before this migration read as transaction 1: before every later one.
-- A constant default first, so that adding the column rewrites no row of a large table.
ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT '1';
ALTER TABLE events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
CREATE INDEX events_tenant_tx ON events (tenant_id, tx, id);

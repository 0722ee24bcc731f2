-- Nothing to do on SQLite: GET /v1/events/stream reads events in the order of their ids, which on
-- SQLite is the order they committed in (one writer; ids made inside its transactions increase).
-- On PostgreSQL (migrations/postgres/0020_event_feed.sql) several processes commit in another
-- order than they made ids, so each event records its transaction. The file exists so that
-- schema_migrations reads alike on both engines.
SELECT 1;

-- PostgreSQL twin of migrations/0007_retention.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- Retention (CONTRACT §11): finished deliveries older than --retention are deleted with their
-- attempts, and events with no delivery left with them. The pruner reads finished deliveries
-- by the time they finished, events by age, and checks "no delivery left" per event (which
-- SQLite also does for the foreign key whenever an event row is deleted).
CREATE INDEX deliveries_event ON deliveries (event_id);
CREATE INDEX deliveries_finished ON deliveries (coalesce(last_attempt_at, created_at)) WHERE due_at IS NULL;
CREATE INDEX events_created ON events (created_at);

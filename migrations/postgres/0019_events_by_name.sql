-- PostgreSQL twin of migrations/0019_events_by_name.sql: the events API (CONTRACT §15) lists a
-- tenant's events in id order, optionally filtered by event name, each name one range of this index.
-- Events are never updated, so the index costs one entry per event written and nothing after.
CREATE INDEX events_tenant_name ON events (tenant_id, name, id);

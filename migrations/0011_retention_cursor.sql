-- Retention (CONTRACT §11) walks the expired events that have no delivery in windows of a few
-- hundred, from where the last window stopped: (created_at, id) is that position, and the index
-- serves both the range and the order. It replaces the index on created_at alone.
CREATE INDEX events_created_id ON events (created_at, id);
DROP INDEX events_created;

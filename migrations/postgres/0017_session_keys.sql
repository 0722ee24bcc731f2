-- PostgreSQL twin of migrations/0017_session_keys.sql: the same schema; the same name.
-- Dashboard links and sessions opened from a key's link (POST /v1/dashboard/links, CONTRACT §16)
-- name that key: a session ends when it is revoked or expires, counts against its rate limit and
-- mints nothing beyond its bounds. NULL: a link of `travelops dashboard link` (the operator's).
ALTER TABLE dashboard_links ADD COLUMN key_id TEXT;
ALTER TABLE dashboard_sessions ADD COLUMN key_id TEXT;

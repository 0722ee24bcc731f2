-- PostgreSQL twin of migrations/0017_serve_url.sql: the same name, so schema_migrations reads alike
-- on both engines. On PostgreSQL every `serve` adds its row here once it listens (several may run)
-- and removes it when it stops; `travelops dashboard link` names the newest live one's address.
ALTER TABLE serve_processes ADD COLUMN url TEXT;

-- PostgreSQL twin of migrations/0005_delivery_leases.sql: the same schema (money and counters BIGINT); the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- Leases name their holder: a worker renews only its own claims, and an outcome recorded
-- after another worker took the delivery over does not clear that worker's lease.
ALTER TABLE deliveries ADD COLUMN locked_by TEXT;

-- The `serve` processes using this database. On SQLite one at a time: a second `serve` on the
-- same file finds the first one's row (pid and the kernel's start time of that pid, so a
-- recycled pid is not mistaken for it) and refuses to start.
CREATE TABLE serve_processes (
  id          TEXT PRIMARY KEY,
  pid         INTEGER NOT NULL,
  host        TEXT NOT NULL,
  file        TEXT NOT NULL,               -- the database file as that process opened it (its real path)
  proc_start  TEXT,
  started_at  TEXT NOT NULL
);

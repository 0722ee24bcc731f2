-- Rate limits shared by several `serve` processes (CONTRACT §10): requests per key per hourly
-- window. On SQLite the one `serve` of a file counts in memory and this table stays empty; it
-- exists on both engines so that the schemas (and `db copy`) stay alike.
CREATE TABLE rate_windows (
  key_id     TEXT NOT NULL,
  tenant_id  TEXT NOT NULL REFERENCES tenants (id),
  hour       INTEGER NOT NULL,           -- the window: whole hours since 1970
  count      INTEGER NOT NULL,
  PRIMARY KEY (key_id, hour)
);

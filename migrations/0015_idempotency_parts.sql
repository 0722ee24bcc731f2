-- An Idempotency-Key's answer kept in parts (CONTRACT §2: the first response is stored for 24 h and
-- replayed). An answer built a window at a time (a delivery's long attempt log, src/http/json-stream.ts)
-- can run to hundreds of MB: kept whole in idempotency_keys.response, writing it and reading it back for
-- a replay held SQLite, and with it every tenant's requests, for 0.5 s and 1.1 s at 108 MB, and serve's
-- memory grew by as much (BENCHMARKS.md, twenty-ninth session). Such an answer is kept as its parts, one
-- row per window, each written and read on a turn of its own; `parts` counts them (NULL: the answer is
-- `response`, whole). A part belongs to one claim of its key (`created_at`): a key claimed again writes
-- parts of its own, and the hourly prune deletes parts by their age.
ALTER TABLE idempotency_keys ADD COLUMN parts INTEGER;

CREATE TABLE idempotency_parts (
  key_id      TEXT NOT NULL REFERENCES api_keys (id),
  idem_key    TEXT NOT NULL,
  tenant_id   TEXT NOT NULL REFERENCES tenants (id),
  created_at  TEXT NOT NULL,
  part        INTEGER NOT NULL,
  body        TEXT NOT NULL,
  PRIMARY KEY (key_id, idem_key, created_at, part)
);
CREATE INDEX idempotency_parts_created ON idempotency_parts (created_at);

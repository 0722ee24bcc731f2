-- GET /v1/webhooks/stats (CONTRACT §11) read every attempt of the range: a second per request
-- at a million attempts a day, during which SQLite (one synchronous connection) answered no
-- other tenant. attempt_stats holds the same attempts summed per (tenant, subscription, UTC hour,
-- duration): a row per distinct duration per hour, however many attempts. Every statement that
-- inserts or deletes delivery_attempts rows updates it in the same transaction (the delivery
-- stores, retention), so it always equals the sums over delivery_attempts; stats read it for the
-- whole hours of a range and delivery_attempts only for the parts of the hours at its edges.
-- `hour` is the attempt time's first 13 characters (`2026-11-24T12`), as stats bucket it; `ok`
-- counts the 2xx answers. No foreign keys: the summed rows hold the references, and this table
-- is written on the delivery loop's hottest path.
CREATE TABLE attempt_stats (
  tenant_id    TEXT NOT NULL,
  hour         TEXT NOT NULL,
  webhook_id   TEXT NOT NULL,
  duration_ms  INTEGER NOT NULL,
  n            INTEGER NOT NULL,
  ok           INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, hour, webhook_id, duration_ms)
) WITHOUT ROWID;

-- The attempts already recorded, summed the same way.
INSERT INTO attempt_stats (tenant_id, hour, webhook_id, duration_ms, n, ok)
SELECT a.tenant_id, substr(a.at, 1, 13), d.webhook_id, a.duration_ms, count(*),
  sum(CASE WHEN a.response_code BETWEEN 200 AND 299 THEN 1 ELSE 0 END)
FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
GROUP BY a.tenant_id, substr(a.at, 1, 13), d.webhook_id, a.duration_ms;

-- The deliveries under a lease, for the one statement that looks for them all: serve's start on
-- SQLite (db/delivery-store.ts recover(): one serve per file, so every lease it finds is a previous
-- process's and is freed at once). Without an index that statement read the whole table — every
-- delivery kept, 130–150 ms at 2 M with the file cached, more from disk — before serve could listen
-- (BENCHMARKS.md, twenty-ninth session). Partial: it holds only the deliveries being attempted.
CREATE INDEX deliveries_leased ON deliveries (locked_until) WHERE locked_until IS NOT NULL;

-- PostgreSQL twin of migrations/0012_delivery_event_link.sql. Writes run SERIALIZABLE here, and
-- the foreign key from deliveries to events made concurrent writes fail: its check reads the
-- page of events' primary key that every other new event is inserted into (ids grow with
-- time), so transactions that touch no common row looked to PostgreSQL like a read/write
-- chain, and one in nine of the benchmark's POSTs failed at commit and ran again (BENCHMARKS.md,
-- "PostgreSQL: writes that no longer fail serialization"). The link needs no check: a delivery
-- is only ever inserted by the statement or transaction that inserts its event, and retention
-- deletes only events that have no delivery left.
ALTER TABLE deliveries DROP CONSTRAINT deliveries_event_id_fkey;

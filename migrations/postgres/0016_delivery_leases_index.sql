-- PostgreSQL twin of migrations/0016_delivery_leases_index.sql: the same name, so schema_migrations
-- reads alike on both engines. Nothing to do here: PostgreSQL's delivery store never looks for every
-- lease (several processes share the database, and a dead one's leases simply expire), and an index on
-- locked_until would make each claim, which changes only the lease, an update that is no longer HOT.
SELECT 1;

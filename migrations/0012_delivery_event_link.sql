-- Nothing to do on SQLite: the foreign key from deliveries to events stays. On PostgreSQL
-- (migrations/postgres/0012_delivery_event_link.sql) it is dropped, because there its check made
-- concurrent SERIALIZABLE writes fail; SQLite has one writer, and the check is one lookup in a
-- page the insert has just touched. The file exists so that schema_migrations reads alike on
-- both engines.
SELECT 1;

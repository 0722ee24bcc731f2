-- PostgreSQL twin of migrations/0015_orders_created_in_indexes.sql: the same schema; the same name, so
-- schema_migrations reads alike on both engines. Forward-only, like the SQLite files.
-- Orders' lists filtered by created_after / created_before compare created_at in the index they
-- read (after id, so a list's order is unchanged) instead of in each order's row.
DROP INDEX orders_tenant;
CREATE INDEX orders_tenant ON orders (tenant_id, id, created_at);
DROP INDEX orders_tenant_status;
CREATE INDEX orders_tenant_status ON orders (tenant_id, status, id, created_at);
DROP INDEX orders_tenant_customer;
CREATE INDEX orders_tenant_customer ON orders (tenant_id, customer_id, id, created_at);

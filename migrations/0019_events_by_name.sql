-- The events API (CONTRACT §15) lists a tenant's events in id order, newest or oldest first,
-- optionally filtered by event name: (tenant_id, name, id) is one index range in id order per name
-- (several names: a range each, merged by src/modules/events/repo.ts). The unfiltered list reads
-- events_tenant (tenant_id, id). One more index entry per event written, measured in the commit.
CREATE INDEX events_tenant_name ON events (tenant_id, name, id);

-- GET /v1/webhooks/stats (CONTRACT §11) reads a tenant's attempts by the time they were made.
CREATE INDEX delivery_attempts_tenant_at ON delivery_attempts (tenant_id, at);

-- The address each `serve` listens at, recorded once it listens, so that `travelops dashboard
-- link` names the running server's address (CONTRACT §16) rather than a default port.
ALTER TABLE serve_processes ADD COLUMN url TEXT;

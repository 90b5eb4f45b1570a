-- +goose Up
-- The rows a start-up recovers (owned by internal/gateway): pending rows by
-- the process that wrote them. A start reads only this index, whatever the
-- statistics say: with statistics that show almost no row pending, SQLite
-- otherwise chose to read the whole audit table on every start.
CREATE INDEX idx_mutation_audit_pending_owner ON mutation_audit(owner) WHERE status = 'pending';

-- +goose Down
DROP INDEX idx_mutation_audit_pending_owner;

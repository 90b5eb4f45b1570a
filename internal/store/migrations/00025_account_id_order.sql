-- +goose Up
-- The account's rows in id order (owned by internal/gateway): the audit
-- page as it opens (newest first, 100 rows) and the exports (oldest first,
-- every row) read them straight from these indexes, with no sort and no
-- dependence on statistics. Before, a database without statistics
-- answered the page by reading every row of the account through another
-- index that starts with account_id, and sorting them.
CREATE INDEX idx_mutation_audit_account ON mutation_audit(account_id, id);
CREATE INDEX idx_approval_account ON approval_queue(account_id, id);
-- The unresolved outcomes, newest first, for their list: the partial index
-- on them is keyed by tool and parameters for the duplicate check.
CREATE INDEX idx_mutation_audit_unresolved_order ON mutation_audit(account_id, id)
    WHERE status IN ('unknown', 'interrupted') AND resolution IS NULL;

-- +goose Down
DROP INDEX idx_mutation_audit_unresolved_order;
DROP INDEX idx_approval_account;
DROP INDEX idx_mutation_audit_account;

-- +goose Up
-- How many items wait for approval, per account, tool and caller (owned
-- by internal/gateway). Triggers keep it, so a review page reads its
-- filter counts in a few rows instead of counting the whole queue; an
-- item that expired while still marked pending is subtracted when read,
-- through the partial index on pending rows' expiry. It leaves out the
-- account on purpose: SQLite, without statistics, would otherwise prefer
-- it to the index on intent keys for the duplicate check of every call.
CREATE TABLE approval_pending_counts (
    account_id TEXT NOT NULL,
    tool_name  TEXT NOT NULL,
    caller     TEXT NOT NULL,
    n          INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, tool_name, caller)
);
INSERT INTO approval_pending_counts (account_id, tool_name, caller, n)
    SELECT account_id, tool_name, caller, count(*) FROM approval_queue WHERE status = 'pending' GROUP BY account_id, tool_name, caller;
CREATE INDEX idx_approval_pending_expiry ON approval_queue(expires_at) WHERE status = 'pending';
-- +goose StatementBegin
CREATE TRIGGER approval_pending_insert AFTER INSERT ON approval_queue WHEN NEW.status = 'pending'
BEGIN
    INSERT INTO approval_pending_counts (account_id, tool_name, caller, n) VALUES (NEW.account_id, NEW.tool_name, NEW.caller, 1)
        ON CONFLICT (account_id, tool_name, caller) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER approval_pending_update AFTER UPDATE OF account_id, tool_name, caller, status ON approval_queue
WHEN (OLD.status = 'pending' OR NEW.status = 'pending')
    AND (OLD.status != NEW.status OR OLD.account_id != NEW.account_id OR OLD.tool_name != NEW.tool_name OR OLD.caller != NEW.caller)
BEGIN
    UPDATE approval_pending_counts SET n = n - 1
        WHERE OLD.status = 'pending' AND account_id = OLD.account_id AND tool_name = OLD.tool_name AND caller = OLD.caller;
    INSERT INTO approval_pending_counts (account_id, tool_name, caller, n) SELECT NEW.account_id, NEW.tool_name, NEW.caller, 1
        WHERE NEW.status = 'pending'
        ON CONFLICT (account_id, tool_name, caller) DO UPDATE SET n = n + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER approval_pending_delete AFTER DELETE ON approval_queue WHEN OLD.status = 'pending'
BEGIN
    UPDATE approval_pending_counts SET n = n - 1
        WHERE account_id = OLD.account_id AND tool_name = OLD.tool_name AND caller = OLD.caller;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER approval_pending_delete;
DROP TRIGGER approval_pending_update;
DROP TRIGGER approval_pending_insert;
DROP INDEX idx_approval_pending_expiry;
DROP TABLE approval_pending_counts;

-- +goose Up
CREATE TABLE action_log (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  TEXT NOT NULL DEFAULT 'default',
    action_type TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'success',
    message     TEXT NOT NULL DEFAULT '',
    metadata    TEXT NOT NULL DEFAULT '{}',
    created_at  TEXT NOT NULL
);
CREATE INDEX idx_action_log_created ON action_log(created_at);
CREATE INDEX idx_action_log_type ON action_log(action_type, created_at);

CREATE TABLE mutation_audit (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    correlation_id  TEXT NOT NULL UNIQUE,
    idempotency_key TEXT,
    tool_name       TEXT NOT NULL,
    params_hash     TEXT NOT NULL,
    params_summary  TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending',
    result_summary  TEXT,
    result_json     TEXT,
    error_code      TEXT,
    error_message   TEXT,
    rollback_action TEXT,
    elapsed_ms      INTEGER,
    account_id      TEXT NOT NULL DEFAULT 'default',
    caller          TEXT NOT NULL DEFAULT 'mcp',
    loop_name       TEXT NOT NULL DEFAULT '',
    approval_id     INTEGER,
    duplicate_of    TEXT,
    owner           TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    completed_at    TEXT
);
CREATE INDEX idx_mutation_audit_hash ON mutation_audit(account_id, tool_name, params_hash, created_at);
CREATE INDEX idx_mutation_audit_key ON mutation_audit(account_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX idx_mutation_audit_created ON mutation_audit(created_at);
CREATE INDEX idx_mutation_audit_status ON mutation_audit(status);

CREATE TABLE approval_queue (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id      TEXT NOT NULL DEFAULT 'default',
    tool_name       TEXT NOT NULL,
    params_json     TEXT NOT NULL,
    original_params TEXT NOT NULL,
    params_hash     TEXT NOT NULL,
    matched_rule_id TEXT NOT NULL DEFAULT '',
    reason          TEXT NOT NULL DEFAULT '',
    caller          TEXT NOT NULL DEFAULT 'mcp',
    loop_name       TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'pending',
    created_at      TEXT NOT NULL,
    expires_at      TEXT NOT NULL,
    reviewed_at     TEXT,
    reviewed_by     TEXT,
    review_notes    TEXT,
    correlation_id  TEXT,
    result_json     TEXT,
    error_code      TEXT,
    error_message   TEXT
);
CREATE INDEX idx_approval_status ON approval_queue(account_id, status, created_at);

CREATE TABLE policy_counters (
    account_id     TEXT NOT NULL,
    key            TEXT NOT NULL,
    dimension      TEXT NOT NULL,
    match_value    TEXT NOT NULL DEFAULT '',
    max_value      REAL NOT NULL,
    period_seconds INTEGER NOT NULL,
    used           REAL NOT NULL DEFAULT 0,
    window_start   TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
);

CREATE TABLE x_api_usage (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id  TEXT NOT NULL DEFAULT 'default',
    endpoint    TEXT NOT NULL,
    method      TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    items       INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);
CREATE INDEX idx_x_api_usage_created ON x_api_usage(account_id, created_at);

CREATE TABLE llm_usage (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    provider      TEXT NOT NULL,
    model         TEXT NOT NULL,
    operation     TEXT NOT NULL DEFAULT '',
    input_tokens  INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd      REAL NOT NULL DEFAULT 0,
    created_at    TEXT NOT NULL
);
CREATE INDEX idx_llm_usage_created ON llm_usage(created_at);

-- +goose Down
DROP TABLE llm_usage;
DROP TABLE x_api_usage;
DROP TABLE policy_counters;
DROP TABLE approval_queue;
DROP TABLE mutation_audit;
DROP TABLE action_log;

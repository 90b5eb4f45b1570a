-- +goose Up
-- policy_counters kept nanosecond times (2006-01-02T15:04:05.000000000Z)
-- while every other table keeps milliseconds (2006-01-02T15:04:05.000Z).
-- The window expiry compares them as text, so they take the one format;
-- cutting to the millisecond moves a window's start by under 1 ms.
UPDATE policy_counters SET window_start = substr(window_start, 1, 23) || 'Z' WHERE length(window_start) = 30;
UPDATE policy_counters SET updated_at = substr(updated_at, 1, 23) || 'Z' WHERE length(updated_at) = 30;

-- +goose Down
UPDATE policy_counters SET window_start = substr(window_start, 1, 23) || '000000Z' WHERE length(window_start) = 24;
UPDATE policy_counters SET updated_at = substr(updated_at, 1, 23) || '000000Z' WHERE length(updated_at) = 24;

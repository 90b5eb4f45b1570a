package store

import (
	"database/sql"
	"fmt"
)

// RowFunc receives one row of a streamed read: the column names (the same
// slice every call) and the row's values (reused by the next call; copy
// what must outlive it). A non-nil error stops the read.
type RowFunc func(cols []string, vals []any) error

// Stream hands each row of rows to emit as it is read, so a read of any
// size holds one row at a time. It closes rows. Values come as the driver
// gives them: int64, float64, string, []byte, time.Time, bool or nil.
func Stream(rows *sql.Rows, emit RowFunc) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return fmt.Errorf("read columns: %w", err)
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("read row: %w", err)
		}
		if err := emit(cols, vals); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read rows: %w", err)
	}
	return nil
}

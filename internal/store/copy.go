package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Copy moves a whole tuitbot database into another, of either dialect:
// every row of every table but the homes it is bound to, ids included, and
// the database's identity, in
// one transaction of dst. dst must be opened (so migrated) and hold no
// rows yet. After copying it compares every table's row count on both
// sides and fails (leaving dst untouched) on any difference. It returns
// the rows copied per table. Nothing else may write to src meanwhile:
// stop every tuitbot process using it first.
func Copy(ctx context.Context, src, dst *DB) (map[string]int64, error) {
	all, _, err := expectedSchema(src.Dialect)
	if err != nil {
		return nil, err
	}
	// The homes a database is bound to stay with it: the copy is bound by
	// the home that opens it next (a host of a shared PostgreSQL database,
	// or the home a file is imported into).
	// A table the triggers of another keep is rebuilt as that one is
	// copied: copying it too would count every row twice.
	tables := slices.DeleteFunc(all, func(t string) bool { return t == "db_homes" || triggerKept[t] })
	counts := map[string]int64{}
	err = dst.Tx(ctx, func(tx *sql.Tx) error {
		for _, t := range tables {
			var n int64
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
				return fmt.Errorf("count %s in the target: %w", t, err)
			}
			if t == "db_identity" {
				// The target's own identity gives way to the source's:
				// it is the same database, moved.
				if _, err := tx.ExecContext(ctx, `DELETE FROM db_identity`); err != nil {
					return fmt.Errorf("replace the target's identity: %w", err)
				}
			} else if n > 0 {
				return fmt.Errorf("the target database already has %d rows in %s; copy only into a new, empty database", n, t)
			}
			copied, err := copyTable(ctx, src, dst, tx, t)
			if err != nil {
				return fmt.Errorf("copy %s: %w", t, err)
			}
			counts[t] = copied
		}
		for _, t := range tables {
			var want, got int64
			if err := src.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&want); err != nil {
				return fmt.Errorf("check %s: %w", t, err)
			}
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&got); err != nil {
				return fmt.Errorf("check %s: %w", t, err)
			}
			if want != got || got != counts[t] {
				return fmt.Errorf("check %s: the source has %d rows, the target %d after copying %d; the source changed while copying or a row was refused", t, want, got, counts[t])
			}
		}
		if dst.Dialect == Postgres {
			return resetIdentities(ctx, tx, tables)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var id string
	if err := dst.QueryRowContext(ctx, `SELECT id FROM db_identity WHERE singleton = 1`).Scan(&id); err != nil {
		return nil, fmt.Errorf("read the copied identity: %w", err)
	}
	dst.ID = id
	if err := dst.Analyze(ctx); err != nil {
		return nil, err
	}
	if dst.Dialect == SQLite {
		// The identity file beside a SQLite database must name it, or the
		// next open would take the copy for a replaced database.
		if err := writeFileAtomic(IdentityPath(dst.Path), []byte(id+"\n")); err != nil {
			return nil, fmt.Errorf("write database identity: %w", err)
		}
	}
	return counts, nil
}

// triggerKept are the tables that triggers keep from other tables' rows.
var triggerKept = map[string]bool{"approval_pending_counts": true}

// copyTable copies table t row by row, converting each value to what the
// target's column takes.
func copyTable(ctx context.Context, src, dst *DB, tx *sql.Tx, t string) (int64, error) {
	kinds, err := columnKinds(ctx, dst, tx, t)
	if err != nil {
		return 0, err
	}
	rows, err := src.QueryContext(ctx, `SELECT * FROM `+t)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	for _, c := range cols {
		if _, ok := kinds[strings.ToLower(c)]; !ok {
			return 0, fmt.Errorf("column %s is missing in the target", c)
		}
	}
	insert := `INSERT INTO ` + t + ` (` + strings.Join(cols, ", ") + `) VALUES (?` + strings.Repeat(", ?", len(cols)-1) + `)`
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var n int64
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return n, err
		}
		args := make([]any, len(cols))
		for i, v := range vals {
			if args[i], err = convert(v, kinds[strings.ToLower(cols[i])]); err != nil {
				return n, fmt.Errorf("column %s: %w", cols[i], err)
			}
		}
		if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
			return n, err
		}
		n++
	}
	return n, rows.Err()
}

// Column kinds, as the two dialects' schemas use them.
const (
	kindText = "text"
	kindInt  = "int"
	kindReal = "real"
)

func columnKinds(ctx context.Context, dst *DB, tx *sql.Tx, t string) (map[string]string, error) {
	q := `SELECT name, type FROM pragma_table_info(?)`
	if dst.Dialect == Postgres {
		q = `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ?`
	}
	rows, err := tx.QueryContext(ctx, q, t)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, err
		}
		typ = strings.ToLower(typ)
		switch {
		case strings.Contains(typ, "int"):
			out[strings.ToLower(name)] = kindInt
		case strings.Contains(typ, "real"), strings.Contains(typ, "double"), strings.Contains(typ, "numeric"):
			out[strings.ToLower(name)] = kindReal
		default:
			out[strings.ToLower(name)] = kindText
		}
	}
	return out, rows.Err()
}

// convert turns a value read from either dialect into one the target
// column takes: SQLite may keep a number in a text column and the other
// way round, PostgreSQL's columns take only their own type.
func convert(v any, kind string) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		v = string(x)
	}
	switch kind {
	case kindText:
		switch x := v.(type) {
		case string:
			return x, nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		case float64:
			return strconv.FormatFloat(x, 'g', -1, 64), nil
		case bool:
			return strconv.FormatBool(x), nil
		}
	case kindInt:
		switch x := v.(type) {
		case int64:
			return x, nil
		case float64:
			return int64(x), nil
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case string:
			return strconv.ParseInt(x, 10, 64)
		}
	case kindReal:
		switch x := v.(type) {
		case float64:
			return x, nil
		case int64:
			return float64(x), nil
		case string:
			return strconv.ParseFloat(x, 64)
		}
	}
	return nil, fmt.Errorf("a %T value does not fit a %s column", v, kind)
}

// resetIdentities moves every id sequence past the copied ids, so the
// next row PostgreSQL numbers does not collide with one copied.
func resetIdentities(ctx context.Context, tx *sql.Tx, tables []string) error {
	for _, t := range tables {
		// No row for a table without an id column (an error would abort
		// the transaction).
		var seq sql.NullString
		err := tx.QueryRowContext(ctx, `SELECT pg_get_serial_sequence(?1, 'id') FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name = ?1 AND column_name = 'id'`, t).Scan(&seq)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && !seq.Valid) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reset the ids of %s: %w", t, err)
		}
		if _, err := tx.ExecContext(ctx, `SELECT setval(?::regclass, COALESCE((SELECT max(id) FROM `+t+`), 0) + 1, false)`, seq.String); err != nil {
			return fmt.Errorf("reset the ids of %s: %w", t, err)
		}
	}
	return nil
}

package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
)

// AcceptNewDatabaseFlag is the command-line flag that lets a home with
// history adopt a new or different database.
const AcceptNewDatabaseFlag = "--accept-new-database"

// IdentityPath is the file beside the database that remembers which
// database this home uses.
func IdentityPath(dbPath string) string { return dbPath + ".id" }

// LockPath is the file locked while a process opens (and migrates) or
// closes the database.
func LockPath(dbPath string) string { return dbPath + ".lock" }

// InUsePath is the file every process with the database open holds a shared
// lock on.
func InUsePath(dbPath string) string { return dbPath + ".inuse" }

// IdentityError says the database at Path is not the one this home used:
// it is new or empty although the home has history, or it carries another
// identity. Opening it would forget earlier posts, so repeats could no
// longer be recognised.
type IdentityError struct {
	Path   string
	Reason string
	// Fix is what to do about it; empty means put the original back or
	// start over with --accept-new-database.
	Fix string
}

func (e *IdentityError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "put the original database back (copies are in the backups folder beside it), or run with " + AcceptNewDatabaseFlag + " to start over with this one"
	}
	return fmt.Sprintf("database %s: %s. This home's earlier posts, approvals and limits are not in it, so tuitbot refuses to use it: %s",
		e.Path, e.Reason, fix)
}

// identityPlan is what Open decided about the database's identity before
// migrating it.
type identityPlan struct {
	id string
	// insert means the database has no identity row yet.
	insert bool
	// note explains an adoption for the log; empty when nothing changed.
	note string
}

// planIdentity compares the database with the identity file and the home's
// history. It runs before migrations, so a replaced database is refused
// before anything is written to it.
func (d *DB) planIdentity(ctx context.Context, opts Options) (identityPlan, error) {
	hasTables, dbID, err := d.inspect(ctx)
	if err != nil {
		return identityPlan{}, err
	}
	idPath := IdentityPath(d.Path)
	fileID, fileExists, err := readIdentityFile(idPath)
	if err != nil {
		return identityPlan{}, err
	}
	history := homeHistory(d.Path, opts)
	switch {
	case dbID != "" && (!fileExists || fileID == dbID):
		note := ""
		if !fileExists {
			note = "identity file was missing; rewritten from the database"
		}
		return identityPlan{id: dbID, note: note}, nil
	case dbID != "":
		if !opts.AcceptNew {
			return identityPlan{}, &IdentityError{Path: d.Path, Reason: fmt.Sprintf("it has identity %s, but this home's database was %s (%s); the database was replaced", dbID, describeID(fileID), filepath.Base(idPath))}
		}
		return identityPlan{id: dbID, note: "accepted a database with another identity (" + AcceptNewDatabaseFlag + ")"}, nil
	case d.createdAside && dbID == "":
		// Created by this open in a home with no history.
		return identityPlan{id: uuid.NewString(), insert: true}, nil
	case hasTables && !fileExists:
		// A database from before identities existed: adopt it.
		return identityPlan{id: uuid.NewString(), insert: true, note: "identity assigned to an existing database"}, nil
	case hasTables:
		if !opts.AcceptNew {
			return identityPlan{}, &IdentityError{Path: d.Path, Reason: fmt.Sprintf("it has no identity, but this home's database was %s (%s); the database was replaced", describeID(fileID), filepath.Base(idPath))}
		}
		return identityPlan{id: uuid.NewString(), insert: true, note: "accepted a database without identity (" + AcceptNewDatabaseFlag + ")"}, nil
	case history != "":
		if !opts.AcceptNew {
			return identityPlan{}, &IdentityError{Path: d.Path, Reason: fmt.Sprintf("it is new or empty, but this home has been used before (%s exists)", history)}
		}
		return identityPlan{id: uuid.NewString(), insert: true, note: "started a new database in a home with history (" + AcceptNewDatabaseFlag + ")"}, nil
	default:
		return identityPlan{id: uuid.NewString(), insert: true}, nil
	}
}

// homeHistory names a file showing that the home has been used before: the
// identity file, the home's home.id, or one of opts.HistoryFiles. Empty
// means a fresh home.
func homeHistory(dbPath string, opts Options) string {
	for _, h := range append([]string{IdentityPath(dbPath), opts.HomeIDFile}, opts.HistoryFiles...) {
		if h == "" {
			continue
		}
		if _, err := os.Stat(h); err == nil {
			return filepath.Base(h)
		}
	}
	return ""
}

// refuseEmpty refuses a missing or 0-byte database in a home with history
// before anything creates or writes it, so the user's file stays exactly as
// it was.
func refuseEmpty(path string, opts Options) error {
	st, err := os.Stat(path)
	if !errors.Is(err, fs.ErrNotExist) && (err != nil || st.Size() > 0) {
		return nil
	}
	if h := homeHistory(path, opts); h != "" && !opts.AcceptNew {
		return &IdentityError{Path: path, Reason: fmt.Sprintf("it is new or empty, but this home has been used before (%s exists)", h)}
	}
	return nil
}

func describeID(id string) string {
	if id == "" {
		return "unreadable"
	}
	return id
}

// inspect reports whether the database holds any tuitbot table and the
// identity it carries, if any.
func (d *DB) inspect(ctx context.Context) (hasTables bool, id string, err error) {
	var tables, identity int
	err = d.QueryRowContext(ctx, `SELECT
		count(*) FILTER (WHERE name NOT IN ('goose_db_version', 'sqlite_sequence')),
		count(*) FILTER (WHERE name = 'db_identity')
		FROM sqlite_master WHERE type = 'table'`).Scan(&tables, &identity)
	if err != nil {
		return false, "", fmt.Errorf("database %s: read schema: %w", d.Path, err)
	}
	if identity == 0 {
		return tables > 0, "", nil
	}
	err = d.QueryRowContext(ctx, `SELECT id FROM db_identity WHERE singleton = 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return tables > 0, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("database %s: read identity: %w", d.Path, err)
	}
	return true, id, nil
}

// readIdentityFile returns the id kept in an id file: the database's
// beside it, or the home's home.id. A file that exists but holds no
// plausible id still counts as history.
func readIdentityFile(path string) (id string, exists bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read %s: %w", path, err)
	}
	id = strings.TrimSpace(string(b))
	if uuid.Validate(id) != nil {
		return "", true, nil
	}
	return id, true, nil
}

// applyIdentity records the planned identity in the database (when it has
// none yet) and in the file beside it, then reads both back.
func (d *DB) applyIdentity(ctx context.Context, p identityPlan, created string) error {
	if p.insert {
		if _, err := d.ExecContext(ctx, `INSERT INTO db_identity (singleton, id, created_at) VALUES (1, ?, ?)
			ON CONFLICT (singleton) DO UPDATE SET id = excluded.id, created_at = excluded.created_at`, p.id, created); err != nil {
			return fmt.Errorf("database %s: write identity: %w", d.Path, err)
		}
	}
	idPath := IdentityPath(d.Path)
	if fileID, _, err := readIdentityFile(idPath); err != nil || fileID != p.id {
		if err := writeFileAtomic(idPath, []byte(p.id+"\n")); err != nil {
			return fmt.Errorf("write database identity %s: %w", idPath, err)
		}
	}
	_, got, err := d.inspect(ctx)
	if err != nil {
		return err
	}
	if got != p.id {
		return &IdentityError{Path: d.Path, Reason: fmt.Sprintf("its identity changed while opening (%s, want %s)", describeID(got), p.id)}
	}
	d.ID = p.id
	return nil
}

// writeFileAtomic replaces path with data, so a reader never sees half a
// file.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// homePlan is what Open decided about binding the database to the home.
type homePlan struct {
	// file is the home.id path; empty leaves the database unbound.
	file string
	id   string
	// writeFile means home.id is missing or unreadable and gets id.
	writeFile bool
	// bind records id in db_homes; rebind first removes the other homes
	// (SQLite, with --accept-new-database).
	bind, rebind bool
	note         string
}

// planHome reads the home's id (a random id in a file of the home
// directory, never beside the database, so a database copied from another
// home with its identity file does not bring it along) and, for SQLite, compares it with the homes
// the database is bound to. It runs before migrations, so a database of
// another home is refused before anything is written to it. A database
// bound to no home yet (new, or from before homes were recorded) is bound
// to this one.
func (d *DB) planHome(ctx context.Context, opts Options) (homePlan, error) {
	if opts.HomeIDFile == "" {
		return homePlan{}, nil
	}
	id, exists, err := readIdentityFile(opts.HomeIDFile)
	if err != nil {
		return homePlan{}, err
	}
	p := homePlan{file: opts.HomeIDFile, id: id, bind: true}
	if id == "" {
		p.id, p.writeFile = uuid.NewString(), true
	}
	if d.Dialect == Postgres {
		// Hosts join a shared database by starting on it: each is recorded,
		// none refused (see openPostgres).
		return p, nil
	}
	homes, err := d.boundHomes(ctx)
	if err != nil {
		return homePlan{}, err
	}
	switch {
	case len(homes) == 0:
		if p.writeFile {
			p.note = "this home had no " + filepath.Base(p.file) + "; wrote one and bound the database to it"
		}
		return p, nil
	case slices.Contains(homes, id):
		p.bind = false
		return p, nil
	case !opts.AcceptNew:
		this := fmt.Sprintf("this home is %s (%s)", id, opts.HomeIDFile)
		switch {
		case !exists:
			this = fmt.Sprintf("this home has no %s", opts.HomeIDFile)
		case id == "":
			this = fmt.Sprintf("this home's %s is unreadable", opts.HomeIDFile)
		}
		return homePlan{}, &IdentityError{Path: d.Path,
			Reason: fmt.Sprintf("it belongs to another tuitbot home (home id %s), and %s; it was copied from another home", strings.Join(homes, ", "), this),
			Fix: "put this home's own database back (copies are in the backups folder beside it), or run with " + AcceptNewDatabaseFlag +
				" to bind this database to this home and go on from the history it holds"}
	default:
		p.rebind = true
		p.note = "bound a database of another home (" + strings.Join(homes, ", ") + ") to this one (" + AcceptNewDatabaseFlag + ")"
		return p, nil
	}
}

// boundHomes lists the homes the database is bound to; none when the
// table does not exist yet (a database from before homes were recorded).
func (d *DB) boundHomes(ctx context.Context) ([]string, error) {
	var n int
	if err := d.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'db_homes'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("database %s: read schema: %w", d.Path, err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := d.QueryContext(ctx, `SELECT home_id FROM db_homes ORDER BY home_id`)
	if err != nil {
		return nil, fmt.Errorf("database %s: read its homes: %w", d.Path, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("database %s: read its homes: %w", d.Path, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("database %s: read its homes: %w", d.Path, err)
	}
	return out, nil
}

// applyHome writes home.id when it is missing, then records the home in
// the database. The file comes first: a binding whose id was never written
// would refuse the home's next start.
func (d *DB) applyHome(ctx context.Context, p homePlan, now string) error {
	if p.file == "" {
		return nil
	}
	if p.writeFile {
		if err := os.MkdirAll(filepath.Dir(p.file), 0o700); err != nil {
			return fmt.Errorf("write %s: %w", p.file, err)
		}
		if err := writeFileAtomic(p.file, []byte(p.id+"\n")); err != nil {
			return fmt.Errorf("write %s: %w", p.file, err)
		}
	}
	if p.rebind {
		if _, err := d.ExecContext(ctx, `DELETE FROM db_homes WHERE home_id <> ?`, p.id); err != nil {
			return fmt.Errorf("database %s: bind it to this home: %w", d.Path, err)
		}
	}
	if p.bind {
		host, _ := os.Hostname()
		if _, err := d.ExecContext(ctx, `INSERT INTO db_homes (home_id, host, bound_at) VALUES (?, ?, ?) ON CONFLICT (home_id) DO NOTHING`,
			p.id, host, now); err != nil {
			return fmt.Errorf("database %s: bind it to this home: %w", d.Path, err)
		}
	}
	d.HomeID = p.id
	return nil
}

// joinNotes joins the non-empty notes for the log.
func joinNotes(notes ...string) string {
	var out []string
	for _, n := range notes {
		if n != "" {
			out = append(out, n)
		}
	}
	return strings.Join(out, "; ")
}

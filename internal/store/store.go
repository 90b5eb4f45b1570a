// Package store opens tuitbot's SQLite database and runs its embedded
// migrations. Repositories for the workflow packages live beside it.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver; pure Go, so the binary stays CGO-free
)

//go:embed migrations/*.sql
var migrations embed.FS

// TimeFormat is how every timestamp is stored: UTC, fixed width, so string
// order is time order.
const TimeFormat = "2006-01-02T15:04:05.000Z"

// FormatTime renders t for storage.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeFormat) }

// ParseTime reads a stored timestamp.
func ParseTime(s string) (time.Time, error) { return time.Parse(TimeFormat, s) }

// DB is the opened database.
type DB struct {
	*sql.DB
	// Path is the SQLite file, or for PostgreSQL the server's URL without
	// its password.
	Path string
	// Dialect is the database's SQL dialect.
	Dialect Dialect
	// BackupPath is set when Open backed the file up before migrating.
	BackupPath string
	// FromBaseline is set when Open created the schema of a new database
	// from the baseline instead of running the migrations one by one.
	FromBaseline bool
	// StatisticsDeferred is set when Open, asked to (DeferStatistics),
	// left the statistics it gathers at open to the caller's Analyze.
	StatisticsDeferred bool
	// createdAside is set when Open created the database (see
	// createAside): it has the baseline schema and no identity yet.
	createdAside bool
	// ID is the database's identity, also kept in IdentityPath(Path).
	ID string
	// HomeID is the id of the home that opened the database (its
	// home.id); empty when opened without one (Options.HomeIDFile).
	HomeID string
	// IdentityNote says how the identity was adopted or repaired, or the
	// database bound to the home, at open, for the log; empty when nothing
	// changed.
	IdentityNote string

	reserveBytes int64
	// pin keeps one connection open for the DB's life, from a pool of its
	// own (see openPin); files are the database, WAL and shared-memory
	// files as they were at open.
	pin   *sql.Conn
	pinDB *sql.DB
	files map[string]os.FileInfo
	// shm is held open to read the wal-index header (see checkWAL). It
	// stays open until SQLite has closed the database: closing any
	// descriptor of -shm drops every POSIX lock this process holds on it,
	// SQLite's included. That is also why a process opens a database only
	// once.
	shm *os.File
	// wal is held open too, so a check reads the WAL without opening it
	// (CheckFiles first makes sure the path still names this file).
	// SQLite takes no locks on -wal, so holding it costs none of theirs.
	wal *os.File
	// walTries is how often checkWAL compares without a lock; walMu
	// serialises its locked comparison on the pinned connection.
	walTries int
	walMu    sync.Mutex
	// inUse releases this handle's shared lock on InUsePath.
	inUse func()
	stmts prepared
	// writes queues this process's write transactions on SQLite (see
	// writeGate); nil on PostgreSQL. busyWait is the connections' busy
	// timeout, which a write transaction's BEGIN waits in steps of its own.
	writes   writeGate
	busyWait time.Duration
}

// Options controls Open.
type Options struct {
	// BackupDir receives a copy of a non-empty database before migrations
	// change it; empty means a "backups" folder beside the database.
	BackupDir string
	Now       func() time.Time
	// HistoryFiles are files whose presence shows the home has been used
	// (the OAuth token file): a new or empty database there is refused.
	HistoryFiles []string
	// AcceptNew lets a home with history start over with a new or
	// different database, and binds a database of another home to this
	// one (--accept-new-database).
	AcceptNew bool
	// HomeIDFile is the home's own id file (home.id in the home
	// directory, never beside the database). Open writes it when missing
	// and binds the database to the home: a SQLite database bound to
	// another home is refused. Empty opens the database unbound, as a
	// copy's source or target is.
	HomeIDFile string
	// ReserveBytes is the size of the spare file kept beside the database
	// so that audit completions fit on a full disk; 0 means
	// DefaultReserveBytes and a negative value disables it.
	ReserveBytes int64
	// Pragmas are extra per-connection pragmas such as "max_page_count(64)"
	// (tests use it to fill the database up).
	Pragmas []string
	// DeferStatistics leaves the statistics gathered at open (see
	// optimizeAtOpen) to the caller, who runs Analyze when no one waits
	// (a server, after its first answer); StatisticsDeferred says whether
	// there were any to gather.
	DeferStatistics bool
}

// Open opens (creating if needed) the database at path, applies the pragmas,
// checks the database's identity against the home, backs up a non-empty
// database that has pending migrations, migrates and checks the schema.
// Concurrent opens of one database are serialised by a lock file beside
// it, so two processes starting together never migrate at the same time.
//
// A path that is a postgres:// URL (storage.database_url) opens that
// PostgreSQL database instead; see openPostgres.
func Open(ctx context.Context, path string, opts Options) (*DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if IsPostgresURL(path) {
		return openPostgres(ctx, path, opts)
	}
	if opts.ReserveBytes == 0 {
		opts.ReserveBytes = DefaultReserveBytes
	}
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("database path is empty; set storage.db_path or TUITBOT_HOME")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("database path %s is a directory; set storage.db_path to a file", path)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create database directory %s: %w", dir, err)
	}
	release, err := lockPath(ctx, LockPath(path))
	if err != nil {
		return nil, err
	}
	defer release()
	if err := refuseEmpty(path, opts); err != nil {
		return nil, err
	}
	createdAside := createAside(path, opts)
	if err := checkWritable(path); err != nil {
		return nil, err
	}
	if err := checkSidecars(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(path, opts.Pragmas))
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	// One writer at a time is SQLite's model; a small pool still lets reads
	// run beside a write under WAL.
	db.SetMaxOpenConns(5)
	d := &DB{DB: db, Path: path, Dialect: SQLite, reserveBytes: opts.ReserveBytes, walTries: walCheckTries,
		writes: newWriteGate(), busyWait: 10 * time.Second, FromBaseline: createdAside, createdAside: createdAside}
	if err := d.open(ctx, opts); err != nil {
		d.closeLocked()
		return nil, err
	}
	if d.inUse, err = lockShared(InUsePath(path)); err != nil {
		d.closeLocked()
		return nil, err
	}
	// Best effort: on a full disk the database still opens for reading;
	// the gateway refuses to send while the reserve is missing.
	_ = d.EnsureReserve()
	return d, nil
}

// checkSidecars refuses to open a database whose -wal or -shm is missing
// while another process has it open. SQLite removes them only when the last
// connection closes, so they were deleted by hand: opening now would give
// this process a view without the other process's recent writes, and a
// repeated call would pass as new. Once every process has stopped (the
// last one folds its WAL into the database as it closes), it opens again.
func checkSidecars(path string) error {
	var missing []string
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, filepath.Base(path+suffix))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	busy, err := heldByOthers(InUsePath(path))
	if err != nil || !busy {
		return err
	}
	return fmt.Errorf("database %s: %s deleted while another tuitbot process has the database open; "+
		"opening it now would miss that process's recent writes: stop every tuitbot process, then start again", path, strings.Join(missing, " and "))
}

func (d *DB) open(ctx context.Context, opts Options) error {
	if err := d.openPin(ctx); err != nil {
		return err
	}
	if err := d.verify(ctx); err != nil {
		return err
	}
	plan, err := d.planIdentity(ctx, opts)
	if err != nil {
		return err
	}
	home, err := d.planHome(ctx, opts)
	if err != nil {
		return err
	}
	if err := d.migrate(ctx, opts); err != nil {
		return err
	}
	if d.createdAside {
		if err := d.stampVersions(ctx); err != nil {
			return err
		}
	}
	if err := d.applyIdentity(ctx, plan, FormatTime(opts.Now())); err != nil {
		return err
	}
	if err := d.applyHome(ctx, home, FormatTime(opts.Now())); err != nil {
		return err
	}
	d.IdentityNote = joinNotes(plan.note, home.note)
	if err := d.checkSchema(ctx); err != nil {
		return err
	}
	// A database just created from the baseline has no rows to gather
	// statistics of; its first close gathers them.
	switch {
	case d.FromBaseline:
	case opts.DeferStatistics:
		d.StatisticsDeferred = true
	default:
		d.optimize(ctx, optimizeAtOpen)
	}
	return d.watchFiles(ctx)
}

// The statistics SQLite's planner reads (sqlite_stat1) are gathered as
// SQLite advises: at open for every table that has none or whose size
// changed a lot since (0x10002: all tables, not only those this
// connection used), and again as the process closes the database. Both
// read at most a sample of each index (SQLite sets an analysis limit), so
// they cost milliseconds whatever the size. The hot queries do not depend
// on them (see ReadInOrder), but every other query is planned better.
const (
	optimizeAtOpen  = "PRAGMA optimize=0x10002"
	optimizeAtClose = "PRAGMA optimize"
)

// Analyze gathers the planner's statistics after a bulk change (a copy):
// ANALYZE on PostgreSQL, whose autovacuum would get to it only later, and
// PRAGMA optimize over every table on SQLite.
func (d *DB) Analyze(ctx context.Context) error {
	q := optimizeAtOpen
	if d.Dialect == Postgres {
		q = "ANALYZE"
	}
	if _, err := d.DB.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("gather statistics: %w", err)
	}
	return nil
}

// optimize runs pragma, best effort: a database that cannot be written
// (a full disk) is still opened and closed, only planned with what
// statistics it has.
func (d *DB) optimize(ctx context.Context, pragma string) {
	_, _ = d.DB.ExecContext(ctx, pragma)
}

// openPin opens the connection that keeps the WAL in place (see
// watchFiles). It comes from a pool of its own, whose connections run only
// the busy timeout: the pool's journal-mode and synchronous pragmas each
// read the whole schema, and the pin, which only ever begins transactions,
// would hold that second copy of it for the life of the process. It needs
// neither: it writes nothing, and WAL mode is the database's, kept in its
// header, which the pool's first connection sets.
func (d *DB) openPin(ctx context.Context) error {
	db, err := sql.Open("sqlite", "file:"+uriPath(d.Path)+"?"+busyTimeout)
	if err != nil {
		return fmt.Errorf("open database %s: %w", d.Path, err)
	}
	db.SetMaxOpenConns(1)
	pin, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return d.unreadable(err)
	}
	d.pin, d.pinDB = pin, db
	return nil
}

// Close releases the pinned connection and closes the database. It holds
// the open lock meanwhile, so that a process opening the database never
// sees this one half closed (WAL already removed, in-use lock still held).
func (d *DB) Close() error {
	d.closeStatements()
	if d.Dialect == Postgres {
		return d.DB.Close()
	}
	if release, err := lockPath(context.Background(), LockPath(d.Path)); err == nil {
		defer release()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	d.optimize(ctx, optimizeAtClose)
	cancel()
	return d.closeLocked()
}

// closeLocked closes the database; the caller holds the open lock.
func (d *DB) closeLocked() error {
	if d.pin != nil {
		_ = d.pin.Close()
		_ = d.pinDB.Close()
		d.pin, d.pinDB = nil, nil
	}
	err := d.DB.Close()
	if d.shm != nil {
		_ = d.shm.Close()
		d.shm = nil
	}
	if d.wal != nil {
		_ = d.wal.Close()
		d.wal = nil
	}
	if d.inUse != nil {
		d.inUse()
		d.inUse = nil
	}
	return err
}

// busyTimeout is how long a connection waits for another's lock.
const busyTimeout = "_pragma=busy_timeout(10000)"

func dsn(path string, extra []string) string {
	q := []string{
		"_pragma=journal_mode(WAL)",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
		"_txlock=immediate",
	}
	busy := busyTimeout
	for _, p := range extra {
		if strings.HasPrefix(p, "busy_timeout(") {
			// Of two busy timeouts SQLite would keep the default.
			busy = "_pragma=" + p
			continue
		}
		q = append(q, "_pragma="+p)
	}
	return "file:" + uriPath(path) + "?" + strings.Join(append([]string{busy}, q...), "&")
}

// uriPath escapes what a SQLite URI filename gives meaning to: a '?'
// starts the parameters and a '#' the fragment, so a home named "a#b"
// would open "a" instead; '%' escapes itself.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func checkWritable(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("database %s is not writable; fix its permissions or set storage.db_path: %w", path, err)
		}
		return fmt.Errorf("open database %s: %w", path, err)
	}
	return f.Close()
}

// verify fails clearly on a file that is not a SQLite database.
func (d *DB) verify(ctx context.Context) error {
	var n int
	if err := d.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return d.unreadable(err)
	}
	var mode string
	if err := d.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("database %s: read journal mode: %w", d.Path, err)
	}
	// The busy timeout as the connections have it, Options.Pragmas
	// included.
	var ms int64
	if err := d.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&ms); err != nil {
		return fmt.Errorf("database %s: read busy timeout: %w", d.Path, err)
	}
	d.busyWait = time.Duration(ms) * time.Millisecond
	return nil
}

func (d *DB) unreadable(err error) error {
	if Transient(err) {
		// Another process holds the lock (an exclusive locking mode, a WAL
		// being recovered): nothing is wrong with the file, and the caller
		// may try again.
		return fmt.Errorf("database %s is locked by another process: %w", d.Path, err)
	}
	return fmt.Errorf("database %s cannot be read (%v); it may be corrupt or not a tuitbot database: restore a backup or move it aside", d.Path, err)
}

func (d *DB) migrate(ctx context.Context, opts Options) error {
	if d.Dialect == SQLite {
		return d.migrateSQLite(ctx, opts)
	}
	p, pending, err := d.pendingMigrations(ctx)
	if err != nil || !pending {
		return err
	}
	if err := d.baselinePostgres(ctx); err != nil {
		return fmt.Errorf("database %s: %w", d.Path, err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate database %s: %w", d.Path, err)
	}
	return nil
}

// migrateSQLite migrates a SQLite database; the open lock is held, so no
// other process migrates meanwhile. Most starts find every migration
// applied, which one read of goose's table tells; a new database is
// created from the baseline, which covers every migration of this build.
// Only a database that is neither goes through goose, which backs it up
// first. Asking goose whether anything is pending, and again after the
// baseline, was most of a start's migration work.
func (d *DB) migrateSQLite(ctx context.Context, opts Options) error {
	versions, err := migrationVersions(SQLite)
	if err != nil {
		return err
	}
	current, err := d.appliedAll(ctx, versions)
	if err != nil {
		return fmt.Errorf("database %s: check migrations: %w", d.Path, err)
	}
	if current {
		return nil
	}
	fresh, err := isNew(ctx, d, SQLite)
	if err != nil {
		return fmt.Errorf("database %s: %w", d.Path, err)
	}
	if fresh {
		covered, err := d.applyBaseline(ctx)
		if err != nil {
			return fmt.Errorf("database %s: %w", d.Path, err)
		}
		d.FromBaseline = true
		if slices.Equal(covered, versions) {
			return nil
		}
	}
	p, pending, err := d.pendingMigrations(ctx)
	if err != nil || !pending {
		return err
	}
	var tables int
	if err := d.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name NOT IN ('goose_db_version', 'sqlite_sequence')").Scan(&tables); err != nil {
		return fmt.Errorf("database %s: %w", d.Path, err)
	}
	if tables > 0 && !fresh {
		dir := opts.BackupDir
		if dir == "" {
			dir = filepath.Join(filepath.Dir(d.Path), "backups")
		}
		bp, err := d.Backup(ctx, dir, opts.Now())
		if err != nil {
			return fmt.Errorf("back up %s before migrating: %w", d.Path, err)
		}
		d.BackupPath = bp
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate database %s: %w", d.Path, err)
	}
	return nil
}

// appliedAll reports whether goose's table records exactly versions as
// applied (a database this build has migrated, or created, before).
func (d *DB) appliedAll(ctx context.Context, versions []int64) (bool, error) {
	var tables int
	if err := d.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?`, versionTable).Scan(&tables); err != nil {
		return false, err
	}
	if tables == 0 {
		return false, nil
	}
	rows, err := d.QueryContext(ctx, `SELECT DISTINCT version_id FROM `+versionTable+` WHERE is_applied AND version_id > 0 ORDER BY version_id`)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var applied []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return false, err
		}
		applied = append(applied, v)
	}
	if err := rows.Err(); err != nil {
		return false, err
	}
	return slices.Equal(applied, versions), nil
}

// Backup writes a consistent copy of the database into dir and returns its
// path.
func (d *DB) Backup(ctx context.Context, dir string, now time.Time) (string, error) {
	if d.Dialect == Postgres {
		return "", errors.New("back up a PostgreSQL database with the server's own tools (pg_dump)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	name := "tuitbot-" + now.UTC().Format("20060102-150405.000000000") + ".db"
	path := filepath.Join(dir, name)
	if strings.ContainsAny(path, "'") {
		return "", fmt.Errorf("backup path %s contains a quote", path)
	}
	if _, err := d.ExecContext(ctx, "VACUUM INTO '"+path+"'"); err != nil {
		return "", err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		return "", err
	}
	return path, nil
}

// IntegrityCheck runs PRAGMA integrity_check and returns its first line.
func (d *DB) IntegrityCheck(ctx context.Context) (string, error) {
	if d.Dialect == Postgres {
		return d.QuickCheck(ctx)
	}
	var res string
	err := d.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res)
	return res, err
}

// Tx runs fn in a write transaction.
func (d *DB) Tx(ctx context.Context, fn func(*sql.Tx) error) error {
	if d.writes != nil {
		return d.sqliteTx(ctx, fn)
	}
	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		return wrapBegin(err)
	}
	return finish(tx, fn)
}

func wrapBegin(err error) error { return fmt.Errorf("begin: %w", err) }

// finish runs fn in tx and commits, or rolls back when fn fails.
func finish(tx *sql.Tx, fn func(*sql.Tx) error) error {
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations_postgres/*.sql
var pgMigrations embed.FS

// migrationsOf returns the migration set of a dialect and its folder.
func migrationsOf(d Dialect) (fs.FS, string) {
	if d == Postgres {
		return pgMigrations, "migrations_postgres"
	}
	return migrations, "migrations"
}

// pendingMigrations is goose's provider for the database and whether it
// has migrations to apply.
func (d *DB) pendingMigrations(ctx context.Context) (*goose.Provider, bool, error) {
	p, err := d.migrationProvider()
	if err != nil {
		return nil, false, fmt.Errorf("migrations: %w", err)
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("database %s: check migrations: %w", d.Path, err)
	}
	return p, pending, nil
}

func (d *DB) migrationProvider() (*goose.Provider, error) {
	fsys, dir := migrationsOf(d.Dialect)
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	opts := []goose.ProviderOption{goose.WithDisableGlobalRegistry(true)}
	dialect := goose.DialectSQLite3
	if d.Dialect == Postgres {
		dialect = goose.DialectPostgres
		// Several hosts may start at once: the session lock (an advisory
		// lock on the server) lets one migrate while the others wait.
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return nil, fmt.Errorf("migrations: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, d.DB, sub, opts...)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return p, nil
}

// pgConnectTimeout bounds the first connection when the URL sets none, so
// an unreachable server is a prompt startup error rather than a hang.
const pgConnectTimeout = 10 * time.Second

// openPostgres opens the PostgreSQL database at rawURL, migrates it under
// the server's migration lock and checks its schema. The statements the
// rest of tuitbot writes with SQLite's placeholders run through a driver
// that rebinds them (see Rebind). Files beside a SQLite database (the
// reserve, the identity file, the open lock) have no meaning here: the
// server is shared by every host, and its identity lives in db_identity.
func openPostgres(ctx context.Context, rawURL string, opts Options) (*DB, error) {
	shown := RedactURL(rawURL)
	cfg, err := pgx.ParseConfig(rawURL)
	if err != nil {
		return nil, fmt.Errorf("storage.database_url %s is not a usable PostgreSQL URL: %s", shown, hidePassword(err.Error(), rawURL))
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = pgConnectTimeout
	}
	db := sql.OpenDB(pgConnector{stdlib.GetConnector(*cfg, stdlib.OptionAfterConnect(afterConnect))})
	// Enough for many concurrent callers; the server's max_connections
	// is shared by every host.
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(32)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		// The driver's error is not kept: it may quote the password.
		msg := fmt.Sprintf("cannot connect to the PostgreSQL database %s (storage.database_url): %s; check that the server is running and reachable and that the database and user exist",
			shown, hidePassword(err.Error(), rawURL))
		if Transient(err) {
			return nil, &unreachableError{msg}
		}
		return nil, errors.New(msg)
	}
	d := &DB{DB: db, Path: shown, Dialect: Postgres, reserveBytes: -1}
	if err := d.openPostgres(ctx, opts); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

func (d *DB) openPostgres(ctx context.Context, opts Options) error {
	if err := d.migrate(ctx, opts); err != nil {
		return err
	}
	if _, err := d.ExecContext(ctx, `INSERT INTO db_identity (singleton, id, created_at) VALUES (1, ?, ?) ON CONFLICT (singleton) DO NOTHING`,
		uuid.NewString(), FormatTime(opts.Now())); err != nil {
		return fmt.Errorf("database %s: write identity: %w", d.Path, err)
	}
	if err := d.QueryRowContext(ctx, `SELECT id FROM db_identity WHERE singleton = 1`).Scan(&d.ID); err != nil {
		return fmt.Errorf("database %s: read identity: %w", d.Path, err)
	}
	// Every host of a team has its own home and starts on the shared
	// database: each home is recorded, none is refused for being new. A
	// PostgreSQL database is not copied along with a home's files.
	home, err := d.planHome(ctx, opts)
	if err != nil {
		return err
	}
	if err := d.applyHome(ctx, home, FormatTime(opts.Now())); err != nil {
		return err
	}
	return d.checkSchema(ctx)
}

// hidePassword removes the URL's password from msg, whatever the driver
// chose to quote.
func hidePassword(msg, rawURL string) string {
	cfg, err := pgx.ParseConfig(rawURL)
	if err == nil && cfg.Password != "" {
		msg = strings.ReplaceAll(msg, cfg.Password, "xxxxx")
	}
	if i := strings.Index(rawURL, "://"); i >= 0 {
		if at := strings.LastIndex(rawURL, "@"); at > i {
			if _, pw, ok := strings.Cut(rawURL[i+3:at], ":"); ok && pw != "" {
				msg = strings.ReplaceAll(msg, pw, "xxxxx")
			}
		}
	}
	return msg
}

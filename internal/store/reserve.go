package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DefaultReserveBytes is the room kept free for audit completions. One
// completion writes a few pages (a result is capped at 64 KiB), to the WAL
// and later to the database, so 1 MiB covers several at once.
const DefaultReserveBytes = 1 << 20

// ReservePath is the spare file beside the database that holds the room
// reserved for recording outcomes.
func ReservePath(dbPath string) string { return dbPath + ".reserve" }

// ReserveReady reports whether the spare file is in place with its full
// size; when reserving is disabled it is always ready.
func (d *DB) ReserveReady() bool {
	if d.reserveBytes <= 0 {
		return true
	}
	st, err := os.Stat(ReservePath(d.Path))
	return err == nil && st.Size() >= d.reserveBytes
}

// EnsureReserve makes sure the spare file exists, creating it when it does
// not. It fails when the disk has no room for it: then a mutation must not
// be sent, because its outcome might not be recordable.
func (d *DB) EnsureReserve() error {
	if d.ReserveReady() {
		return nil
	}
	path := ReservePath(d.Path)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("reserve room for audit records beside %s: %w", d.Path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("the disk holding %s has no room to reserve %d KiB for audit records (%w); free some space", d.Path, d.reserveBytes>>10, err)
	}
	switch err := allocate(f, d.reserveBytes); {
	case errors.Is(err, errors.ErrUnsupported):
		if err := writeReserve(f, d.reserveBytes); err != nil {
			return fail(err)
		}
	case err != nil:
		return fail(err)
	}
	// No fsync: allocated blocks and the file's size are one metadata
	// change, and written bytes are synced by writeReserve. A reserve lost
	// with a crash is short or missing, which ReserveReady sees before the
	// next send, and it is made again.
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fail(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("reserve room for audit records beside %s: %w", d.Path, err)
	}
	return nil
}

// writeReserve fills f with n bytes and syncs them. Random bytes: a
// compressing file system would store zeros in no space at all, and the
// reserve would free nothing.
func writeReserve(f *os.File, n int64) error {
	r := rand.NewChaCha8([32]byte{'t', 'u', 'i', 't', 'b', 'o', 't'})
	buf := make([]byte, min(n, 64<<10))
	for left := n; left > 0; left -= int64(len(buf)) {
		k := min(int64(len(buf)), left)
		_, _ = r.Read(buf[:k])
		if _, err := f.Write(buf[:k]); err != nil {
			return err
		}
	}
	return f.Sync()
}

// ReleaseReserve deletes the spare file so that the space it held can take
// an audit completion. It reports whether there was a reserve to release.
func (d *DB) ReleaseReserve() bool {
	if d.reserveBytes <= 0 {
		return false
	}
	return os.Remove(ReservePath(d.Path)) == nil
}

// LowSpaceBytes is the free space below which the disk holding the
// database counts as full: a released reserve could not be made again, and
// a mutation's audit rows may no longer fit.
const LowSpaceBytes = DefaultReserveBytes

// CheckSpace reports a full disk: less than LowSpaceBytes free beside the
// database. The reserve file does not count as free, so a disk that filled
// up around it is reported although the reserve is still in place. It
// costs one statfs; PostgreSQL's disk is the server's to watch.
func (d *DB) CheckSpace() error {
	if d.Dialect == Postgres {
		return nil
	}
	free, ok := freeBytes(filepath.Dir(d.Path))
	if !ok || free >= LowSpaceBytes {
		return nil
	}
	return fmt.Errorf("the disk holding %s is full (%d KiB free, tuitbot needs %d KiB to record mutations safely); new mutations may fail with db_error until you free some space",
		d.Path, free>>10, LowSpaceBytes>>10)
}

// IsFull reports whether err is SQLite's "database or disk is full".
func IsFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqlite3.SQLITE_FULL
	}
	return false
}

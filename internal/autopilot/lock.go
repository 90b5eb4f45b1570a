package autopilot

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/flock"
)

// RunLockName is the suffix of the lock file beside a SQLite database that
// keeps one autopilot (run or tick) of the default account at a time.
const RunLockName = "run.lock"

// RunLockFile is the suffix of one account's lock file: run.lock for the
// default account, run-NAME.lock for the others, so that several accounts
// of one database run side by side.
func RunLockFile(account string) string {
	if account == "" || account == config.DefaultAccountName {
		return RunLockName
	}
	return "run-" + account + ".lock"
}

// RunLockPath is the account's lock file for the SQLite database at
// dbFile: beside the database, so that every home using the file shares
// it (as every host using a PostgreSQL database shares its session lock).
// A database reached through a symbolic link is locked beside the file
// itself.
func RunLockPath(dbFile, account string) string {
	if real, err := filepath.EvalSymlinks(dbFile); err == nil {
		dbFile = real
	}
	if abs, err := filepath.Abs(dbFile); err == nil {
		dbFile = abs
	}
	return dbFile + "." + RunLockFile(account)
}

// RunLock is a held single-instance lock.
type RunLock struct {
	f    *os.File
	path string
}

// Holder is the process that holds a run lock, as it recorded itself.
type Holder struct {
	PID   int    `json:"pid"`
	Host  string `json:"host,omitempty"`
	Home  string `json:"home,omitempty"`
	Since string `json:"since,omitempty"`
}

func (h Holder) String() string {
	if h.PID == 0 {
		return "another process"
	}
	s := fmt.Sprintf("process %d", h.PID)
	if h.Host != "" {
		s += " on host " + h.Host
	}
	if h.Home != "" {
		s += " (home " + h.Home + ")"
	}
	if h.Since != "" {
		s += " since " + h.Since
	}
	return s
}

// LockedError says another process holds the run lock.
type LockedError struct {
	Path    string
	Account string
	// Holder is who holds it; its PID is 0 when it has not written
	// itself yet.
	Holder
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("another autopilot is already running for account %s on this database: %s holds the lock %s; stop it first (`tuitbot status` shows what it is doing)",
		e.Account, e.Holder, e.Path)
}

// AcquireAccountRunLock takes the exclusive lock on the account's lock
// file beside the SQLite database dbFile (RunLockPath) and records this
// process in it: its PID, host and home, which a refused process names.
// The kernel releases the lock when the process dies, however it dies, so
// a crash never leaves a stale lock behind.
func AcquireAccountRunLock(dbFile, home, account string) (*RunLock, error) {
	if account == "" {
		account = config.DefaultAccountName
	}
	path := RunLockPath(dbFile, account)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("run lock: create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if err := flock.TryLock(f); err != nil {
		defer f.Close()
		if errors.Is(err, flock.ErrLocked) {
			return nil, &LockedError{Path: path, Account: account, Holder: readHolder(f)}
		}
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	me := Holder{PID: os.Getpid(), Home: home, Since: time.Now().UTC().Format(time.RFC3339)}
	me.Host, _ = os.Hostname()
	if abs, err := filepath.Abs(home); err == nil && home != "" {
		me.Home = abs
	}
	if err := f.Truncate(0); err == nil {
		b, _ := json.Marshal(me)
		_, _ = f.WriteAt(append(b, '\n'), 0)
	}
	return &RunLock{f: f, path: path}, nil
}

// readHolder reads what the holder wrote: a JSON Holder, or a bare PID as
// earlier versions wrote.
func readHolder(f *os.File) Holder {
	b := make([]byte, 4096)
	n, _ := f.ReadAt(b, 0)
	s := strings.TrimSpace(string(b[:n]))
	var h Holder
	if json.Unmarshal([]byte(s), &h) == nil {
		return h
	}
	h.PID, _ = strconv.Atoi(s)
	return h
}

// Path is the lock file.
func (l *RunLock) Path() string { return l.path }

// Release drops the lock. The file stays: removing it could let two
// processes lock different files of the same name.
func (l *RunLock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := flock.Unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

package autopilot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/flock"
)

// RunLockName is the lock file in the home directory that keeps one
// autopilot (run or tick) of the default account at a time.
const RunLockName = "run.lock"

// RunLockFile is the lock file of one account's autopilot: run.lock for
// the default account, run-NAME.lock for the others, so that several
// accounts of one home run side by side.
func RunLockFile(account string) string {
	if account == "" || account == config.DefaultAccountName {
		return RunLockName
	}
	return "run-" + account + ".lock"
}

// RunLock is a held single-instance lock.
type RunLock struct {
	f    *os.File
	path string
}

// LockedError says another process holds the run lock.
type LockedError struct {
	Path string
	// PID is the holder's process id, 0 when it has not written it yet.
	PID int
}

func (e *LockedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("another autopilot is already running: %s holds the lock %s; stop it first (`tuitbot status` shows what it is doing)", who, e.Path)
}

// AcquireRunLock takes the default account's run lock.
func AcquireRunLock(home string) (*RunLock, error) {
	return AcquireAccountRunLock(home, config.DefaultAccountName)
}

// AcquireAccountRunLock takes the exclusive lock on the account's lock file
// in home (RunLockFile) and records this process's PID in it. The kernel
// releases the lock when the process dies, however it dies, so a crash
// never leaves a stale lock behind.
func AcquireAccountRunLock(home, account string) (*RunLock, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("run lock: create %s: %w", home, err)
	}
	path := filepath.Join(home, RunLockFile(account))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if err := flock.TryLock(f); err != nil {
		defer f.Close()
		if errors.Is(err, flock.ErrLocked) {
			b := make([]byte, 32)
			n, _ := f.ReadAt(b, 0)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b[:n])))
			return nil, &LockedError{Path: path, PID: pid}
		}
		return nil, fmt.Errorf("run lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &RunLock{f: f, path: path}, nil
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

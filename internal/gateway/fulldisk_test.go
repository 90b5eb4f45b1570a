package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/store"
)

// bigResult is an executed call's data too large to fit in the pages a
// full database has left.
func bigResult(tag string) Result {
	return Result{Data: map[string]any{"id": tag, "padding": strings.Repeat("p", 40<<10)}}
}

// fullDiskEnv is a gateway whose database cannot grow past its current
// size (SQLite's max_page_count): the pending row fits in the pages it
// has, a completion with a large result does not. It needs no privileges.
// restart stops the gateway and its database as a process that ends
// does, and starts both again on the same file, recovery included.
func (e *env) restart() {
	e.t.Helper()
	if err := e.g.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.db.Close()
	db, err := store.Open(e.ctx, e.dbPath, store.Options{Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { db.Close() })
	e.db, e.opts.DB = db, db
	e.g = e.open()
}

func fullDiskEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, ctx: context.Background(), clock: newClock(), pol: &fakePolicy{}, act: &fakeAction{}}
	e.dbPath = filepath.Join(dir, "tuitbot.db")
	copyMigrated(t, e.dbPath)
	probe, err := store.Open(e.ctx, e.dbPath, store.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := probe.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	probe.Close()
	db, err := store.Open(e.ctx, e.dbPath, store.Options{Now: e.clock.Now, Pragmas: []string{fmt.Sprintf("max_page_count(%d)", pages)}})
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.opts = Options{DB: db, Policy: e.pol, Now: e.clock.Now, AccountID: "default",
		Mode: newEnvMode, LockDir: filepath.Join(dir, "locks")}
	e.g = e.open()
	return e
}

func newEnvMode() (string, bool) { return "autopilot", false }

func TestFullDiskOutcomeIsReportedAndNothingNewIsSent(t *testing.T) {
	e := fullDiskEnv(t)
	e.act.setRun(func(context.Context, json.RawMessage) (Result, error) { return bigResult("111"), nil })

	resp, err := e.do(e.g, map[string]any{"text": "first"}, "")
	if err != nil {
		t.Fatalf("the executed call must not turn into an error: %v", err)
	}
	if resp.Kind != Executed || !resp.AuditIncomplete {
		t.Fatalf("response kind %s, audit_incomplete %t; want executed with audit_incomplete", resp.Kind, resp.AuditIncomplete)
	}
	if n := e.g.Unrecorded(); n != 1 {
		t.Fatalf("Unrecorded() = %d, want 1", n)
	}
	if got := e.statuses(); len(got) != 1 || got[0] != statusPending {
		t.Fatalf("audit statuses %v, want the one row still pending", got)
	}

	// Nothing new is sent while the outcome is unrecorded.
	_, err = e.do(e.g, map[string]any{"text": "second"}, "")
	ae := wantCode(t, err, apperr.DBError)
	if ae.Extra["audit_incomplete"] != true || !strings.Contains(ae.Message, "not sending") {
		t.Errorf("refusal %q (extra %v) does not say why nothing is sent", ae.Message, ae.Extra)
	}
	if n := e.act.count(); n != 1 {
		t.Fatalf("the action ran %d times; a second call went out while the first outcome was unrecorded", n)
	}

	// The process stops; the next start recovers the row from the journal
	// with the outcome this process saw, and charges the caps.
	e.restart()
	rows := e.audit()
	if len(rows) != 1 {
		t.Fatalf("%d audit rows, want 1", len(rows))
	}
	r := rows[0]
	if r.status != statusInterrupted || !strings.Contains(r.result, `"id":"111"`) || !r.completed {
		t.Errorf("recovered row: status %s, completed %t, result %.60q; want interrupted with the journaled result", r.status, r.completed, r.result)
	}
	if n := e.pol.consumedCount(); n != 1 {
		t.Errorf("caps charged %d times after recovery, want 1", n)
	}
	if _, err := os.Stat(e.g.journalPath(rows[0].owner)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the applied journal was not removed (stat: %v)", err)
	}
	// The recovered row blocks an identical repeat until verified on X.
	_, err = e.do(e.g, map[string]any{"text": "first"}, "")
	wantCode(t, err, apperr.OutcomeUnverified)
}

// mountTmpfs mounts a small tmpfs, or skips when this process may not
// mount (it needs root or CAP_SYS_ADMIN).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("mounting a %s tmpfs is not permitted here (%v); TestFullDiskOutcomeIsReportedAndNothingNewIsSent covers the behaviour without one", size, err)
		}
		t.Fatalf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes to path until the file system is full.
func fillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for i := range buf {
		buf[i] = byte(i)
	}
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(err)
		}
	}
}

func tmpfsEnv(t *testing.T, reserve int64) (*env, string) {
	t.Helper()
	dir := mountTmpfs(t, "6m")
	e := &env{t: t, ctx: context.Background(), clock: newClock(), pol: &fakePolicy{}, act: &fakeAction{}}
	e.dbPath = filepath.Join(dir, "tuitbot.db")
	copyMigrated(t, e.dbPath)
	db, err := store.Open(e.ctx, e.dbPath, store.Options{Now: e.clock.Now, ReserveBytes: reserve})
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.opts = Options{DB: db, Policy: e.pol, Now: e.clock.Now, AccountID: "default",
		Mode: newEnvMode, LockDir: filepath.Join(dir, "locks")}
	e.g = e.open()
	return e, filepath.Join(dir, "filler")
}

// TestFullTmpfsReserveRecordsTheOutcome fills a real small file system
// while a call is on X: the reserve gives the completion its room, and the
// next call is refused until space is free again.
func TestFullTmpfsReserveRecordsTheOutcome(t *testing.T) {
	e, filler := tmpfsEnv(t, 0)
	e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
		fillDisk(t, filler)
		return bigResult("222"), nil
	})
	resp, err := e.do(e.g, map[string]any{"text": "first"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.AuditIncomplete {
		t.Fatal("the reserve did not make room for the completion")
	}
	if got := e.statuses(); len(got) != 1 || got[0] != statusSuccess {
		t.Fatalf("audit statuses %v, want one success", got)
	}
	if n := e.pol.consumedCount(); n != 1 {
		t.Fatalf("caps charged %d times, want 1", n)
	}
	if e.db.ReserveReady() {
		t.Fatal("the reserve is still in place on a full disk")
	}
	e.act.setRun(nil)
	_, err = e.do(e.g, map[string]any{"text": "second"}, "")
	ae := wantCode(t, err, apperr.DBError)
	if !strings.Contains(ae.Message, "no room to reserve") {
		t.Errorf("refusal %q does not say the disk is full", ae.Message)
	}
	if n := e.act.count(); n != 1 {
		t.Fatalf("a call went out with no room reserved for its record (%d executions)", n)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.mustDo(map[string]any{"text": "second"}, "")
	if !e.db.ReserveReady() {
		t.Error("the reserve was not restored once space was free")
	}
}

// TestFullTmpfsBacklogIsRecordedWhenSpaceReturns uses a reserve too small
// for the completion: the outcome waits in memory, nothing new is sent, and
// the first call after space returns records it.
func TestFullTmpfsBacklogIsRecordedWhenSpaceReturns(t *testing.T) {
	e, filler := tmpfsEnv(t, 4096)
	e.act.setRun(func(context.Context, json.RawMessage) (Result, error) {
		fillDisk(t, filler)
		return bigResult("333"), nil
	})
	resp, err := e.do(e.g, map[string]any{"text": "first"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !resp.AuditIncomplete {
		t.Fatal("a completion that could not be written was not reported")
	}
	e.act.setRun(nil)
	_, err = e.do(e.g, map[string]any{"text": "second"}, "")
	wantCode(t, err, apperr.DBError)
	if n := e.act.count(); n != 1 {
		t.Fatalf("a call went out while an outcome was unrecorded (%d executions)", n)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	e.mustDo(map[string]any{"text": "second"}, "")
	if n := e.g.Unrecorded(); n != 0 {
		t.Fatalf("Unrecorded() = %d after space returned", n)
	}
	rows := e.audit()
	if len(rows) != 2 || rows[0].status != statusSuccess || !strings.Contains(rows[0].result, `"id":"333"`) {
		t.Fatalf("rows %+v: want the delayed outcome recorded as success", rows)
	}
	if n := e.pol.consumedCount(); n != 2 {
		t.Errorf("caps charged %d times, want 2", n)
	}
}

// TestSendingStopsWhenDatabaseFilesAreDeleted: once the -wal and -shm are
// deleted under a running process, what it writes is invisible to every
// process that opens the database afterwards, so repeats would pass as
// new calls. The gateway refuses to send instead.
func TestSendingStopsWhenDatabaseFilesAreDeleted(t *testing.T) {
	e := newEnv(t)
	e.mustDo(map[string]any{"text": "before"}, "")
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(e.dbPath + suffix); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.do(e.g, map[string]any{"text": "after"}, "")
	ae := wantCode(t, err, apperr.DBError)
	if !strings.Contains(ae.Message, "was deleted") {
		t.Errorf("refusal %q does not say the files were deleted", ae.Message)
	}
	if n := e.act.count(); n != 1 {
		t.Fatalf("the action ran %d times after the database files were deleted", n)
	}
}

// TestSendingStopsWhenWALIsChangedInPlace: a WAL truncated or overwritten
// under a running process (the same file, so no stat notices) has lost
// what was committed to it. The gateway refuses to send, as it does when
// the file is deleted.
func TestSendingStopsWhenWALIsChangedInPlace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, wal string)
		want   string
	}{
		{"truncated", func(t *testing.T, wal string) {
			if err := os.Truncate(wal, 0); err != nil {
				t.Fatal(err)
			}
		}, "truncated"},
		{"overwritten", func(t *testing.T, wal string) {
			f, err := os.OpenFile(wal, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt(make([]byte, 4096), 0); err != nil {
				t.Fatal(err)
			}
		}, "overwritten"},
		{"replaced in place by another database's", func(t *testing.T, wal string) {
			other := filepath.Join(t.TempDir(), "other.db")
			copyMigrated(t, other)
			db, err := store.Open(context.Background(), other, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec("INSERT INTO action_log (action_type, created_at) VALUES ('other', '2026-01-01T00:00:00.000Z')"); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(other + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(wal, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "changed in place"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := sqliteEnv(t)
			e.mustDo(map[string]any{"text": "before"}, "")
			tc.tamper(t, e.dbPath+"-wal")
			_, err := e.do(e.g, map[string]any{"text": "after"}, "")
			ae := wantCode(t, err, apperr.DBError)
			if !strings.Contains(ae.Message, "-wal was changed in place") || !strings.Contains(ae.Message, tc.want) || !strings.Contains(ae.Message, "not sending") {
				t.Errorf("refusal %q does not say the WAL %s", ae.Message, tc.want)
			}
			if n := e.act.count(); n != 1 {
				t.Fatalf("the action ran %d times after the WAL was changed in place", n)
			}
		})
	}
}

// sqliteEnv is a gateway over a SQLite file, whatever backend the
// package's tests run on: the WAL is SQLite's.
func sqliteEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, ctx: context.Background(), clock: newClock(), pol: &fakePolicy{}, act: &fakeAction{}}
	e.dbPath = filepath.Join(dir, "tuitbot.db")
	copyMigrated(t, e.dbPath)
	db, err := store.Open(e.ctx, e.dbPath, store.Options{Now: e.clock.Now})
	if err != nil {
		t.Fatalf("open db: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	e.db = db
	e.opts = Options{DB: db, Policy: e.pol, Now: e.clock.Now, AccountID: "default",
		Mode: newEnvMode, LockDir: filepath.Join(dir, "locks")}
	e.g = e.open()
	return e
}

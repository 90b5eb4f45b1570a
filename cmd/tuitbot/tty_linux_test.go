package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a pseudo-terminal pair: what a person at a terminal
// would give the process as stdin.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("ptsname: %v", err)
	}
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return ptm, pts
}

// TestServeOnATerminalSaysWhatItWaitsFor: started by hand, the stdio
// server prints one line on stderr saying it waits for an MCP client and
// how to connect one, and Ctrl-C then stops it without an ERROR.
func TestServeOnATerminalSaysWhatItWaitsFor(t *testing.T) {
	h := newHome(t)
	_, pts := openPTY(t)
	cmd := exec.Command(binPath, "mcp", "serve", "--sandbox")
	cmd.Env = h.env
	cmd.Stdin = pts
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	if out.waitFor(terminalHint, 20*time.Second) == nil {
		t.Fatalf("no hint for the person at the terminal:\n%s", out)
	}
	if n := strings.Count(out.String(), "waiting for an MCP client"); n != 1 {
		t.Errorf("the hint appears %d times, want once:\n%s", n, out)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := waitExit(t, cmd, out); err != nil {
		t.Fatalf("exit after Ctrl-C: %v\n%s", err, out)
	}
	if strings.Contains(out.String(), "level=ERROR") {
		t.Errorf("Ctrl-C logged an ERROR:\n%s", out)
	}
}

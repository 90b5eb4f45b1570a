//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// servingProc is a started `mcp serve --transport http` process: its
// stderr as read so far, a channel closed when it has exited, and the
// address it said it listens on.
type servingProc struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	addr   string
}

// startServing starts cmd, waits up to wait for its "listening" line and
// stops it (SIGTERM, then SIGKILL) when the test ends. what names it in
// failures.
func startServing(tb testing.TB, cmd *exec.Cmd, what string, wait time.Duration) *servingProc {
	tb.Helper()
	pr, pw := io.Pipe()
	p := &servingProc{cmd: cmd, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", what, err)
	}
	go func() {
		_ = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-p.done:
			return
		default:
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.stderr, line)
			if m := hostListening.FindStringSubmatch(line); m != nil && !sent {
				addr <- m[1]
				sent = true
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if !ok {
			tb.Fatalf("%s exited before listening:\n%s", what, p.stderr)
		}
		p.addr = a
	case <-time.After(wait):
		tb.Fatalf("%s never reported listening:\n%s", what, p.stderr)
	}
	return p
}

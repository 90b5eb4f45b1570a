//go:build linux

package pgtest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// childEnv turns the test binary into a process that starts a cluster,
// prints its postmaster's pid and waits to be killed.
const childEnv = "TUITBOT_PGTEST_WATCHDOG_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(startAndWait())
	}
	os.Exit(Main(m))
}

func startAndWait() int {
	os.Unsetenv(EnvURL) // the point is a cluster of this process's own
	if _, err := serverURL(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pid, err := postmasterPID(started.dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("postmaster %d\n", pid)
	// Block until the parent kills this process; Stop is never reached.
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

func postmasterPID(dir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return strconv.Atoi(strings.TrimSpace(string(first)))
}

// A test binary killed by SIGKILL, as go test's timeout kills it, takes its
// throwaway cluster with it: nothing of it runs a few seconds later.
func TestClusterDiesWithKilledProcess(t *testing.T) {
	if _, _, err := binaries(); err != nil {
		if os.Getenv(EnvRequire) != "" {
			t.Fatalf("%s is set but there is no PostgreSQL to test against: %s", EnvRequire, HowTo)
		}
		t.Skipf("no PostgreSQL for this test: %s", HowTo)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childEnv+"=1")
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("the child printed no postmaster pid: %v\n%s", err, stderr.String())
	}
	var pid int
	if _, err := fmt.Sscanf(line, "postmaster %d", &pid); err != nil {
		t.Fatalf("child said %q: %v", line, err)
	}
	// A pidfd becomes readable when the postmaster exits: the test waits on
	// that event, not on a guess of how long a stop takes.
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)

	if err := child.Process.Signal(unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	const limit = 10 * time.Second
	n, err := pollUntil(fd, limit)
	if err != nil {
		t.Fatalf("poll the postmaster's pidfd: %v", err)
	}
	if n == 0 {
		_ = unix.Kill(pid, unix.SIGKILL)
		t.Fatalf("postmaster %d still runs %v after its test process was killed", pid, limit)
	}
}

func pollUntil(fd int, limit time.Duration) (int, error) {
	deadline := time.Now().Add(limit)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, nil
		}
		n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(left.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}

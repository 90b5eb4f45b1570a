//go:build unix

package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// watch starts a watchdog that stops the cluster and removes its directory
// as soon as this process is gone, however it ends: the watchdog waits for
// end of file on a pipe whose only writer is this process, and the kernel
// closes that writer even on SIGKILL, which no deferred Stop survives. The
// returned file is the writer; keep it open for the cluster's lifetime.
func (c *cluster) watch() (*os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("watchdog pipe: %w", err)
	}
	defer r.Close()
	stop := []string{c.pgctl, "stop", "-m", "immediate", "-w", "-D", filepath.Join(c.dir, "data")}
	if c.runAs != nil {
		stop = append([]string{"runuser", "-u", c.runAs.Username, "--"}, stop...)
	}
	// The directory travels in the environment and the stop command as
	// arguments, so no path is ever parsed by the shell.
	script := `cat >/dev/null; "$@" >/dev/null 2>&1; rm -rf -- "$TUITBOT_PGTEST_DIR"`
	cmd := exec.Command("/bin/sh", append([]string{"-c", script, "pgtest-watchdog"}, stop...)...)
	cmd.Env = append(os.Environ(), "TUITBOT_PGTEST_DIR="+c.dir)
	cmd.Stdin = r
	// Its own session: an interrupt meant for the tests must not end the
	// watchdog before it has stopped the cluster.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("start the cluster's watchdog: %w", err)
	}
	// Reap it whenever it ends, so it never lingers as a zombie.
	go func() { _ = cmd.Wait() }()
	return w, nil
}

package main

import (
	"bufio"
	"io"
	"os/exec"
	"testing"
)

// BenchmarkColdStartInitialize measures from exec of `tuitbot mcp serve` on
// an existing, migrated database until the initialize reply arrives: what
// an agent waits for every time it launches the server.
func BenchmarkColdStartInitialize(b *testing.B) {
	h := newHome(b)
	// Create and migrate the database once, so the loop measures a warm
	// start on an existing file, not migrations.
	warm := exec.Command(binPath, "doctor")
	warm.Env = h.env
	if out, err := warm.CombinedOutput(); err != nil {
		b.Fatalf("doctor: %v\n%s", err, out)
	}
	line := []byte(initLine + "\n")
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(binPath, "mcp", "serve")
		cmd.Env = h.env
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := stdin.Write(line); err != nil {
			b.Fatal(err)
		}
		reply, err := bufio.NewReader(stdout).ReadBytes('\n')
		if err != nil || len(reply) == 0 {
			b.Fatalf("no initialize reply: %v", err)
		}
		b.StopTimer()
		stdin.Close()
		io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("server exit: %v", err)
		}
		b.StartTimer()
	}
}

package main

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// BenchmarkColdStartInitialize measures from exec of `tuitbot mcp serve` on
// an existing, migrated database until the initialize reply arrives: what
// an agent waits for every time it launches the server.
func BenchmarkColdStartInitialize(b *testing.B) {
	benchColdStart(b, initLine+"\n")
}

// BenchmarkColdStartToolsList goes on until the tools/list answer has
// arrived: a client can do nothing before that, and listing is where the
// tool schemas are built and sent.
func BenchmarkColdStartToolsList(b *testing.B) {
	benchColdStart(b, initLine+"\n"+
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
}

// benchColdStart starts the server once per iteration, writes the request
// lines and waits for as many answers as there are requests with an id.
func benchColdStart(b *testing.B, lines string) {
	h := newHome(b)
	// Create and migrate the database once, so the loop measures a warm
	// start on an existing file, not migrations.
	warm := exec.Command(binPath, "doctor")
	warm.Env = h.env
	if out, err := warm.CombinedOutput(); err != nil {
		b.Fatalf("doctor: %v\n%s", err, out)
	}
	answers := strings.Count(lines, `"id":`)
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
		if _, err := io.WriteString(stdin, lines); err != nil {
			b.Fatal(err)
		}
		rd := bufio.NewReaderSize(stdout, 1<<20)
		for range answers {
			reply, err := rd.ReadBytes('\n')
			if err != nil || len(reply) == 0 {
				b.Fatalf("no reply: %v", err)
			}
		}
		b.StopTimer()
		stdin.Close()
		io.Copy(io.Discard, rd)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("server exit: %v", err)
		}
		b.StartTimer()
	}
}

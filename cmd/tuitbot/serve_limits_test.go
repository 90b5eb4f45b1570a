package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeHTTPUnderDescriptorFlood runs the server with a 64-descriptor
// limit while a local process holds three times as many connections: half
// send one unauthenticated request each and keep the connection open after
// the 401, half never send anything. A client with the token must still
// initialize and call a tool within a few seconds.
func TestServeHTTPUnderDescriptorFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server under a descriptor limit and floods it")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc to count descriptors")
	}
	const fdLimit = 64
	h := newHome(t)
	const token = "flood-http-token-0123456789abcdef"
	tokenFile := h.path("token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// ulimit -n sets the soft and the hard limit, so the Go runtime cannot
	// raise it again at start-up.
	cmd := exec.Command("sh", "-c", `ulimit -n `+strconv.Itoa(fdLimit)+` && exec "$0" "$@"`,
		binPath, "mcp", "serve", "--transport", "http", "--listen", "127.0.0.1:0", "--token-file", tokenFile)
	stderr := startServer(t, cmd, h.env)
	addr := waitListening(t, stderr)

	req := "POST / HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
		"Content-Length: " + strconv.Itoa(len(initLine)) + "\r\n\r\n" + initLine
	var (
		mu       sync.Mutex
		held     []net.Conn
		answered int
		wg       sync.WaitGroup
	)
	t.Cleanup(func() {
		for _, c := range held {
			c.Close()
		}
	})
	for i := range 3 * fdLimit {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatalf("holder connection %d: %v", i, err)
		}
		held = append(held, c)
		if i%2 == 1 {
			continue // silent
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			if _, err := io.WriteString(c, req); err != nil {
				return
			}
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return
			}
			res.Body.Close()
			if res.StatusCode == http.StatusUnauthorized {
				mu.Lock()
				answered++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	during := countFDs(t, cmd.Process.Pid)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hc := &http.Client{Transport: authTransport{token: token, base: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "flood-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("a client with the token could not initialize while %d connections were held (%d answered 401; server descriptors %d of %d): %v\nserver:\n%s",
			len(held), answered, during, fdLimit, err, stderr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "health_check", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("health_check under the flood: %v", err)
	}
	if env := decodeResult(t, res); !env.Success {
		t.Errorf("health_check failed: %+v", env.Error)
	}
	served := time.Since(start)
	cs.Close()

	// Every held connection is closed by the server: after its 401, to make
	// room for newer ones, or when its header timeout passes.
	open := 0
	for _, c := range held {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.Copy(io.Discard, c); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					mu.Lock()
					open++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("held %d connections (%d answered 401); server descriptors %d of %d; token client served in %v",
		len(held), answered, during, fdLimit, served.Round(time.Millisecond))
	if open > 0 {
		t.Errorf("%d held connections were still open 10s later", open)
	}
	waitSignalExit(t, cmd, stderr)
}

// countFDs is the number of open descriptors of process pid.
func countFDs(t *testing.T, pid int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	if err != nil {
		t.Logf("count descriptors: %v", err)
		return -1
	}
	return len(ents)
}

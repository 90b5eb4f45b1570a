package mcpserver_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// TestShutdownDoesNotWaitForSilentConnections: http.Server.Shutdown treats
// a connection that never sent a request as busy for five seconds, so a
// client's preopened connection used to hold a SIGTERM exit that long.
func TestShutdownDoesNotWaitForSilentConnections(t *testing.T) {
	a := newApp(t, nil)
	srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeHTTP(ctx, srv, mcpserver.HTTPOptions{Listen: "127.0.0.1:0", Token: testToken, Ready: func(addr string) { ready <- addr }})
	}()
	addr := <-ready
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeHTTP: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("shutdown took %v with one silent connection open", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no shutdown within 10s")
	}
}

package app

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The sandbox reaches its emulator without keeping connections: after an
// answer the emulator sees the connection closed, so the next request dials
// afresh and a gone emulator is refused (and taken over) instead of a post
// being written into a dead connection and ending unknown.
func TestSandboxTransportKeepsNoConnection(t *testing.T) {
	closed := make(chan struct{}, 4)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":{}}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	c := &http.Client{Transport: sandboxTransport()}
	resp, err := c.Post(srv.URL+"/2/tweets", "application/json", strings.NewReader(`{"text":"a"}`))
	if err != nil {
		t.Fatal(err)
	}
	// Read to the end, so that only the transport decides whether the
	// connection is kept.
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection to the emulator stayed open after its answer")
	}
}

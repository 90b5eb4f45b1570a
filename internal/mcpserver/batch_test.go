package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/mcpserver"
)

// batchOf is a JSON-RPC batch of n health_check calls.
func batchOf(n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"health_check","arguments":{}}}`, i+1)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// httpSession initializes an HTTP session at version and returns its id.
func httpSession(t *testing.T, url, version string) string {
	t.Helper()
	init := strings.Replace(initBody, "2025-06-18", version, 1)
	code, hdr, body := postBody(t, url, init, map[string]string{"Authorization": "Bearer " + testToken})
	id := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || id == "" || !strings.Contains(body, `"protocolVersion":"`+version+`"`) {
		t.Fatalf("initialize at %s: %d, session %q: %.300s", version, code, id, body)
	}
	code, _, body = postBody(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Session-Id": id, "Mcp-Protocol-Version": version})
	if code != http.StatusAccepted {
		t.Fatalf("initialized: %d %.300s", code, body)
	}
	return id
}

func postBody(t *testing.T, url, body string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<20))
	return res.StatusCode, res.Header, string(b)
}

// TestBatchRefusedInASessionThatKnowsItsVersion: a session that agreed on
// 2025-06-18, which has no JSON-RPC batches, refuses a batch whether or not
// the request names the version, on HTTP and on stdio, with the SDK's
// error for a request that names it. A 2025-03-26 session keeps batches
// over HTTP.
func TestBatchRefusedInASessionThatKnowsItsVersion(t *testing.T) {
	const calls = 50
	ts := httpServer(t)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	with := func(extra map[string]string) map[string]string {
		h := map[string]string{}
		for k, v := range auth {
			h[k] = v
		}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	want := "JSON-RPC batching is not supported in 2025-06-18 and later (request version: 2025-06-18)"

	id := httpSession(t, ts.URL, "2025-06-18")
	named, _, namedBody := postBody(t, ts.URL, batchOf(calls), with(map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}))
	if named != http.StatusBadRequest || strings.TrimSpace(namedBody) != want {
		t.Fatalf("batch naming 2025-06-18: %d %.300q; want 400 %q", named, namedBody, want)
	}
	code, _, body := postBody(t, ts.URL, batchOf(calls), with(map[string]string{"Mcp-Session-Id": id}))
	if answered := strings.Count(body, `"health_check`) + strings.Count(body, `"result"`); code != named || body != namedBody {
		t.Errorf("batch of %d calls without the version header: %d, %d results; want %d %q as with the header", calls, code, answered, named, strings.TrimSpace(namedBody))
	}

	old := httpSession(t, ts.URL, "2025-03-26")
	code, _, body = postBody(t, ts.URL, batchOf(2), with(map[string]string{"Mcp-Session-Id": old}))
	if code != http.StatusOK || strings.Contains(body, "batching is not supported") {
		t.Errorf("batch in a 2025-03-26 session: %d %.300s; want it served", code, body)
	}

	t.Run("stdio", func(t *testing.T) {
		a := newApp(t, nil)
		srv, _, err := a.MCPServer(mcpserver.Options{Profile: mcpserver.Readonly})
		if err != nil {
			t.Fatal(err)
		}
		g := startGuarded(t, srv) // initialized at 2025-06-18
		g.send(batchOf(calls))
		l, ok := g.next(10 * time.Second)
		if !ok {
			t.Fatal("no answer to the batch")
		}
		var r wireReply
		if err := json.Unmarshal([]byte(l), &r); err != nil || r.Error == nil {
			t.Fatalf("answer to the batch is not a JSON-RPC error: %q", l)
		}
		if r.Error.Message != want || r.Error.Code != -32600 {
			t.Errorf("stdio batch refused with %d %q; want -32600 %q", r.Error.Code, r.Error.Message, want)
		}
		if ok, why := g.alive("after-batch", 10*time.Second); !ok {
			t.Fatalf("the session stopped serving after the batch: %s", why)
		}
		g.endsOnEOF(t, 10*time.Second)
	})
}

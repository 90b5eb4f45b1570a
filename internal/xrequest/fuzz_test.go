package xrequest

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// Fuzz inputs pack key/value lists into one string: records are separated
// by \x1e and key from value by \x1f. Both bytes are control characters the
// rules refuse anyway, so the packing hides no interesting input.
func splitKVs(s string) []KV {
	if s == "" {
		return nil
	}
	var out []KV
	for rec := range strings.SplitSeq(s, "\x1e") {
		k, v, _ := strings.Cut(rec, "\x1f")
		out = append(out, KV{Key: k, Value: v})
	}
	return out
}

// FuzzCheck asserts that whatever Check accepts is safe to send: HTTPS to
// one of the three hosts, the canonical path and nothing else, the query
// the caller gave, exactly the caller's headers, all on the allow-list, and
// a body that is the caller's JSON. Whatever it refuses is refused with the package's
// one error shape.
func FuzzCheck(f *testing.F) {
	f.Fuzz(func(t *testing.T, method, host, path, query, headers, body string) {
		req := Request{Method: method, Host: host, Path: path, Query: splitKVs(query), Headers: splitKVs(headers), Body: body}
		c, err := Check(req)
		if err != nil {
			assertRefusal(t, err)
			return
		}
		assertSafeURL(t, req, c)
		assertHeaders(t, req, c)
		assertBody(t, req, c)

		fp1, err := CanonicalJSON(c)
		if err != nil {
			t.Fatalf("CanonicalJSON of an accepted request: %v", err)
		}
		fp2, _ := CanonicalJSON(c)
		if !bytes.Equal(fp1, fp2) || !json.Valid(fp1) {
			t.Fatalf("CanonicalJSON not deterministic JSON: %s / %s", fp1, fp2)
		}
		s := Summary(c)
		names := make([]string, 0, len(c.Header))
		for n := range c.Header {
			names = append(names, n)
		}
		sort.Strings(names)
		if !reflect.DeepEqual(s["header_names"], names) {
			t.Fatalf("Summary header_names = %v, want %v", s["header_names"], names)
		}
		_ = Classify(c.Method, c.Path)
		_ = ClassifyChecked(c)
	})
}

func assertRefusal(t *testing.T, err error) {
	t.Helper()
	var ae *apperr.Error
	if !errors.As(err, &ae) || ae.Code != apperr.XRequestBlocked {
		t.Fatalf("refusal is not x_request_blocked: %#v", err)
	}
	param, _ := ae.Extra["param"].(string)
	switch param {
	case "method", "host", "path", "query", "headers", "body":
	default:
		t.Fatalf("refusal names unknown param %q: %s", param, ae.Message)
	}
	if !strings.HasPrefix(ae.Message, param+": ") {
		t.Fatalf("message %q does not start with %q", ae.Message, param)
	}
}

func assertSafeURL(t *testing.T, req Request, c *Checked) {
	t.Helper()
	if c.Method != req.Method {
		t.Fatalf("Method = %q, input %q", c.Method, req.Method)
	}
	if !slices.Contains(AllowedHosts(), c.Host) {
		t.Fatalf("accepted host %q", c.Host)
	}
	if req.Host != "" && asciiLower(req.Host) != c.Host {
		t.Fatalf("host %q became %q", req.Host, c.Host)
	}
	assertSafePath(t, c.Path)

	// Re-parse the string form: that is what goes on the wire.
	u, err := url.Parse(c.URL().String())
	if err != nil {
		t.Fatalf("URL does not parse: %v", err)
	}
	if u.Scheme != "https" || u.Host != c.Host || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		t.Fatalf("URL %q has unexpected parts", c.URL())
	}
	if u.Path != c.Path || u.EscapedPath() != c.Path {
		t.Fatalf("sent path %q / %q, checked %q", u.Path, u.EscapedPath(), c.Path)
	}
	// An independent decoder must reach the same canonical path, and no
	// intermediate layer may hide a dangerous form.
	layer := req.Path
	for range maxDecodeRounds + 1 {
		for _, bad := range []string{"//", `\`, "?", "#", ";", "\x00", "\r", "\n", " "} {
			if strings.Contains(layer, bad) {
				t.Fatalf("accepted path %q has %q in layer %q", req.Path, bad, layer)
			}
		}
		for seg := range strings.SplitSeq(layer, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted path %q has a dot segment in layer %q", req.Path, layer)
			}
		}
		next, err := url.PathUnescape(layer)
		if err != nil {
			t.Fatalf("accepted path %q has a layer net/url cannot decode: %q", req.Path, layer)
		}
		if next == layer {
			break
		}
		layer = next
	}
	if layer != c.Path {
		t.Fatalf("net/url decodes %q to %q, Check to %q", req.Path, layer, c.Path)
	}

	want := url.Values{}
	for _, kv := range req.Query {
		want[kv.Key] = append(want[kv.Key], kv.Value)
	}
	got, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		t.Fatalf("query %q does not parse: %v", u.RawQuery, err)
	}
	if len(want) == 0 {
		if len(got) != 0 || len(c.Query) != 0 {
			t.Fatalf("query appeared from nowhere: %q", u.RawQuery)
		}
		return
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(c.Query, want) {
		t.Fatalf("query does not round-trip: sent %v, Checked %v, input %v", got, c.Query, want)
	}
}

func assertSafePath(t *testing.T, p string) {
	t.Helper()
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, "//") {
		t.Fatalf("checked path %q has bad slashes", p)
	}
	for i := 0; i < len(p); i++ {
		if !pathByteAllowed(p[i]) || p[i] == '%' {
			t.Fatalf("checked path %q holds byte %q", p, p[i])
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg != "" && strings.Trim(seg, ".") == "" {
			t.Fatalf("checked path %q has dot segment %q", p, seg)
		}
	}
}

func assertHeaders(t *testing.T, req Request, c *Checked) {
	t.Helper()
	want := http.Header{}
	for _, kv := range req.Headers {
		want[http.CanonicalHeaderKey(kv.Key)] = []string{kv.Value}
		if !slices.Contains(AllowedHeaders(), http.CanonicalHeaderKey(kv.Key)) {
			t.Fatalf("header %q outside the allow-list accepted", kv.Key)
		}
	}
	if len(want) != len(req.Headers) {
		t.Fatalf("duplicate header names accepted: %v", req.Headers)
	}
	if !reflect.DeepEqual(c.Header, want) {
		t.Fatalf("Header = %v, want %v", c.Header, want)
	}
	for n, vs := range c.Header {
		if strings.ContainsAny(n+strings.Join(vs, ""), "\r\n\x00") {
			t.Fatalf("header %q carries CR, LF or NUL", n)
		}
	}
}

func assertBody(t *testing.T, req Request, c *Checked) {
	t.Helper()
	if req.Body == "" {
		if c.Body != nil {
			t.Fatalf("Body = %q for empty input", c.Body)
		}
		return
	}
	if req.Method == "GET" || req.Method == "DELETE" {
		t.Fatalf("%s accepted with a body", req.Method)
	}
	if string(c.Body) != req.Body || !json.Valid(c.Body) {
		t.Fatalf("Body = %q, input %q", c.Body, req.Body)
	}
}

// FuzzCanonicalJSON asserts that an accepted body's fingerprint keeps its
// meaning, does not depend on key order or spacing, and is a fixed point.
func FuzzCanonicalJSON(f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		c, err := Check(Request{Method: "POST", Path: "/2/tweets", Body: body})
		if err != nil {
			if body == "" {
				t.Fatalf("empty body refused: %v", err)
			}
			assertRefusal(t, err)
			var ae *apperr.Error
			errors.As(err, &ae)
			if ae.Extra["param"] != "body" {
				t.Fatalf("body-only input refused as %v", ae.Extra["param"])
			}
			return
		}
		fp, err := CanonicalJSON(c)
		if err != nil {
			t.Fatalf("CanonicalJSON: %v", err)
		}
		var parsed struct {
			Body json.RawMessage `json:"body"`
		}
		if err := json.Unmarshal(fp, &parsed); err != nil {
			t.Fatalf("fingerprint is not JSON: %v: %s", err, fp)
		}
		if body == "" {
			if parsed.Body != nil {
				t.Fatalf("absent body appears in fingerprint: %s", fp)
			}
			return
		}
		if !sameJSON(t, []byte(body), parsed.Body) {
			t.Fatalf("canonical body %s does not mean %s", parsed.Body, body)
		}

		again, err := Check(Request{Method: "POST", Path: "/2/tweets", Body: string(parsed.Body)})
		if err != nil {
			t.Fatalf("canonical body refused: %v", err)
		}
		if fp2, _ := CanonicalJSON(again); !bytes.Equal(fp, fp2) {
			t.Fatalf("not a fixed point:\n%s\n%s", fp, fp2)
		}

		rev := reversedJSON(t, []byte(body))
		if len(rev) > MaxBodyBytes {
			return
		}
		other, err := Check(Request{Method: "POST", Path: "/2/tweets", Body: string(rev)})
		if err != nil {
			t.Fatalf("reordered body %s refused: %v", rev, err)
		}
		if fp3, _ := CanonicalJSON(other); !bytes.Equal(fp, fp3) {
			t.Fatalf("key order changes the fingerprint:\n%s\n%s", fp, fp3)
		}
	})
}

// sameJSON compares two documents by meaning, numbers by their text.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(x []byte) any {
		dec := json.NewDecoder(bytes.NewReader(x))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("decode %q: %v", x, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

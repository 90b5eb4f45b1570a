package xrequest

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestMethod(t *testing.T) {
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		c := mustCheck(t, Request{Method: m, Path: "/2/tweets"})
		if c.Method != m {
			t.Errorf("Method = %q, want %q", c.Method, m)
		}
	}
	tests := []struct {
		method string
		want   string
	}{
		{"", "is required"},
		{"get", `"get" is not allowed`},
		{"PATCH", `"PATCH" is not allowed`},
		{"HEAD", "not allowed"},
		{"CONNECT", "not allowed"},
		{"TRACE", "not allowed"},
		{"GET ", "not allowed"},
		{"G\r\nET", `"G\r\nET"`},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			_, err := Check(Request{Method: tt.method, Path: "/2/tweets"})
			wantBlocked(t, err, "method", tt.want)
		})
	}
}

func TestHostAccepted(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "api.x.com"},
		{"api.x.com", "api.x.com"},
		{"API.X.COM", "api.x.com"},
		{"Api.X.Com", "api.x.com"},
		{"upload.x.com", "upload.x.com"},
		{"upload.twitter.com", "upload.twitter.com"},
		{"UPLOAD.TWITTER.COM", "upload.twitter.com"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c := mustCheck(t, Request{Method: "GET", Host: tt.in, Path: "/2/users/me"})
			if c.Host != tt.want {
				t.Fatalf("Host = %q, want %q", c.Host, tt.want)
			}
		})
	}
}

func TestHostRejected(t *testing.T) {
	tests := []struct {
		name, host, want string
	}{
		{"trailing dot", "api.x.com.", "must not end with a dot"},
		{"two trailing dots", "api.x.com..", "must not end with a dot"},
		{"userinfo", "user@api.x.com", "userinfo"},
		{"userinfo after host", "api.x.com@evil.example", "userinfo"},
		{"userinfo with password", "u:p@api.x.com", "userinfo"},
		{"port", "api.x.com:443", "must not include a port"},
		{"empty port", "api.x.com:", "must not include a port"},
		{"dotted ipv4", "127.0.0.1", "IP address literal"},
		{"private ipv4", "10.0.0.1", "IP address literal"},
		{"metadata ipv4", "169.254.169.254", "IP address literal"},
		{"ipv4 with port", "127.0.0.1:80", "IP address literal"},
		{"ipv4 trailing dot", "127.0.0.1.", "IP address literal"},
		{"decimal ipv4", "2130706433", "IP address literal"},
		{"octal ipv4", "0177.0.0.1", "IP address literal"},
		{"short ipv4", "127.1", "IP address literal"},
		{"hex ipv4", "0x7f000001", "IP address literal"},
		{"hex upper ipv4", "0X7F000001", "IP address literal"},
		{"mixed hex ipv4", "0x7f.0.0.1", "IP address literal"},
		{"numeric last label", "api.x.0x1", "IP address literal"},
		{"ipv6 loopback", "::1", "IP address literal"},
		{"ipv6 full", "2001:db8::1", "IP address literal"},
		{"ipv4-mapped ipv6", "::ffff:127.0.0.1", "IP address literal"},
		{"ipv6 unparseable", "1:2:3:4:5:6:7:8:9", "IP address literal"},
		{"bracketed ipv6", "[::1]", "bracketed IPv6"},
		{"bracketed ipv4-mapped", "[::ffff:127.0.0.1]", "bracketed IPv6"},
		{"bracketed with port", "[::1]:443", "bracketed IPv6"},
		{"ipv6 zone", "fe80::1%eth0", "percent-encoded"},
		{"percent encoded host", "api%2ex%2ecom", "percent-encoded"},
		{"cyrillic look-alike", "\u0430pi.x.com", "plain ASCII"},
		{"kelvin sign", "upload.twitter.\u212aom", "plain ASCII"},
		{"fullwidth dot", "api\uff0ex\uff0ecom", "plain ASCII"},
		{"punycode", "xn--pi-7ld.x.com", "punycode"},
		{"punycode inner label", "api.xn--x-0ga.com", "punycode"},
		{"punycode upper", "XN--PI-7LD.x.com", "punycode"},
		{"leading space", " api.x.com", "whitespace"},
		{"inner space", "api .x.com", "whitespace"},
		{"tab", "api.x.com\t", "control characters"},
		{"crlf header injection", "api.x.com\r\nHost: evil", "control characters"},
		{"nul", "api.x.com\x00.evil", "control characters"},
		{"del", "api.x.com\x7f", "control characters"},
		{"scheme", "https://api.x.com", "not a URL"},
		{"path", "api.x.com/2/tweets", "not a URL"},
		{"backslash", `api.x.com\evil`, "not a URL"},
		{"query", "api.x.com?x", "not a URL"},
		{"fragment", "api.x.com#x", "not a URL"},
		{"suffix attack", "api.x.com.evil.example", "is not allowed"},
		{"prefix attack", "evilapi.x.com", "is not allowed"},
		{"other x host", "ads-api.x.com", "is not allowed"},
		{"apex", "x.com", "is not allowed"},
		{"localhost", "localhost", "is not allowed"},
		{"empty label", "api..x.com", "is not allowed"},
		{"leading dot", ".api.x.com", "is not allowed"},
		{"too long", strings.Repeat("a", 300), "longer than 253"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(Request{Method: "GET", Host: tt.host, Path: "/2/users/me"})
			wantBlocked(t, err, "host", tt.want)
		})
	}
}

func TestHostErrorEchoIsBounded(t *testing.T) {
	host := "evil-" + strings.Repeat("é", 20) + ".example"
	_, err := Check(Request{Method: "GET", Host: strings.Repeat("a", 200) + ".example", Path: "/2/x"})
	ae := wantBlocked(t, err, "host", "is not allowed")
	if len(ae.Message) > 200 {
		t.Fatalf("message is %d bytes; echo of the host is not bounded: %q", len(ae.Message), ae.Message)
	}
	// Non-ASCII is refused before the echo, and the echo cut never splits
	// a rune.
	if got := truncate(host, 10); !strings.HasSuffix(got, "…") || strings.ContainsRune(got, '\uFFFD') {
		t.Fatalf("truncate = %q", got)
	}
}

func TestPathAccepted(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/", "/"},
		{"/2/tweets", "/2/tweets"},
		{"/2/users/by/username/jack_123", "/2/users/by/username/jack_123"},
		{"/1.1/media/upload.json", "/1.1/media/upload.json"},
		{"/2/users/me/", "/2/users/me/"},
		{"/2/a:b@c=e,f+g$h&i~j_k-l", "/2/a:b@c=e,f+g$h&i~j_k-l"},
		{"/2/tweets/%31%32%33", "/2/tweets/123"},
		{"/2/users%2Fme", "/2/users/me"},
		{"/2/tweets/%2531", "/2/tweets/1"},
		{"/2/tweets/%252531", "/2/tweets/1"},
		{"/2/x.y/..z", "/2/x.y/..z"},
		{"/2/" + strings.Repeat("a", MaxPathBytes-3), "/2/" + strings.Repeat("a", MaxPathBytes-3)},
	}
	for _, tt := range tests {
		t.Run(tt.in[:min(len(tt.in), 40)], func(t *testing.T) {
			c := mustCheck(t, Request{Method: "GET", Path: tt.in})
			if c.Path != tt.want {
				t.Fatalf("Path = %q, want %q", c.Path, tt.want)
			}
			u := c.URL()
			if u.EscapedPath() != tt.want {
				t.Fatalf("sent path = %q, want %q", u.EscapedPath(), tt.want)
			}
		})
	}
}

func TestPathRejected(t *testing.T) {
	tests := []struct {
		name, path, want string
	}{
		{"empty", "", "is required"},
		{"relative", "2/tweets", "must start with '/'"},
		{"absolute url", "https://evil.example/x", "must start with '/'"},
		{"protocol relative", "//evil.example/x", "exactly one '/'"},
		{"triple slash", "///x", "exactly one '/'"},
		{"too long", "/" + strings.Repeat("a", MaxPathBytes), "longer than 2048"},
		{"dotdot", "/2/../admin", "'..' segments"},
		{"dot", "/2/./tweets", "'..' segments"},
		{"trailing dotdot", "/2/tweets/..", "'..' segments"},
		{"trailing dot", "/2/tweets/.", "'..' segments"},
		{"root dotdot", "/..", "'..' segments"},
		{"triple dot", "/2/.../x", "'..' segments"},
		{"dotdot path param", "/2/..;/x", "must not contain ';'"},
		{"dotdot path param value", "/2/..;jsessionid=1/x", "must not contain ';'"},
		{"encoded dotdot lower", "/2/%2e%2e/x", "'..' segments (percent-encoded)"},
		{"encoded dotdot upper", "/2/%2E%2E/x", "(percent-encoded)"},
		{"half encoded dotdot", "/2/%2E./x", "(percent-encoded)"},
		{"other half encoded", "/2/.%2e/x", "(percent-encoded)"},
		{"encoded dot", "/2/%2e/x", "(percent-encoded)"},
		{"double encoded dotdot", "/2/%252e%252e/x", "'..' segments (percent-encoded)"},
		{"triple encoded dotdot", "/2/%25252e%25252e/x", "'..' segments (percent-encoded)"},
		{"encoded slash traversal", "/2/..%2fadmin", "'..' segments"},
		{"backslash", `/2\..\x`, "backslash"},
		{"backslash alone", `/2/tweets\`, "backslash"},
		{"encoded backslash", "/2/%5c/x", "backslash (percent-encoded)"},
		{"encoded backslash upper", "/2/%5C", "backslash (percent-encoded)"},
		{"double encoded backslash", "/2/%255c", "backslash (percent-encoded)"},
		{"double slash", "/2//tweets", "'//'"},
		{"trailing double slash", "/2/tweets//", "'//'"},
		{"encoded double slash", "/2/%2f/tweets", "'//' (percent-encoded)"},
		{"encoded leading slash", "/%2F%2Fevil.example", "'//' (percent-encoded)"},
		{"query", "/2/tweets?max_results=10", "'?'"},
		{"encoded query lower", "/2/tweets%3fx=1", "'?' (percent-encoded)"},
		{"encoded query upper", "/2/tweets%3Fx=1", "'?' (percent-encoded)"},
		{"fragment", "/2/tweets#frag", "'#'"},
		{"encoded fragment", "/2/tweets%23frag", "'#' (percent-encoded)"},
		{"nul", "/2/tweets\x00", "NUL byte (%00)"},
		{"encoded nul", "/2/tweets%00", "NUL byte (%00) (percent-encoded)"},
		{"crlf", "/2/tweets\r\nX-Injected: 1", "control characters"},
		{"encoded crlf", "/2/tweets%0d%0aX-Injected:%201", "control characters (percent-encoded)"},
		{"tab", "/2/tweets\t", "control characters"},
		{"del", "/2/tweets\x7f", "control characters"},
		{"encoded del", "/2/tweets%7f", "control characters (percent-encoded)"},
		{"space", "/2/tw eets", "whitespace"},
		{"encoded space", "/2/tweets%20", "whitespace (percent-encoded)"},
		{"invalid escape", "/2/tweets%zz", "invalid percent escape"},
		{"truncated escape", "/2/tweets%4", "invalid percent escape"},
		{"bare percent", "/2/tweets%", "invalid percent escape"},
		{"decodes to bare percent", "/2/100%25", "decodes to an invalid percent escape"},
		{"too deeply encoded", "/2/%252525252531", "more than 4 times"},
		{"non-ascii", "/2/tw\u00e9ets", "must be ASCII"},
		{"invalid utf-8", "/2/\xff", "must be ASCII"},
		{"encoded non-ascii", "/2/tw%C3%A9ets", "must be ASCII (percent-encoded)"},
		{"template", "/2/tweets/{id}", "replace placeholders"},
		{"encoded template", "/2/tweets/%7Bid%7D", "template brace (percent-encoded)"},
		{"angle bracket", "/2/<script>", `"<"`},
		{"pipe", "/2/a|b", `"|"`},
		{"quote", `/2/a"b`, `"\""`},
		{"encoded bang", "/2/a%21", `"!" (percent-encoded)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(Request{Method: "GET", Path: tt.path})
			wantBlocked(t, err, "path", tt.want)
		})
	}
}

// TestPathMatrixParametersRefused: a ';' makes a path mean different
// endpoints to servers that strip matrix parameters and to the classifier,
// so it is refused in every layer and the error names the path.
func TestPathMatrixParametersRefused(t *testing.T) {
	tests := []struct{ method, path, want string }{
		{"DELETE", "/2;/tweets/123", `"/2;/tweets/123" must not contain ';'`},
		{"DELETE", "/2/tweets;/123", `"/2/tweets;/123" must not contain ';'`},
		{"DELETE", "/2/tweets;v=1/123", `"/2/tweets;v=1/123" must not contain ';'`},
		{"DELETE", "/2/tweets/123;", `"/2/tweets/123;" must not contain ';'`},
		{"POST", "/2/users/1/likes;x", "must not contain ';'; matrix parameters"},
		{"DELETE", "/2/tweets%3B/123", `"/2/tweets%3B/123" must not contain ';' (percent-encoded)`},
		{"DELETE", "/2/tweets%3b/123", "(percent-encoded)"},
		{"DELETE", "/2/tweets%253B/123", "(percent-encoded)"},
		{"GET", "/2/users;/me", "must not contain ';'"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			_, err := Check(Request{Method: tt.method, Path: tt.path})
			wantBlocked(t, err, "path", tt.want, "matrix parameters")
		})
	}
}

func TestQuery(t *testing.T) {
	c := mustCheck(t, Request{Method: "GET", Path: "/2/tweets/search/recent", Query: []KV{
		{"query", "from:jack has:links & more=yes"},
		{"ids", "2"},
		{"ids", "1"},
		{"max_results", "10"},
		{"empty", ""},
		{"emoji", "🐦 tweet"},
	}})
	want := url.Values{
		"query":       {"from:jack has:links & more=yes"},
		"ids":         {"2", "1"},
		"max_results": {"10"},
		"empty":       {""},
		"emoji":       {"🐦 tweet"},
	}
	if !reflect.DeepEqual(c.Query, want) {
		t.Fatalf("Query = %v, want %v", c.Query, want)
	}
	back, err := url.ParseQuery(c.URL().RawQuery)
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Fatalf("query does not round-trip: %v %v", back, err)
	}
	if c := mustCheck(t, Request{Method: "GET", Path: "/2/x"}); c.Query == nil || c.URL().RawQuery != "" {
		t.Fatalf("no query: Query=%v RawQuery=%q", c.Query, c.URL().RawQuery)
	}
	maxPairs := make([]KV, MaxQueryParams)
	for i := range maxPairs {
		maxPairs[i] = KV{"k", "v"}
	}
	mustCheck(t, Request{Method: "GET", Path: "/2/x", Query: maxPairs})
	mustCheck(t, Request{Method: "GET", Path: "/2/x", Query: []KV{{strings.Repeat("k", MaxQueryKeyBytes), strings.Repeat("v", MaxQueryValueBytes)}}})
}

func TestQueryRejected(t *testing.T) {
	tooMany := make([]KV, MaxQueryParams+1)
	for i := range tooMany {
		tooMany[i] = KV{"k", "v"}
	}
	tests := []struct {
		name  string
		query []KV
		want  string
	}{
		{"too many", tooMany, "has 51 parameters; at most 50"},
		{"empty key", []KV{{"a", "1"}, {"", "x"}}, "parameter 1 has an empty key"},
		{"long key", []KV{{strings.Repeat("k", MaxQueryKeyBytes+1), "v"}}, "longer than 128 bytes"},
		{"long value", []KV{{"q", strings.Repeat("v", MaxQueryValueBytes+1)}}, `value of "q" is longer than 4096 bytes`},
		{"cr in key", []KV{{"a\rb", "v"}}, "CR or LF"},
		{"lf in value", []KV{{"q", "a\nb"}}, `value of "q" must not contain CR or LF`},
		{"crlf in value", []KV{{"q", "a\r\nHost: evil"}}, "CR or LF"},
		{"nul in key", []KV{{"a\x00", "v"}}, "NUL byte"},
		{"nul in value", []KV{{"q", "a\x00"}}, "NUL byte"},
		{"control in value", []KV{{"q", "a\x1b[31m"}}, "control characters"},
		{"tab in value", []KV{{"q", "a\tb"}}, "control characters"},
		{"invalid utf-8 value", []KV{{"q", "\xff"}}, "valid UTF-8"},
		{"invalid utf-8 key", []KV{{"\xfe", "v"}}, "valid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(Request{Method: "GET", Path: "/2/x", Query: tt.query})
			wantBlocked(t, err, "query", tt.want)
		})
	}
}

func TestHeaders(t *testing.T) {
	c := mustCheck(t, Request{Method: "GET", Path: "/2/x", Headers: []KV{
		{"accept", "application/json"},
		{"User-Agent", "my-agent/1.0 (a b\tc)"},
		{"content-type", "application/json; charset=utf-8"},
		{"IF-NONE-MATCH", `W/"etag"`},
		{"Accept-Language", "en-GB, fr;q=0.5"},
	}})
	want := http.Header{
		"Accept":          {"application/json"},
		"User-Agent":      {"my-agent/1.0 (a b\tc)"},
		"Content-Type":    {"application/json; charset=utf-8"},
		"If-None-Match":   {`W/"etag"`},
		"Accept-Language": {"en-GB, fr;q=0.5"},
	}
	if !reflect.DeepEqual(c.Header, want) {
		t.Fatalf("Header = %v, want %v", c.Header, want)
	}
	if c := mustCheck(t, Request{Method: "GET", Path: "/2/x"}); c.Header == nil || len(c.Header) != 0 {
		t.Fatalf("no headers: Header = %v", c.Header)
	}
	mustCheck(t, Request{Method: "GET", Path: "/2/x", Headers: []KV{{"User-Agent", strings.Repeat("v", MaxHeaderBytes-10)}}})
	for _, ct := range []string{"application/json", "Application/JSON", "application/json;charset=UTF-8"} {
		mustCheck(t, Request{Method: "POST", Path: "/2/tweets", Headers: []KV{{"Content-Type", ct}}, Body: `{"text":"x"}`})
	}
}

// TestHeadersOutsideAllowListRefused holds the allow-list: routing and
// override hints that some front end trusts, which a block-list let
// through, are refused by name, as is anything else not on the list.
func TestHeadersOutsideAllowListRefused(t *testing.T) {
	names := []string{
		// Reached the wire before the allow-list.
		"X-Original-Host", "X-Host", "X-HTTP-Host-Override", "X-Override-URL",
		"Client-IP", "X-Cluster-Client-IP", "X-ProxyUser-Ip",
		// Credentials, framing, forwarding and overrides.
		"authorization", "Authorization", "AUTHORIZATION", "host", "Host", "cookie", "set-cookie",
		"transfer-encoding", "Transfer-Encoding", "proxy-authorization", "proxy-connection",
		"content-length", "connection", "x-forwarded-for", "X-Forwarded-Host", "X-FORWARDED-PROTO",
		"forwarded", "te", "TE", "upgrade", "x-real-ip", "keep-alive", "trailer", "expect",
		"x-http-method-override", "X-HTTP-Method", "x-method-override", "x-original-url",
		"x-rewrite-url", "true-client-ip", "x-client-ip", "proxy-anything", "via", "cookie2",
		"Idempotency-Key",
		// Harmless-looking, but nothing an agent needs.
		"X-Custom", "X-Trace", "Accept-Encoding", "Cache-Control", "Accept_Language", "Accepts",
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			_, err := Check(Request{Method: "GET", Path: "/2/x", Headers: []KV{{n, "v"}}})
			ae := wantBlocked(t, err, "headers", "may not set "+asciiLower(n)+" (")
			if got, _ := ae.Extra["blocked_headers"].([]string); !reflect.DeepEqual(got, []string{asciiLower(n)}) {
				t.Fatalf("blocked_headers = %v", got)
			}
		})
	}
}

func TestHeadersContentTypeMustBeJSON(t *testing.T) {
	for _, ct := range []string{
		"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain",
		"application/json; charset=latin1", "application/json; boundary=x", "application/jsonx", "", "json",
	} {
		t.Run(ct, func(t *testing.T) {
			_, err := Check(Request{Method: "POST", Path: "/1.1/favorites/create.json", Headers: []KV{{"Content-Type", ct}}, Body: `{"a":"&id=5&"}`})
			wantBlocked(t, err, "headers", `"Content-Type" must be application/json`)
		})
	}
}

func TestAllowedHeadersIsACopy(t *testing.T) {
	h := AllowedHeaders()
	h[0] = "X-Original-Host"
	if _, err := Check(Request{Method: "GET", Path: "/2/x", Headers: []KV{{"X-Original-Host", "evil.example"}}}); err == nil {
		t.Fatal("mutating AllowedHeaders' result changed the allow-list")
	}
	if got := AllowedHeaders(); got[0] != "Accept" || len(got) != 5 {
		t.Fatalf("AllowedHeaders = %v", got)
	}
}

func TestHeadersBlockedAllNamedInOneError(t *testing.T) {
	_, err := Check(Request{Method: "GET", Path: "/2/x", Headers: []KV{
		{"Authorization", "Bearer sekrit-token"},
		{"Accept", "application/json"},
		{"Cookie", "session=sekrit-cookie"},
		{"X-Forwarded-For", "127.0.0.1"},
		{"authorization", "again"},
	}})
	ae := wantBlocked(t, err, "headers", "may not set authorization, cookie, x-forwarded-for (only accept, accept-language, content-type, if-none-match, user-agent are allowed")
	got, _ := ae.Extra["blocked_headers"].([]string)
	if want := []string{"authorization", "cookie", "x-forwarded-for"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("blocked_headers = %v, want %v", got, want)
	}
	if strings.Contains(ae.Error(), "sekrit") {
		t.Fatalf("error echoes a header value: %q", ae.Error())
	}
}

func TestHeadersRejected(t *testing.T) {
	tooMany := make([]KV, MaxHeaders+1)
	for i := range tooMany {
		tooMany[i] = KV{"Accept", "v"}
	}
	tests := []struct {
		name    string
		headers []KV
		want    string
	}{
		{"too many", tooMany, "has 21 entries; at most 20"},
		{"too big", []KV{{"Accept", strings.Repeat("v", 5000)}, {"User-Agent", strings.Repeat("v", 5000)}}, "at most 8192"},
		{"empty name", []KV{{"", "v"}}, "entry 0 has an empty name"},
		{"space in name", []KV{{"Bad Header", "v"}}, `"Bad Header" is not a valid HTTP header name`},
		{"colon in name", []KV{{"Accept:b", "v"}}, "not a valid HTTP header name"},
		{"non-ascii name", []KV{{"X-Ä", "v"}}, "not a valid HTTP header name"},
		{"crlf in name", []KV{{"Accept\r\nHost", "v"}}, "must not contain CR, LF or NUL"},
		{"nul in name", []KV{{"Accept\x00", "v"}}, "must not contain CR, LF or NUL"},
		{"crlf in value", []KV{{"Accept", "v\r\nHost: evil.example"}}, `value of "Accept" must not contain CR, LF or NUL`},
		{"lf in value", []KV{{"Accept", "v\nx"}}, "CR, LF or NUL"},
		{"nul in value", []KV{{"Accept", "v\x00"}}, "CR, LF or NUL"},
		{"control in value", []KV{{"Accept", "v\x01"}}, "visible ASCII"},
		{"non-ascii value", []KV{{"Accept", "caf\u00e9"}}, "visible ASCII"},
		{"duplicate exact", []KV{{"User-Agent", "1"}, {"User-Agent", "2"}}, "appears more than once"},
		{"duplicate case", []KV{{"Accept", "1"}, {"accept", "2"}}, `"accept" appears more than once`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(Request{Method: "GET", Path: "/2/x", Headers: tt.headers})
			ae := wantBlocked(t, err, "headers", tt.want)
			if strings.Contains(ae.Message, "evil.example") {
				t.Fatalf("error echoes a header value: %q", ae.Message)
			}
		})
	}
}

func TestBody(t *testing.T) {
	tests := []struct {
		method, body string
	}{
		{"POST", `{"text":"hello"}`},
		{"POST", `  {"text": "hello", "reply": {"in_reply_to_tweet_id": "1"}}  `},
		{"PUT", `{"hidden":true}`},
		{"POST", `null`},
		{"POST", `[{"a":1},{"a":2}]`},
		{"POST", strings.Repeat("[", MaxBodyDepth) + strings.Repeat("]", MaxBodyDepth)},
		{"POST", `{"big":"` + strings.Repeat("x", MaxBodyBytes-12) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.body[:min(len(tt.body), 30)], func(t *testing.T) {
			c := mustCheck(t, Request{Method: tt.method, Path: "/2/tweets", Body: tt.body})
			if string(c.Body) != tt.body {
				t.Fatalf("Body changed: %q", c.Body)
			}
		})
	}
	for _, m := range []string{"GET", "POST", "PUT", "DELETE"} {
		if c := mustCheck(t, Request{Method: m, Path: "/2/tweets"}); c.Body != nil {
			t.Fatalf("%s without body: Body = %q, want nil", m, c.Body)
		}
	}
}

func TestBodyRejected(t *testing.T) {
	tests := []struct {
		name, method, body, want string
	}{
		{"get with body", "GET", `{}`, "not allowed with GET"},
		{"delete with body", "DELETE", `{"a":1}`, "not allowed with DELETE"},
		{"not json", "POST", `text=hello`, "must be valid JSON"},
		{"truncated", "POST", `{"text":`, "must be valid JSON"},
		{"whitespace only", "POST", `   `, "must be valid JSON"},
		{"two values", "POST", `{} {}`, "must be valid JSON"},
		{"trailing comma", "PUT", `{"a":1,}`, "must be valid JSON"},
		{"duplicate key", "POST", `{"text":"a","text":"b"}`, `duplicate object key "text"`},
		{"nested duplicate key", "POST", `{"x":{"a":1,"b":{},"a":2}}`, `duplicate object key "a"`},
		{"escaped duplicate key", "POST", `{"a":1,"\u0061":2}`, "duplicate object key"},
		{"invalid utf-8", "POST", "{\"a\":\"\xff\"}", "valid UTF-8"},
		{"too big", "POST", `"` + strings.Repeat("x", MaxBodyBytes) + `"`, "at most 1048576"},
		{"too deep", "POST", strings.Repeat("[", MaxBodyDepth+1) + strings.Repeat("]", MaxBodyDepth+1), "deeper than 64"},
		{"too deep objects", "PUT", strings.Repeat(`{"a":`, MaxBodyDepth+1) + "1" + strings.Repeat("}", MaxBodyDepth+1), "deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Check(Request{Method: tt.method, Path: "/2/tweets", Body: tt.body})
			wantBlocked(t, err, "body", tt.want)
		})
	}
}

func TestCheckOrderReportsFirstParameter(t *testing.T) {
	bad := Request{Method: "PATCH", Host: "evil", Path: "x", Query: []KV{{"", ""}}, Headers: []KV{{"Host", "x"}}, Body: "{"}
	order := []string{"method", "host", "path", "query", "headers", "body"}
	for _, want := range order {
		_, err := Check(bad)
		wantBlocked(t, err, want)
		switch want {
		case "method":
			bad.Method = "GET"
		case "host":
			bad.Host = ""
		case "path":
			bad.Path = "/2/x"
		case "query":
			bad.Query = nil
		case "headers":
			bad.Headers = nil
		}
	}
}

func TestURL(t *testing.T) {
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"default host", Request{Method: "GET", Path: "/2/users/me"}, "https://api.x.com/2/users/me"},
		{"upload host", Request{Method: "POST", Host: "UPLOAD.X.COM", Path: "/2/media/upload"}, "https://upload.x.com/2/media/upload"},
		{"query encoded", Request{Method: "GET", Path: "/2/tweets/search/recent", Query: []KV{{"query", "a b&c=d#e"}, {"max_results", "10"}}},
			"https://api.x.com/2/tweets/search/recent?max_results=10&query=a+b%26c%3Dd%23e"},
		{"decoded path", Request{Method: "GET", Path: "/2/tweets/%31"}, "https://api.x.com/2/tweets/1"},
		{"sub-delims kept", Request{Method: "GET", Path: "/2/a:b@c=e,f+g$h&i"}, "https://api.x.com/2/a:b@c=e,f+g$h&i"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustCheck(t, tt.req)
			u := c.URL()
			if got := u.String(); got != tt.want {
				t.Fatalf("URL = %q, want %q", got, tt.want)
			}
			if u.Scheme != "https" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
				t.Fatalf("URL has unexpected parts: %#v", u)
			}
		})
	}
}

func TestAllowedHostsIsACopy(t *testing.T) {
	h := AllowedHosts()
	h[0] = "evil.example"
	if _, err := Check(Request{Method: "GET", Host: "evil.example", Path: "/x"}); err == nil {
		t.Fatal("mutating AllowedHosts' result changed the allowlist")
	}
	if got := AllowedHosts(); got[0] != "api.x.com" || len(got) != 3 {
		t.Fatalf("AllowedHosts = %v", got)
	}
}

func TestPaginationStripped(t *testing.T) {
	in := []KV{{"query", "x"}, {"pagination_token", "a"}, {"max_results", "10"}, {"next_token", "b"}, {"Pagination_Token", "c"}}
	orig := append([]KV(nil), in...)
	got := PaginationStripped(in)
	want := []KV{{"query", "x"}, {"max_results", "10"}, {"Pagination_Token", "c"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("PaginationStripped = %v, want %v", got, want)
	}
	if !reflect.DeepEqual(in, orig) {
		t.Fatalf("input modified: %v", in)
	}
	if got := PaginationStripped(nil); got == nil || len(got) != 0 {
		t.Fatalf("PaginationStripped(nil) = %#v, want empty non-nil", got)
	}
}

func TestStringHidesValues(t *testing.T) {
	c := mustCheck(t, Request{Method: "POST", Path: "/2/tweets",
		Query:   []KV{{"q", "query-value"}},
		Headers: []KV{{"User-Agent", "header-value"}},
		Body:    `{"text":"body-value"}`})
	s := c.String()
	for _, secret := range []string{"query-value", "header-value", "body-value"} {
		if strings.Contains(s, secret) {
			t.Fatalf("String() = %q contains %q", s, secret)
		}
	}
	for _, want := range []string{"POST", "https://api.x.com/2/tweets", "q", "User-Agent", "21B"} {
		if !strings.Contains(s, want) {
			t.Fatalf("String() = %q lacks %q", s, want)
		}
	}
	var nilChecked *Checked
	if nilChecked.String() != "<nil>" {
		t.Fatal("nil String")
	}
}

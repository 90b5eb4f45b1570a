package redact_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/redact"
)

func TestURLCredentials(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"user and key", "http://user:key@host/v1", "http://******@host/v1"},
		{"user only", "https://token@proxy.example:8443", "https://******@proxy.example:8443"},
		{"at in password", "http://u:p@ss@host/x", "http://******@host/x"},
		{"upper-case scheme", "HTTPS://u:k@h", "HTTPS://******@h"},
		{"socks proxy", "socks5://u:k@127.0.0.1:1080", "socks5://******@127.0.0.1:1080"},
		{"inside an error", `Post "http://u:k@h/v1/chat": dial tcp: refused`, `Post "http://******@h/v1/chat": dial tcp: refused`},
		{"two urls", "a http://a:1@x b https://b:2@y", "a http://******@x b https://******@y"},
		{"no credentials", "http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"},
		{"at in the path", "https://host/@user", "https://host/@user"},
		{"at in the query", "https://host/p?mail=a@b", "https://host/p?mail=a@b"},
		{"mail address", "write to a@b.example", "write to a@b.example"},
		{"empty", "", ""},
		{"gemini key", "https://generativelanguage.googleapis.com/v1beta/openai?key=AIzaSyA-1", "https://generativelanguage.googleapis.com/v1beta/openai?key=******"},
		{"api_key", "https://h/v1?api_key=k1&model=m", "https://h/v1?api_key=******&model=m"},
		{"access_token after others", "https://h/v1?a=1&access_token=t0k&b=2", "https://h/v1?a=1&access_token=******&b=2"},
		{"token", "http://127.0.0.1:9/x?token=t0k", "http://127.0.0.1:9/x?token=******"},
		{"password", "https://h/?user=me&password=pw", "https://h/?user=me&password=******"},
		{"camel case", "https://h/?apiKey=k1&accessToken=t2&clientSecret=s3", "https://h/?apiKey=******&accessToken=******&clientSecret=******"},
		{"upper case", "https://h/?API_KEY=k1&Key=k2", "https://h/?API_KEY=******&Key=******"},
		{"escaped name", "https://h/?api%5Fkey=k1", "https://h/?api%5Fkey=******"},
		{"signed url", "https://b.example/o?X-Amz-Credential=c1&X-Amz-Signature=s1&X-Amz-Expires=60", "https://b.example/o?X-Amz-Credential=******&X-Amz-Signature=******&X-Amz-Expires=60"},
		{"in a fragment", "https://h/cb#access_token=t0k&state=s", "https://h/cb#access_token=******&state=s"},
		{"nested url", "https://h/login?next=https://i/?token=t0k", "https://h/login?next=https://i/?token=******"},
		{"user info and key", "https://u:p@h/v1?key=k1", "https://******@h/v1?key=******"},
		{"inside an error with a query", `Post "https://h/v1/chat?key=k1": dial tcp: refused`, `Post "https://h/v1/chat?key=******": dial tcp: refused`},
		{"empty value", "https://h/?key=", "https://h/?key="},
		{"harmless parameters", "https://h/v1?model=m&page=2&monkey=1&keyword=go&tokens=5", "https://h/v1?model=m&page=2&monkey=1&keyword=go&tokens=5"},
		{"query without a url", "see ?key=k1", "see ?key=k1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := redact.URLCredentials(tc.in); got != tc.want {
				t.Errorf("URLCredentials(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func FuzzURLCredentials(f *testing.F) {
	for _, s := range []string{"http://u:k@h/", "x", "https://a@b@c/d", "ftp://:@/", "https://h/?key=k&a=b#token=t", "http://h/?next=http://i/?token=t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := redact.URLCredentials(s)
		if again := redact.URLCredentials(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
		if !strings.Contains(s, "://") && out != s {
			t.Fatalf("text without a URL changed: %q -> %q", s, out)
		}
	})
}

func TestLogAttr(t *testing.T) {
	var b strings.Builder
	log := slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{ReplaceAttr: redact.LogAttr}))
	u, err := url.Parse("http://user:k3y@127.0.0.1:9/v1")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("call failed",
		"url", "http://user:k3y@127.0.0.1:9/v1",
		"err", fmt.Errorf("post %q: refused", "https://p:k3y@proxy.example"),
		"parsed", u,
		slog.Group("llm", "base_url", "http://a:k3y@h/v1"),
		"gemini", "https://gen.example/v1beta/openai?key=k3y",
		"plain", "no credentials here")
	out := b.String()
	if strings.Contains(out, "k3y") {
		t.Errorf("log line shows URL credentials: %s", out)
	}
	for _, want := range []string{"127.0.0.1:9/v1", "proxy.example", "no credentials here", redact.Mask} {
		if !strings.Contains(out, want) {
			t.Errorf("log line lost %q: %s", want, out)
		}
	}
}

func TestApprovalLinksMasked(t *testing.T) {
	const tok = "AQAAAAAAAAAHZGVmYXVsdAGq3xLmFq9fJ0n2mZb1c4yE"
	for in, want := range map[string]string{
		"GET https://phone.example.ts.net/a/" + tok + " 200": "GET https://phone.example.ts.net/a/" + redact.Mask + " 200",
		"path=/a/" + tok + "?x=1":                            "path=/a/" + redact.Mask + "?x=1",
		"/a/short stays":                                     "/a/short stays",
		// A receiver quoting the link back in JSON or an encoded query.
		`{"error":"no route for https:\/\/phone.example\/a\/` + tok + `"}`:  `{"error":"no route for https:\/\/phone.example\/a\/` + redact.Mask + `"}`,
		`{"url":"https:\u002f\u002fphone.example\u002fa\u002f` + tok + `"}`: `{"url":"https:\u002f\u002fphone.example\u002fa\u002f` + redact.Mask + `"}`,
		`"\u002Fa\u002F` + tok + `"`:                                        `"\u002Fa\u002F` + redact.Mask + `"`,
		`"{\"u\":\"\\/a\\/` + tok + `\"}"`:                                  `"{\"u\":\"\\/a\\/` + redact.Mask + `\"}"`,
		"next=https%3A%2F%2Fphone.example%2Fa%2F" + tok:                     "next=https%3A%2F%2Fphone.example%2Fa%2F" + redact.Mask,
		"next=%2fa%2f" + tok + "&x=1":                                       "next=%2fa%2f" + redact.Mask + "&x=1",
		"twice %252Fa%252F" + tok:                                           "twice %252Fa%252F" + redact.Mask,
		"see /approvals/12 and /ui/a/":                                      "see /approvals/12 and /ui/a/",
	} {
		if got := redact.ApprovalLinks(in); got != want {
			t.Errorf("ApprovalLinks(%q) = %q, want %q", in, got, want)
		}
	}
	var s redact.Secrets
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: s.ReplaceAttr}))
	log.Info("sent http://127.0.0.1:8767/a/"+tok, "link", "http://127.0.0.1:8767/a/"+tok, "err", errors.New("post /a/"+tok+": refused"))
	buf2 := bytes.Buffer{}
	slog.New(slog.NewTextHandler(&buf2, &slog.HandlerOptions{ReplaceAttr: redact.LogAttr})).Info("x", "link", "/a/"+tok)
	for _, out := range []string{buf.String(), buf2.String()} {
		if strings.Contains(out, tok) {
			t.Errorf("log holds the link token: %s", out)
		}
		if !strings.Contains(out, "/a/"+redact.Mask) {
			t.Errorf("log lacks the masked link: %s", out)
		}
	}
}

func TestURLQuery(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no query", "https://h.example/a.png", "https://h.example/a.png"},
		{"presigned", "https://b.example/o.png?X-Amz-Credential=c1&X-Amz-Signature=s1&X-Amz-Expires=60",
			"https://b.example/o.png?X-Amz-Credential=******&X-Amz-Signature=******&X-Amz-Expires=******"},
		{"a name no list knows", "https://cdn.example/a.png?hdnts=exp~1~hmac~abc", "https://cdn.example/a.png?hdnts=******"},
		{"bare value", "https://cdn.example/a.png?s3cr3tvalue", "https://cdn.example/a.png?******"},
		{"semicolons", "https://h.example/a.png?a=1;token=t0k", "https://h.example/a.png?a=******&token=******"},
		{"fragment dropped", "https://h.example/a.png?x=1#access_token=t0k", "https://h.example/a.png?x=******"},
		{"user info", "https://u:pw@h.example/a.png", "https://%2A%2A%2A%2A%2A%2A@h.example/a.png"},
		{"not a URL", "https://h.example/%zz?token=t0k", redact.Mask},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := redact.URLQuery(tc.in); got != tc.want {
				t.Errorf("URLQuery(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

package xsim

import (
	"strings"
	"testing"
)

// concrete turns a route template into a request path and body for the
// demo world.
func (e *env) concrete(key string) (method, path string, body any) {
	method, tpl, _ := strings.Cut(key, " ")
	tid := e.someTweet()
	repl := map[string]string{
		"{id}": e.me, "{tweet_id}": tid, "{source_tweet_id}": tid, "{source_user_id}": e.me,
		"{target_user_id}": e.userID("hn_hank"), "{username}": DemoUsername,
	}
	if strings.HasPrefix(tpl, "/2/tweets/{id}") {
		repl["{id}"] = tid
	}
	path = tpl
	for k, v := range repl {
		path = strings.ReplaceAll(path, k, v)
	}
	switch {
	case key == "GET /2/tweets" || key == "GET /2/users":
		path += "?ids=" + e.me
	case key == "GET /2/tweets/search/recent":
		path += "?query=rust"
	case key == "GET /2/media/upload":
		path += "?command=STATUS&media_id=1"
	}
	switch key {
	case "POST /2/tweets":
		body = map[string]any{"text": "route check"}
	case "POST /2/users/{id}/likes", "POST /2/users/{id}/retweets", "POST /2/users/{id}/bookmarks":
		body = map[string]any{"tweet_id": tid}
	case "POST /2/users/{id}/following":
		body = map[string]any{"target_user_id": e.userID("hn_hank")}
	case "POST /2/media/upload/initialize":
		body = map[string]any{"media_type": "image/png", "total_bytes": 10}
	case "POST /2/media/metadata":
		body = map[string]any{"id": "1", "metadata": map[string]any{"alt_text": map[string]any{"text": "x"}}}
	}
	return method, path, body
}

func apiRoutes(s *Server) []string {
	var out []string
	for _, k := range s.Routes() {
		if r := s.routes[k]; r.api {
			out = append(out, k)
		}
	}
	return out
}

func TestEveryRouteRequiresAToken(t *testing.T) {
	e := newEnv(t)
	for _, key := range apiRoutes(e.s) {
		method, path, body := e.concrete(key)
		for name, tok := range map[string]string{"none": "", "bogus": "bogus"} {
			r := e.doTok(method, path, tok, body)
			if r.status != 401 || r.body["type"] != typeBlank {
				t.Errorf("%s with %s token: %d %s", key, name, r.status, r.raw)
			}
		}
	}
	for k, v := range e.s.Counters() {
		if v != 0 {
			t.Errorf("%s = %d after unauthenticated calls", k, v)
		}
	}
}

func TestEveryRouteChecksScopes(t *testing.T) {
	e := newEnv(t)
	bare, _, _ := e.s.IssueToken("", []string{"offline.access"})
	for _, key := range apiRoutes(e.s) {
		if len(e.s.routes[key].scopes) == 0 {
			continue // usage needs an app token, which has no scopes
		}
		method, path, body := e.concrete(key)
		r := e.doTok(method, path, bare, body)
		if r.status != 403 || !strings.Contains(r.body["detail"].(string), "scope") {
			t.Errorf("%s without scopes: %d %s", key, r.status, r.raw)
		}
	}
}

func TestEveryRouteIsRateLimited(t *testing.T) {
	e := newEnv(t)
	for _, key := range apiRoutes(e.s) {
		e.s.SetRateLimit(key, RateLimit{Limit: 1})
		method, path, body := e.concrete(key)
		first := e.do(method, path, body)
		if first.header.Get("x-rate-limit-limit") != "1" || first.header.Get("x-rate-limit-remaining") != "0" || first.header.Get("x-rate-limit-reset") == "" {
			t.Errorf("%s headers: %v", key, first.header)
		}
		r := e.do(method, path, body)
		if r.status != 429 || r.body["title"] != "Too Many Requests" {
			t.Errorf("%s second call: %d %s", key, r.status, r.raw)
		}
	}
}

package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// PolicyInfo describes an account's policy: its rules in the order they
// apply, its limits and their live counters.
type PolicyInfo struct {
	Rules  []policy.Rule
	Limits []policy.Limit
	// Usage reads the limit counters by key (policy.CounterReader's
	// Snapshot); nil when there are none.
	Usage func(ctx context.Context) (map[string]policy.Usage, error)
}

// acct is the account a request names (?account= or a form's account
// field); the first account when it names none.
func (s *Server) acct(r *http.Request) (*Account, error) {
	name := r.URL.Query().Get("account")
	if name == "" && r.Method == http.MethodPost {
		name = r.PostFormValue("account")
	}
	if name == "" {
		return s.accts[0], nil
	}
	names := make([]string, 0, len(s.accts))
	for _, a := range s.accts {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return nil, apperr.New(apperr.InvalidInput, "account: %q is not one of %s", name, strings.Join(names, ", "))
}

// acctQuery is the query that keeps a page on account a ("" for the first).
func (s *Server) acctQuery(a *Account) string {
	if a == nil || a == s.accts[0] {
		return ""
	}
	return "account=" + url.QueryEscape(a.Name)
}

// at is path on account a's pages.
func (s *Server) at(a *Account, path string) string {
	if q := s.acctQuery(a); q != "" {
		if strings.Contains(path, "?") {
			return path + "&" + q
		}
		return path + "?" + q
	}
	return path
}

// acctOrFail resolves the request's account, answering the error page
// when it names none that exists.
func (s *Server) acctOrFail(w http.ResponseWriter, r *http.Request, sess *session) *Account {
	a, err := s.acct(r)
	if err != nil {
		s.fail(w, r, sess, http.StatusBadRequest, err)
		return nil
	}
	return a
}

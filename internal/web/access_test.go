package web

import (
	"html"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// TestSettingsSayTheXAccess: the settings page says the account's X API
// access level, in words what it allows, the tools refused before X and
// the prices in force (a summoned reply $0.010, an owned read $0.001).
func TestSettingsSayTheXAccess(t *testing.T) {
	for _, tc := range []struct {
		access config.Access
		want   []string
		not    []string
	}{
		{config.AccessPayPerUse, []string{"X API access: <code>pay_per_use</code>", "no likes, follows or quote posts",
			"Refused before X:", "<code>x_like_tweet</code>", "<code>x_quote_tweet</code>", "$0.010", "$0.001", "$0.200"}, nil},
		{config.AccessEnterprise, []string{"X API access: <code>enterprise</code>", "every API feature", "$0.010"}, []string{"Refused before X:"}},
	} {
		t.Run(string(tc.access), func(t *testing.T) {
			s := newSite(t, func(c *config.Config) { c.XAPI.Access = tc.access })
			c, _ := s.client()
			_, body := s.get(c, "/settings")
			body = html.UnescapeString(body)
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("the settings page lacks %q", w)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("the settings page says %q", w)
				}
			}
		})
	}
}

package web

import (
	"context"
	"html"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/optouts"
)

// TestSettingsListOptOuts: the settings page lists the users on the
// account's suppression list, with the phrase they used and the command
// that lifts it; an empty list says so.
func TestSettingsListOptOuts(t *testing.T) {
	s := newSite(t, nil)
	c, _ := s.client()
	_, body := s.get(c, "/settings")
	if !strings.Contains(html.UnescapeString(body), "No user has told the account to stop") {
		t.Fatalf("the settings page does not say the suppression list is empty")
	}
	list, err := s.a.OptOuts()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := list.Record(context.Background(), optouts.Message{ID: "901", AuthorID: "77", AuthorUsername: "Rae", Text: "please STOP"}); err != nil {
		t.Fatal(err)
	}
	_, body = s.get(c, "/settings")
	body = html.UnescapeString(body)
	for _, w := range []string{"Users who told the account to stop", "@rae", "77", "<code>stop</code>", "tuitbot optouts clear"} {
		if !strings.Contains(body, w) {
			t.Errorf("the settings page lacks %q", w)
		}
	}
}

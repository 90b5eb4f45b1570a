package web

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
)

// shownOnPage is the content hash the page's form named by action posts
// for item id.
func shownOnPage(t *testing.T, page string, id int64, action string) string {
	t.Helper()
	re := regexp.MustCompile(fmt.Sprintf(`action="/approvals/%d/%s" class="%s"><input type="hidden" name="csrf" value="[^"]*"><input type="hidden" name="shown" value="([0-9a-f]{64})">`,
		id, action, action))
	m := re.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the %s form of item %d does not post what the page shows", action, id)
	}
	return m[1]
}

// timesOnX counts the posts of the sandbox world with exactly text.
func (s *site) timesOnX(text string) int {
	n := 0
	for _, tw := range s.a.Sim.Server.World().Tweets {
		if tw.Text == text {
			n++
		}
	}
	return n
}

// The approvals page's forms post the hash of what the page showed; after
// another reviewer's edit, approving, rejecting or bulk-approving from
// the old page decides nothing and says the item changed, and a form
// without the hash decides nothing either. From the page as it is now,
// the edited post is what reaches X.
func TestWebDecidesOnlyWhatThePageShowed(t *testing.T) {
	s := newSite(t, nil)
	const t0, t1 = "T0 as the page showed it", "T1 from another reviewer"
	id := s.postTweet(s.mcpClient(), t0)
	c, csrf := s.client()
	_, page := s.get(c, "/approvals")
	approveShown, rejectShown := shownOnPage(t, page, id, "approve"), shownOnPage(t, page, id, "reject")
	if !strings.Contains(page, fmt.Sprintf(`name="shown-%d" value="%s" form="bulk"`, id, approveShown)) {
		t.Fatal("the bulk form does not carry what the card shows")
	}
	if _, body := s.postForm(c, fmt.Sprintf("/approvals/%d/edit", id), url.Values{"csrf": {csrf}, "text": {t1}}); !strings.Contains(body, "Edited") {
		t.Fatalf("the second reviewer's edit failed:\n%s", body)
	}
	for _, tt := range []struct {
		name, path string
		form       url.Values
		say        string
	}{
		{"approve", "approve", url.Values{"shown": {approveShown}}, "changed since you saw it"},
		{"reject", "reject", url.Values{"shown": {rejectShown}}, "changed since you saw it"},
		{"bulk approve", "bulk", url.Values{"action": {"approve"}, "id": {itoa(id)}, "shown-" + itoa(id): {approveShown}}, "changed since you saw it"},
		{"approve without the hash", "approve", url.Values{}, "does not say what it showed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.form.Set("csrf", csrf)
			path := "/approvals/bulk"
			if tt.path != "bulk" {
				path = fmt.Sprintf("/approvals/%d/%s", id, tt.path)
			}
			_, body := s.postForm(c, path, tt.form)
			if !strings.Contains(body, tt.say) {
				t.Errorf("the answer does not say %q:\n%s", tt.say, body)
			}
			it, err := s.a.Gateway.Item(context.Background(), id)
			if err != nil || it.Status != gateway.ApprovalPending || !strings.Contains(string(it.Params), t1) {
				t.Fatalf("item after a decision from the old page: %+v %v; want pending with the edit", it, err)
			}
			if s.timesOnX(t0)+s.timesOnX(t1) != 0 {
				t.Fatal("a decision from the old page posted")
			}
		})
	}
	_, page = s.get(c, "/approvals")
	s.postForm(c, fmt.Sprintf("/approvals/%d/approve", id), url.Values{"csrf": {csrf}, "shown": {shownOnPage(t, page, id, "approve")}})
	if it, _ := s.a.Gateway.Item(context.Background(), id); it.Status != gateway.ApprovalExecuted || s.timesOnX(t1) != 1 || s.timesOnX(t0) != 0 {
		t.Fatalf("approved from the page as it is: item %s, %d posts of the edit, %d of the original", it.Status, s.timesOnX(t1), s.timesOnX(t0))
	}
}

// The phone taps Approve on a link for T0 while a second reviewer edits
// the item to T1 on the web page, both started together, many times, on
// SQLite and PostgreSQL. X (the emulator) only ever gets T0, only when
// the link answers that it approved, and the item records what X got; a
// link that lost the race says the post was edited and nothing is posted.
func TestPhoneLinkRacingAWebEdit(t *testing.T) {
	const trials = 50
	storetest.ForEachBackend(t, func(t *testing.T) {
		s := newSite(t, func(c *config.Config) {
			linksOn(c)
			c.Limits.MaxTweetsPerDay, c.MCPPolicy.MaxMutationsPerHour = 10*trials, 10*trials
			if storetest.BackendOf(t) == storetest.Postgres {
				c.Storage.DatabaseURL = storetest.Target(t)
			}
		})
		cs := s.mcpClient()
		c, csrf := s.client()
		post := func(path string, form url.Values, host string) (int, string, error) {
			req, err := http.NewRequest(http.MethodPost, s.base+path, strings.NewReader(form.Encode()))
			if err != nil {
				return 0, "", err
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if host != "" {
				req.Host = host
			}
			resp, err := c.Do(req)
			if err != nil {
				return 0, "", err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b), err
		}
		var wrong []string
		var approved, refused int
		for i := range trials {
			t0, t1 := fmt.Sprintf("T0 of trial %d", i), fmt.Sprintf("T1 of trial %d", i)
			id, l := s.issue(cs, t0, "phone")
			start := make(chan struct{})
			type answer struct {
				status int
				page   string
				err    error
			}
			tap, edit := make(chan answer, 1), make(chan answer, 1)
			go func() {
				<-start
				st, page, err := post(l["approve"], url.Values{"csrf": {l["approve_csrf"]}}, "phone.example.ts.net")
				tap <- answer{st, page, err}
			}()
			go func() {
				<-start
				st, page, err := post(fmt.Sprintf("/approvals/%d/edit", id), url.Values{"csrf": {csrf}, "text": {t1}}, "")
				edit <- answer{st, page, err}
			}()
			close(start)
			a, e := <-tap, <-edit
			if a.err != nil || e.err != nil {
				t.Fatalf("trial %d: %v / %v", i, a.err, e.err)
			}
			it, err := s.a.Gateway.Item(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			onX0, onX1 := s.timesOnX(t0), s.timesOnX(t1)
			switch {
			case a.status == http.StatusOK && strings.Contains(a.page, "Approved"):
				approved++
				if onX0 != 1 || onX1 != 0 || !strings.Contains(string(it.Params), t0) {
					wrong = append(wrong, fmt.Sprintf("trial %d: the link answered approved; X has T0 %d times and T1 %d times; the item records %s",
						i, onX0, onX1, it.Params))
				}
			case a.status == http.StatusGone:
				refused++
				if onX0+onX1 != 0 || it.Status != gateway.ApprovalPending {
					wrong = append(wrong, fmt.Sprintf("trial %d: the link was refused (%q) yet X has T0 %d times and T1 %d times (item %s)",
						i, a.page, onX0, onX1, it.Status))
				} else if _, err := s.a.Gateway.Reject(context.Background(), id, "cleanup", ""); err != nil {
					t.Fatal(err)
				}
			default:
				t.Fatalf("trial %d: the link answered %d:\n%s", i, a.status, a.page)
			}
		}
		t.Logf("%d trials: %d approved as shown, %d refused as edited", trials, approved, refused)
		if len(wrong) > 0 {
			t.Errorf("%d of %d trials posted other than the link showed:\n%s", len(wrong), trials, strings.Join(wrong, "\n"))
		}
	})
}

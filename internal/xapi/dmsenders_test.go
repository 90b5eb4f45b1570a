package xapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

// memSenders is a DMSenderRecorder that keeps what it is told.
type memSenders struct {
	mu   sync.Mutex
	from []xapi.DMSender
}

func (m *memSenders) RecordDMSenders(_ context.Context, s []xapi.DMSender) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.from = append(m.from, s...)
	return nil
}

func (m *memSenders) users() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, s := range m.from {
		if !slices.Contains(out, s.UserID) {
			out = append(out, s.UserID)
		}
	}
	return out
}

// TestDMSendersFedByEveryRead: every read of the account's DM events,
// typed (x_get_dm_events) or universal (x_get of /2/dm_events or of a
// conversation's events), hands the recorder the users who wrote, with
// the event that proves it; the account's own messages are never handed
// over, and a read of anything else, or one X refused, hands over
// nothing.
func TestDMSendersFedByEveryRead(t *testing.T) {
	ctx := context.Background()
	sender := url.Values{"expansions": {"sender_id"}}
	cases := []struct {
		name  string
		read  func(c *xapi.Client, wrote string) error
		wants bool
	}{
		{"typed, every conversation", func(c *xapi.Client, _ string) error {
			_, err := c.DMEvents(ctx, xapi.DMEventParams{MaxResults: 50})
			return err
		}, true},
		{"typed, one conversation", func(c *xapi.Client, wrote string) error {
			_, err := c.DMEvents(ctx, xapi.DMEventParams{ParticipantID: wrote, MaxResults: 50})
			return err
		}, true},
		{"universal /2/dm_events", func(c *xapi.Client, _ string) error {
			return rawGet(ctx, c, "/2/dm_events", sender, http.StatusOK)
		}, true},
		{"universal, the conversation with a participant", func(c *xapi.Client, wrote string) error {
			return rawGet(ctx, c, "/2/dm_conversations/with/"+wrote+"/dm_events", sender, http.StatusOK)
		}, true},
		{"universal, without the sender asked for", func(c *xapi.Client, _ string) error {
			return rawGet(ctx, c, "/2/dm_events", nil, http.StatusOK)
		}, false},
		{"universal, refused by X", func(c *xapi.Client, _ string) error {
			return rawGet(ctx, c, "/2/dm_events", url.Values{"expansions": {"sender_id"}, "max_results": {"0"}}, http.StatusBadRequest)
		}, false},
		{"universal, another route", func(c *xapi.Client, wrote string) error {
			return rawGet(ctx, c, "/2/users/"+wrote, nil, http.StatusOK)
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &memSenders{}
			s := newSim(t, nil, func(o *xapi.Options) { o.DMSenders = rec })
			var takers []string
			for _, u := range s.srv.World().Users {
				if u.ID != s.srv.DemoUserID() && !u.DMsFromFollowedOnly && !u.Protected {
					takers = append(takers, u.ID)
				}
			}
			wrote, wroteTo := takers[0], takers[1]
			ev, err := s.srv.DMAs(wrote, "Hi, a question")
			if err != nil {
				t.Fatal(err)
			}
			// The account's own messages: to the user who wrote and to one
			// who did not.
			for _, to := range []string{wrote, wroteTo} {
				if _, _, err := s.c.SendDM(ctx, to, "Hello from the account", ""); err != nil {
					t.Fatalf("SendDM: %v", err)
				}
			}
			if err := tc.read(s.c, wrote); err != nil {
				t.Fatal(err)
			}
			want := []string(nil)
			if tc.wants {
				want = []string{wrote}
			}
			if got := rec.users(); !slices.Equal(got, want) {
				t.Fatalf("recorded senders %v, want %v (the account is %s)", got, want, s.srv.DemoUserID())
			}
			if tc.wants && rec.from[0].EventID != ev {
				t.Fatalf("recorded event %s, want %s", rec.from[0].EventID, ev)
			}
		})
	}
}

func rawGet(ctx context.Context, c *xapi.Client, path string, q url.Values, status int) error {
	res, err := c.Raw(ctx, xapi.RawRequest{Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return err
	}
	if res.Status != status {
		return fmt.Errorf("GET %s: status %d, want %d: %s", path, res.Status, status, res.Body)
	}
	return nil
}

package dmsenders

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/store/pgtest"
	"github.com/tuitbot/tuitbot/internal/store/storetest"
	"github.com/tuitbot/tuitbot/internal/xapi"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestRecordAndWrote: on each backend, a recorded sender is known with
// the first event that proves it and when it was first seen; a later
// message keeps that row; another account of the home does not see it,
// and a user never recorded (or no user at all) did not write.
func TestRecordAndWrote(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T) {
		ctx := context.Background()
		db := storetest.Open(t, store.Options{})
		at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		s := Store{DB: db, AccountID: "default", Now: func() time.Time { return at }}
		if err := s.RecordDMSenders(ctx, []xapi.DMSender{{UserID: "42", EventID: "900"}, {UserID: "43", EventID: ""}}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Hour)
		if err := s.RecordDMSenders(ctx, []xapi.DMSender{{UserID: "42", EventID: "901"}}); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Get(ctx, "42")
		if err != nil || !ok || got.DMEventID != "900" || got.FirstSeenAt != store.FormatTime(at.Add(-time.Hour)) {
			t.Fatalf("Get(42) = %+v, %v, %v; want the first event, 900, first seen at 12:00", got, ok, err)
		}
		other := Store{DB: db, AccountID: "brand_b"}
		for _, tc := range []struct {
			s    Store
			user string
			want bool
		}{{s, "42", true}, {s, " 42 ", true}, {s, "43", false}, {s, "44", false}, {s, "", false}, {other, "42", false}} {
			if got, err := tc.s.Wrote(ctx, tc.user); err != nil || got != tc.want {
				t.Errorf("%s: Wrote(%q) = %v, %v; want %v", tc.s.AccountID, tc.user, got, err, tc.want)
			}
		}
	})
}

package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/postmetrics"
	"github.com/tuitbot/tuitbot/internal/store"
)

// TestQueueApplySuggestion: apply-suggestion shows the change to the
// config file and writes it only when told (--yes, or y at the prompt),
// keeping the file's comments, other settings and mode; for --account it
// writes that account's queue table.
func TestQueueApplySuggestion(t *testing.T) {
	h := newHome(t)
	const cfg = "# my tuitbot settings\n[queue]\nslots = [\"mon 08:00\"] # mornings\nmin_gap_minutes = 30\n\n[accounts.brand_b.queue]\nslots = []\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o640); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "no measured posts", h.fails(t, "queue", "apply-suggestion", "--yes").stderr, "insufficient_data")

	// Twelve weeks of posts: Thursdays at 14:00 do best.
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, account := range []string{"default", "brand_b"} {
		pm := &postmetrics.Store{DB: db, Account: account, Now: time.Now}
		for w := 1; w <= 12; w++ {
			day := now.AddDate(0, 0, -7*w)
			thu := time.Date(day.Year(), day.Month(), day.Day()-int(day.Weekday())+4, 14, 0, 0, 0, time.UTC)
			for i, p := range []struct {
				at    time.Time
				likes int64
			}{{thu, 60}, {thu.AddDate(0, 0, -2).Add(-4 * time.Hour), 20}} {
				if _, err := pm.Record(ctx, postmetrics.Row{TweetID: thu.Format("20060102") + string(rune('0'+i)), Kind: postmetrics.KindOriginal, PostedAt: p.at,
					Checkpoint: 7 * 24 * time.Hour, Impressions: 1000, Likes: p.likes, Source: postmetrics.SourcePublic}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	db.Close()

	r := h.ok(t, "queue", "apply-suggestion", "--count", "1")
	mustContain(t, "the proposal", r.stdout, "thu 14:00", "-slots = [\"mon 08:00\"] # mornings", "+slots = [\"thu 14:00\"]  # mornings", "nothing written")
	if b, _ := os.ReadFile(h.path("config.toml")); string(b) != cfg {
		t.Fatalf("without --yes and with no answer the file changed:\n%s", b)
	}

	r = runWithInput(t, h, "y\n", "queue", "apply-suggestion", "--count", "1")
	mustContain(t, "answered y", r.stdout, "wrote [queue] slots")
	want := strings.Replace(cfg, "slots = [\"mon 08:00\"] # mornings", "slots = [\"thu 14:00\"]  # mornings", 1)
	if b, _ := os.ReadFile(h.path("config.toml")); string(b) != want {
		t.Fatalf("config after y:\n%s\nwant\n%s", b, want)
	}
	if st, err := os.Stat(h.path("config.toml")); err != nil || st.Mode().Perm() != 0o640 {
		t.Fatalf("mode after the write: %v, %v; want 0640 kept", st.Mode().Perm(), err)
	}
	mustContain(t, "queue show reads it", h.ok(t, "queue", "next", "--json").stdout, "T14:00:00Z")

	h.ok(t, "queue", "apply-suggestion", "--account", "brand_b", "--count", "1", "--yes")
	want = strings.Replace(want, "[accounts.brand_b.queue]\nslots = []", "[accounts.brand_b.queue]\nslots = [\"thu 14:00\"]", 1)
	if b, _ := os.ReadFile(h.path("config.toml")); string(b) != want {
		t.Fatalf("config after --account brand_b --yes:\n%s\nwant\n%s", b, want)
	}
	if r := h.fails(t, "queue", "apply-suggestion", "--count", "0"); r.code != 2 {
		t.Errorf("--count 0: exit %d, want 2", r.code)
	}
}

func runWithInput(t *testing.T, h *home, input string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env, cmd.Dir, cmd.Stdin = h.env, h.dir, strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tuitbot %v: %v\n%s", args, err, errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String()}
}

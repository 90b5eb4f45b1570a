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

	seedBestThursday(t, h, "default", "brand_b")

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

// seedBestThursday records twelve weeks of measured posts for each
// account, in which Thursdays at 14:00 do best.
func seedBestThursday(t *testing.T, h *home, accounts ...string) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	for _, account := range accounts {
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

// TestQueueApplySuggestionNamesStrandedItems: before it writes, the
// command says how many slots a week the change leaves and which queued
// items would fall outside every slot; --dry-run writes nothing and
// --merge keeps the current slots beside the suggested ones.
func TestQueueApplySuggestionNamesStrandedItems(t *testing.T) {
	h := newHome(t)
	const cfg = "[queue]\nslots = [\"mon-fri 08:00\", \"mon-fri 12:00\", \"mon-fri 17:00\", \"sat,sun 10:00\"]\n"
	if err := os.WriteFile(h.path("config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	seedBestThursday(t, h, "default")
	ctx := context.Background()
	db, err := store.Open(ctx, h.path("tuitbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []string{"2030-01-07T08:00:00.000Z", "2030-01-08T12:00:00.000Z"} {
		if _, err := db.ExecContext(ctx, `INSERT INTO drafts (account_id, content, status, scheduled_for, queue_slot, created_at, updated_at)
			VALUES ('default', 'queued', 'scheduled', ?, ?, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`, at, at); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	r := h.ok(t, "queue", "apply-suggestion", "--count", "1", "--dry-run")
	mustContain(t, "the dry run", r.stdout, "17 slots a week become 1",
		"2 queued items would be outside every slot", "draft 1 at 2030-01-07T08:00:00Z", "draft 2 at 2030-01-08T12:00:00Z",
		"--merge", "dry run: nothing written")
	if b, _ := os.ReadFile(h.path("config.toml")); string(b) != cfg {
		t.Fatalf("--dry-run changed the file:\n%s", b)
	}

	r = h.ok(t, "queue", "apply-suggestion", "--count", "1", "--merge", "--yes")
	mustContain(t, "the merge", r.stdout, "17 slots a week become 18", "wrote [queue] slots")
	if strings.Contains(r.stdout, "outside every slot") {
		t.Errorf("a merge strands nothing, yet the command says it does:\n%s", r.stdout)
	}
	b, _ := os.ReadFile(h.path("config.toml"))
	mustContain(t, "the merged file", string(b), `slots = ["mon-fri 08:00", "mon-fri 12:00", "mon-fri 17:00", "sat,sun 10:00", "thu 14:00"]`)
	if r := h.run(t, "queue", "apply-suggestion", "--merge", "--dry-run", "--yes"); r.code != 2 {
		t.Errorf("--dry-run with --yes: exit %d, want 2\n%s", r.code, r)
	}
}

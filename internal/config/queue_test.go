package config_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tuitbot/tuitbot/internal/config"
)

const queueAccounts = `
[schedule]
timezone = "Europe/Berlin"

[queue]
slots = ["mon-fri 09:00", "sat,sun 11:00"]
min_gap_minutes = 90
max_per_day = 3
late_grace_minutes = 20

[accounts.brand_b.queue]
slots = ["daily 18:00"]
max_per_day = 1

[accounts.brand_c.schedule]
timezone = "America/New_York"
`

func TestQueueConfigOverridablePerAccount(t *testing.T) {
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, writeFile(t, home, "config.toml", queueAccounts), nil)
	p, err := cfg.QueuePolicy()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 2 || p.Loc.String() != "Europe/Berlin" || p.MinGap != 90*time.Minute || p.MaxPerDay != 3 {
		t.Errorf("default account's queue = %+v; want two slots in Europe/Berlin, 90m gap, 3 a day", p)
	}
	if cfg.Queue.LateGraceMinutes != 20 {
		t.Errorf("late_grace_minutes = %d, want 20", cfg.Queue.LateGraceMinutes)
	}
	b, err := cfg.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	pb, err := b.QueuePolicy()
	if err != nil {
		t.Fatal(err)
	}
	if len(pb.Rules) != 1 || pb.Rules[0].Hour != 18 || pb.MaxPerDay != 1 || pb.MinGap != 90*time.Minute || b.Queue.LateGraceMinutes != 20 {
		t.Errorf("brand_b's queue = %+v (grace %d); want its own slot and cap, the gap and grace inherited", pb, b.Queue.LateGraceMinutes)
	}
	c, err := cfg.ForAccount("brand_c")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := c.QueuePolicy()
	if err != nil {
		t.Fatal(err)
	}
	if pc.Loc.String() != "America/New_York" || len(pc.Rules) != 2 {
		t.Errorf("brand_c's queue = %+v; want the inherited slots in its own timezone", pc)
	}
	if !slices.Contains(config.AccountKeys(), "queue") {
		t.Error("queue is not an account key")
	}
}

func TestQueueConfigRejected(t *testing.T) {
	tests := []struct{ name, toml, wantKey string }{
		{"bad slot", "[queue]\nslots = [\"mon 09:00\", \"funday 10:00\"]\n", "queue.slots"},
		{"negative gap", "[queue]\nmin_gap_minutes = -1\n", "queue.min_gap_minutes"},
		{"negative cap", "[queue]\nmax_per_day = -2\n", "queue.max_per_day"},
		{"negative grace", "[queue]\nlate_grace_minutes = -5\n", "queue.late_grace_minutes"},
		{"bad slot of an account", "[accounts.b.queue]\nslots = [\"mon 25:00\"]\n", "accounts.b.queue.slots"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			_, _, err := load(t, home, writeFile(t, home, "config.toml", tc.toml), nil)
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("Load error = %v; want field errors", err)
			}
			var keys []string
			for _, e := range es {
				keys = append(keys, e.Key)
			}
			if !slices.Contains(keys, tc.wantKey) {
				t.Fatalf("error keys = %v; want %s", keys, tc.wantKey)
			}
		})
	}
}

const evergreenAccounts = `
[evergreen]
enabled = true
min_interval_days = 14
max_recycles = 5
fill_empty_slots = true
mode = "requote"

[accounts.brand_b.evergreen]
mode = "variant"
max_recycles = 1
`

func TestEvergreenConfigOverridablePerAccount(t *testing.T) {
	home := t.TempDir()
	cfg, _ := mustLoad(t, home, writeFile(t, home, "config.toml", evergreenAccounts), nil)
	want := config.Evergreen{Enabled: true, MinIntervalDays: 14, MaxRecycles: 5, FillEmptySlots: true, Mode: "requote"}
	if cfg.Evergreen != want {
		t.Errorf("default account's evergreen = %+v, want %+v", cfg.Evergreen, want)
	}
	b, err := cfg.ForAccount("brand_b")
	if err != nil {
		t.Fatal(err)
	}
	want.Mode, want.MaxRecycles = "variant", 1
	if b.Evergreen != want {
		t.Errorf("brand_b's evergreen = %+v, want %+v (its mode and cap, the rest inherited)", b.Evergreen, want)
	}
	if d := config.Default().Evergreen; d.Enabled || d.FillEmptySlots || d.Mode != "repost" || d.MinIntervalDays != 30 || d.MaxRecycles != 3 {
		t.Errorf("default evergreen = %+v", d)
	}
}

func TestEvergreenConfigRejected(t *testing.T) {
	tests := []struct{ name, toml, wantKey string }{
		{"mode", "[evergreen]\nmode = \"retweet\"\n", "evergreen.mode"},
		{"interval", "[evergreen]\nmin_interval_days = 0\n", "evergreen.min_interval_days"},
		{"recycles", "[evergreen]\nmax_recycles = -1\n", "evergreen.max_recycles"},
		{"mode of an account", "[accounts.b.evergreen]\nmode = \"copy\"\n", "accounts.b.evergreen.mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			_, _, err := load(t, home, writeFile(t, home, "config.toml", tc.toml), nil)
			es, ok := config.AsErrors(err)
			if !ok {
				t.Fatalf("Load error = %v; want field errors", err)
			}
			var keys []string
			for _, e := range es {
				keys = append(keys, e.Key)
			}
			if !slices.Contains(keys, tc.wantKey) {
				t.Fatalf("error keys = %v; want %s", keys, tc.wantKey)
			}
		})
	}
}

package config_test

import (
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

func TestSetQueueSlotsKeepsTheRestOfTheFile(t *testing.T) {
	slots := []string{"tue,thu 09:00", "sat 11:00"}
	const line = `slots = ["tue,thu 09:00", "sat 11:00"]`
	for _, c := range []struct {
		name, account, src, want string
	}{
		{"no file", "", "", "[queue]\n" + line + "\n"},
		{"no queue table", "", "# my settings\nmode = \"composer\" # keep\n",
			"# my settings\nmode = \"composer\" # keep\n\n[queue]\n" + line + "\n"},
		{"table without slots", "", "[queue]\n# gaps matter\nmin_gap_minutes = 60\n\n[schedule]\ntimezone = \"UTC\"\n",
			"[queue]\n" + line + "\n# gaps matter\nmin_gap_minutes = 60\n\n[schedule]\ntimezone = \"UTC\"\n"},
		{"one-line slots with a comment", "", "[queue]\n  slots = [\"mon 08:00\"] # mornings\nmax_per_day = 2\n",
			"[queue]\n  " + line + "  # mornings\nmax_per_day = 2\n"},
		{"slots over several lines", "", "[queue]\nslots = [\n  \"mon 08:00\", # first\n  \"fri 17:00\",\n]\nmax_per_day = 2\n",
			"[queue]\n" + line + "\nmax_per_day = 2\n"},
		{"slots of another table untouched", "", "[accounts.b.queue]\nslots = [\"mon 08:00\"]\n[queue]\nslots = []\n",
			"[accounts.b.queue]\nslots = [\"mon 08:00\"]\n[queue]\n" + line + "\n"},
		{"an account's table", "b", "[queue]\nslots = [\"mon 08:00\"]\n\n[accounts.b.queue]\nslots = []\n",
			"[queue]\nslots = [\"mon 08:00\"]\n\n[accounts.b.queue]\n" + line + "\n"},
		{"an account without a table", "b", "[queue]\nslots = []",
			"[queue]\nslots = []\n\n[accounts.b.queue]\n" + line + "\n"},
		{"a key that only starts with slots", "", "[queue]\nslots_note = \"x\"\n",
			"[queue]\n" + line + "\nslots_note = \"x\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := config.SetQueueSlots(c.src, c.account, slots)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("SetQueueSlots =\n%s\nwant\n%s", got, c.want)
			}
		})
	}
	if _, err := config.SetQueueSlots("", "", []string{`mon "09:00"`}); err == nil {
		t.Error("a slot with a quote was accepted")
	}
}

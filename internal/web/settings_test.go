package web

import (
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/config"
)

// TestSettingsAreLabelledGroups: the configuration is shown as labelled
// groups, secrets still masked; text that is not TOML is shown as it is.
func TestSettingsAreLabelledGroups(t *testing.T) {
	cfg := config.Default()
	cfg.LLM.APIKey = "sk-very-secret"
	cfg.XAPI.ClientSecret = "client-secret-value"
	masked, err := config.MaskedTOML(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := settingsGroups(masked)
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]settingsGroup{}
	for _, g := range groups {
		byTitle[g.Title] = g
	}
	if groups[0].Title != "General" {
		t.Fatalf("the first group is %q, want General", groups[0].Title)
	}
	find := func(group, key string) string {
		t.Helper()
		for _, it := range byTitle[group].Items {
			if it.K == key {
				return it.V
			}
		}
		t.Fatalf("group %q has no %q: %+v", group, key, byTitle[group].Items)
		return ""
	}
	if v := find("General", "Approval mode"); v != "on" {
		t.Errorf("Approval mode = %q, want on", v)
	}
	if v := find("Language model", "Api key"); v != config.Mask {
		t.Errorf("the LLM key shows as %q, want the mask", v)
	}
	if v := find("X API", "Client secret"); v != config.Mask {
		t.Errorf("the client secret shows as %q, want the mask", v)
	}
	if v := find("Autopilot limits", "Max replies per day"); v != "5" {
		t.Errorf("Max replies per day = %q", v)
	}
	all := ""
	for _, g := range groups {
		for _, it := range g.Items {
			all += it.K + "=" + it.V + "\n"
		}
	}
	for _, secret := range []string{"sk-very-secret", "client-secret-value"} {
		if strings.Contains(all, secret) {
			t.Errorf("a secret is shown: %s", secret)
		}
	}
	if _, err := settingsGroups("this is [not toml"); err == nil {
		t.Fatal("text that is not TOML was read as settings")
	}
}

package web

import (
	"fmt"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// settingsGroup is one section of the configuration as the settings page
// shows it: a title and its settings, labelled in words.
type settingsGroup struct {
	ID, Title string
	Items     []kv
}

// sectionTitles name the configuration's sections for people.
var sectionTitles = map[string]string{
	"": "General", "x_api": "X API", "llm": "Language model", "business": "Business profile", "scoring": "Reply scoring",
	"limits": "Autopilot limits", "mcp_policy": "Policy", "mcp": "Agents (MCP)", "media": "Media", "sandbox": "Sandbox",
	"schedule": "Schedule", "storage": "Storage", "targets": "Target accounts", "intervals": "Loop intervals",
	"circuit_breaker": "Circuit breaker", "gateway": "Gateway", "logging": "Logging",
}

// settingsGroups turns the effective configuration (TOML, secrets
// already masked) into labelled groups: the top-level settings first,
// then each section. It returns an error when the text is not TOML; the
// page then shows it as it is.
func settingsGroups(text string) ([]settingsGroup, error) {
	var m map[string]any
	if _, err := toml.Decode(text, &m); err != nil {
		return nil, fmt.Errorf("read the settings: %w", err)
	}
	general := settingsGroup{ID: "general", Title: sectionTitles[""]}
	var out []settingsGroup
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sec, ok := m[k].(map[string]any)
		if !ok {
			general.Items = append(general.Items, kv{label(k), settingValue(m[k])})
			continue
		}
		g := settingsGroup{ID: "settings-" + strings.ReplaceAll(k, "_", "-"), Title: sectionTitles[k]}
		if g.Title == "" {
			g.Title = label(k)
		}
		flatten(&g, "", sec)
		out = append(out, g)
	}
	if len(general.Items) > 0 {
		out = append([]settingsGroup{general}, out...)
	}
	return out, nil
}

// flatten lists a section's settings, a nested table's under its name.
func flatten(g *settingsGroup, prefix string, sec map[string]any) {
	keys := make([]string, 0, len(sec))
	for k := range sec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if sub, ok := sec[k].(map[string]any); ok {
			flatten(g, prefix+label(k)+": ", sub)
			continue
		}
		g.Items = append(g.Items, kv{prefix + label(k), settingValue(sec[k])})
	}
}

// label writes a key in words ("max_replies_per_day" → "Max replies per
// day").
func label(key string) string {
	s := strings.ReplaceAll(key, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func settingValue(v any) string {
	switch v := v.(type) {
	case bool:
		if v {
			return "on"
		}
		return "off"
	case string:
		if v == "" {
			return "(not set)"
		}
		return v
	case []map[string]any:
		return fmt.Sprintf("%d entries", len(v))
	case []any:
		if len(v) == 0 {
			return "(none)"
		}
		if _, ok := v[0].(map[string]any); ok {
			return fmt.Sprintf("%d entries", len(v))
		}
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

package main

import "testing"

// TestSessionGCPercent: a stdio session collects at its own setting
// unless the environment chose how the collector runs, through GOGC or a
// memory limit; then the session keeps the setting the runtime read from
// it.
func TestSessionGCPercent(t *testing.T) {
	for _, tc := range []struct {
		name      string
		env       map[string]string
		inherited int
		want      int
	}{
		{"nothing chosen", nil, 100, stdioSessionGCPercent},
		{"empty GOGC chooses nothing", map[string]string{"GOGC": ""}, 100, stdioSessionGCPercent},
		{"GOGC", map[string]string{"GOGC": "200"}, 200, 200},
		{"GOGC off", map[string]string{"GOGC": "off"}, -1, -1},
		{"GOMEMLIMIT", map[string]string{"GOMEMLIMIT": "64MiB"}, 100, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(name string) string { return tc.env[name] }
			if got := sessionGCPercent(getenv, tc.inherited); got != tc.want {
				t.Errorf("sessionGCPercent(%v, %d) = %d, want %d", tc.env, tc.inherited, got, tc.want)
			}
		})
	}
	if stdioSessionGCPercent >= 100 {
		t.Errorf("stdioSessionGCPercent = %d: a session at Go's default keeps the heap's 4 MB floor resident", stdioSessionGCPercent)
	}
}

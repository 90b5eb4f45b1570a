package main

import (
	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

// DoctorReport is `tuitbot doctor --json`. services has health_check's
// shape (name to status); checks adds each one's message. status is the
// verdict the exit code gives: ok, degraded or error; not_configured
// services leave it ok, since tuitbot works without them.
type DoctorReport struct {
	Status   string            `json:"status"`
	Services map[string]string `json:"services"`
	Checks   []app.Check       `json:"checks"`
	// Access is each account's X API access level: what it allows and
	// the prices in force.
	Access []xrules.Level `json:"x_access,omitempty"`
}

func doctorReport(checks []app.Check, configErr error) DoctorReport {
	if configErr != nil {
		checks = []app.Check{{Name: "config", Status: "error", Message: configErr.Error()}}
	}
	rep := DoctorReport{Status: "ok", Services: map[string]string{}, Checks: checks}
	for _, ch := range checks {
		rep.Services[ch.Name] = ch.Status
		switch {
		case ch.Status == "error":
			rep.Status = "error"
		case ch.Status == "degraded" && rep.Status == "ok":
			rep.Status = "degraded"
		}
	}
	return rep
}

func (r DoctorReport) degraded() []string {
	var out []string
	for _, ch := range r.Checks {
		if ch.Status == "degraded" {
			out = append(out, ch.Name)
		}
	}
	return out
}

package app

import (
	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/policy"
)

// policyEngine is the running engine, or one compiled from the
// configuration when the App has none (no database): reports must describe
// the policy either way.
func (a *App) policyEngine() *policy.Engine {
	if a.Policy != nil {
		return a.Policy
	}
	eng, err := NewPolicyEngine(a.Cfg)
	if err != nil {
		return nil
	}
	return eng
}

// ApprovalOverrides names the rules that decide calls before approval mode
// can route them (see policy.Engine.ApprovalOverrides), so that reporting
// approval_mode: true never hides that some calls run without a human. It
// is empty when approval mode is off: then nothing is overridden.
func (a *App) ApprovalOverrides() []string {
	if !a.Cfg.EffectiveApprovalMode() {
		return []string{}
	}
	eng := a.policyEngine()
	if eng == nil {
		return []string{}
	}
	return eng.ApprovalOverrides(a.Cfg.Mode)
}

// PolicyWarnings lists the configuration that can never take effect (see
// policy.Engine.Warnings); nil when the policy does not compile, since
// ValidateAll reports that as an error.
func PolicyWarnings(cfg *config.Config) []string {
	eng, err := NewPolicyEngine(cfg)
	if err != nil {
		return nil
	}
	return eng.Warnings()
}

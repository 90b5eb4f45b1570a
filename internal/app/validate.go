package app

import (
	"errors"

	"github.com/tuitbot/tuitbot/internal/config"
)

// ValidateAll validates cfg, including the parts other packages own (policy
// rules, templates and limits), so `config validate` and validate_config
// report everything at once.
func ValidateAll(cfg *config.Config) error {
	var errs []error
	if err := cfg.Validate(); err != nil {
		errs = append(errs, err)
	}
	if _, err := NewPolicyEngine(cfg); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

package app

import "github.com/tuitbot/tuitbot/internal/config"

// ValidateAll validates cfg, including the parts other packages own (policy
// rules), so `config validate` and validate_config report everything.
func ValidateAll(cfg *config.Config) error {
	return cfg.Validate()
}

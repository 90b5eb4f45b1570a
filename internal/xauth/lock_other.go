//go:build !unix

package xauth

import (
	"context"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// lockTokenFile is only implemented on Unix. Refusing is safer than
// refreshing without the lock: refresh tokens are single-use, so an
// unserialised refresh can log every process out.
func lockTokenFile(context.Context, string) (func(), error) {
	return nil, apperr.New(apperr.ConfigError, "token refresh needs file locking, which this operating system build does not support")
}

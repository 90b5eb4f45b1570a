//go:build !unix

package store

import (
	"context"
	"errors"
)

// lockPath is only implemented on Unix. Opening without the lock could let
// two processes migrate the same database at once.
func lockPath(context.Context, string) (func(), error) {
	return nil, errors.New("opening the database needs file locking, which this operating system build does not support")
}

func lockShared(string) (func(), error) {
	return nil, errors.New("opening the database needs file locking, which this operating system build does not support")
}

func heldByOthers(string) (bool, error) {
	return false, errors.New("opening the database needs file locking, which this operating system build does not support")
}

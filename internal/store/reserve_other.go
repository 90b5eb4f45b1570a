//go:build !linux

package store

import (
	"errors"
	"os"
)

// allocate has no portable form: the caller writes the bytes.
func allocate(*os.File, int64) error { return errors.ErrUnsupported }

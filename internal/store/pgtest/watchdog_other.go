//go:build !unix

package pgtest

import "os"

// watch has no watchdog to start where there is no runuser or /bin/sh;
// Stop remains the only way the cluster ends.
func (c *cluster) watch() (*os.File, error) { return nil, nil }

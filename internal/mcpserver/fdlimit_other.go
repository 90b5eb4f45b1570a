//go:build !unix

package mcpserver

// openFileLimit is unknown here; the configured connection cap applies.
func openFileLimit() int { return 0 }

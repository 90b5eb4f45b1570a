package xapi

import (
	"strings"
	"sync"
)

// retryClass says what the client may do when an attempt fails.
type retryClass int

const (
	// classUnset marks a row that forgot its class; it is treated as
	// classCreate, the cautious choice, and a table test refuses it.
	classUnset retryClass = iota
	// classSafe requests can be repeated without a second effect: reads, PUT,
	// DELETE and the POSTs X treats as idempotent (like, follow, retweet,
	// bookmark, media append/finalize/metadata).
	classSafe
	// classCreate requests create something on every success (a post, an
	// upload session, any raw POST); they are repeated only when X provably
	// did not receive them.
	classCreate
)

// knownEndpoints is the endpoint table, built on first use (a process that
// never calls X, or not yet, does not build it); it never changes.
var knownEndpoints = sync.OnceValue(NewEndpoints)

// Known is the endpoint table, shared by the whole process: it is built on
// first use and never changes, so no caller need build another (a spawned
// server built it once per reader before its first answer).
func Known() *Endpoints { return knownEndpoints() }

// pathTemplate returns the template of a concrete path (see
// Endpoints.Template).
func pathTemplate(path string) string { return knownEndpoints().Template(path) }

func matchTemplate(ts, segs []string) bool {
	if len(ts) != len(segs) {
		return false
	}
	for i, t := range ts {
		if strings.HasPrefix(t, ":") {
			if segs[i] == "" {
				return false
			}
			continue
		}
		if t != segs[i] {
			return false
		}
	}
	return true
}

// endpointKey is the ledger/rate-limit key: "METHOD /template".
func endpointKey(method, path string) string {
	return strings.ToUpper(method) + " " + pathTemplate(path)
}

// classFor returns how a typed request may be retried: as its table row
// says, else reads, PUT and DELETE are safe and any other POST creates.
// Raw POSTs do not use this: every raw POST is classCreate.
func classFor(method, tpl string) retryClass {
	if r, ok := knownEndpoints().Lookup(method, tpl); ok && r.HasRetryClass() {
		return r.Retry
	}
	switch strings.ToUpper(method) {
	case "GET", "HEAD", "PUT", "DELETE":
		return classSafe
	}
	return classCreate
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Package e2e proves the mutation gateway end to end: the real MCP server,
// the real gateway and X client, SQLite and PostgreSQL, and the X emulator,
// under concurrency, injected faults, several processes and hosts, and
// process kills.
//
// These proofs are slow, so they are built only with the e2e tag, which
// .ci/run sets; the quick suite (go test ./...) leaves them out:
//
//	go test -tags e2e -timeout 60m ./...
package e2e

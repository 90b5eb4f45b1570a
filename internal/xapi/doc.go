// Package xapi is the X API v2 client: typed reads and writes, media upload,
// a raw request method for the universal tools, safe retries, error
// classification into apperr codes, per-endpoint rate-limit tracking and a
// pay-per-use cost ledger.
//
// Safety rules the client enforces on every request:
//   - Logical hosts (api.x.com, upload.x.com, upload.twitter.com) map to base
//     URLs only through Options; nothing a caller passes can change where a
//     request goes.
//   - Every attempt has a timeout, redirects are never followed and response
//     bodies are size-capped.
//   - The bearer token comes from a TokenSource, is set by the client alone and
//     is scrubbed from every error, log line and returned header.
//   - Reads, PUT, DELETE and X-idempotent POSTs are retried on 429, 5xx and
//     network errors. A POST that creates something (a post, a media upload,
//     any raw POST) is retried only when X provably did not process it;
//     otherwise the result is apperr.XOutcomeUnknown, never a guess.
package xapi

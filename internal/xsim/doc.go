// Package xsim is an in-memory, stateful emulator of the X API v2. It
// listens on loopback only and stands in for X in tests and in sandbox mode.
//
// It follows X's OpenAPI document (paths, parameters, response shapes) and
// X's live behaviour where the two differ:
//
//   - Field names: requests may use X's live spellings (tweet.fields,
//     referenced_tweets.id, pinned_tweet_id) or the document's (post.fields,
//     referenced_posts, pinned_post_id). Answers carry both where they differ:
//     public_metrics has retweet_count and repost_count, tweet_count and
//     post_count; includes has tweets and posts; created posts carry
//     edit_history_tweet_ids and edit_history_post_ids.
//   - Errors: 400/404 and the partial "errors" of lookups use the document's
//     problem types (https://api.x.com/2/problems/invalid-request,
//     .../resource-not-found). 401, 429 and generic 403s are
//     application/problem+json with type "about:blank", as X sends them; the
//     403 details for duplicate content, suspension and over-long text are
//     the exported Detail* constants; missing scopes name the scopes and say
//     "scope". Client-not-enrolled is X's client-forbidden body.
//   - Lookups of missing ids answer 200 with "errors"; writes that name a
//     missing post or user answer 404.
//   - Writes act for the token's user only: a different path user id is 403.
//     Likes, follows, reposts, bookmarks and deletes are idempotent on
//     repeat (same answer, no second side effect, counters unchanged).
//   - OAuth 2.0: GET /i/oauth2/authorize consents at once for the demo user;
//     POST /2/oauth2/token does authorization_code with S256 PKCE and
//     single-use refresh tokens; POST /2/oauth2/revoke. Grants persist in the
//     World as SHA-256 hashes only.
//   - Rate limits: X's per-user 15-minute limits (one table,
//     defaultLimits), x-rate-limit-* headers on every authenticated answer,
//     plus 24-hour user and app budgets for POST /2/tweets, likes and
//     follows. Enforcement is on with DefaultOptions.
//   - Billing: X's pay-per-use prices (Prices), reads per resource once per
//     UTC day, writes per request, posts with a URL at the higher price;
//     GET /2/usage/tweets reports X's usage object plus an itemised
//     "billing" object.
//   - Edits: POST /2/tweets with edit_options.previous_post_id makes a
//     new version of one's own post, for 30 minutes from the first version
//     by the world's clock and at most 5 times; every version carries the
//     whole edit_history_tweet_ids chain and edit_controls; only the latest
//     version may be edited and timelines show only it; posts with a poll,
//     reposts and replies to others are not edit eligible; refusals are
//     403s (the Detail* constants; X does not document its wording), and
//     deleting any version deletes the chain.
//   - Access levels (access.go, docs/x-rules.md): each account's app is
//     Enterprise (a world that says nothing) or self-serve pay-per-use. On
//     pay-per-use, as X since 2026, a reply whose target did not summon the
//     replier, likes, unlikes, follows, unfollows and quote posts answer
//     X's bare 403, a summoned reply costs $0.010 with or without a URL and
//     Owned Reads $0.001 per resource. On every level keyword search drops
//     reposts and min_likes:, min_replies:, min_reposts: filter.
//   - Media: simple and chunked upload per the v2 document, X's size limits
//     and types, video and GIF processing advanced by STATUS polls
//     (pending -> in_progress -> succeeded), alt text via /2/media/metadata.
//
// Counters report side effects actually applied, and Fault injects latency,
// 429s, 5xx, resets, hangs, broken bodies and apply-then-fail per route, so
// tests can prove a client never repeats a write whose outcome it did not
// see.
package xsim

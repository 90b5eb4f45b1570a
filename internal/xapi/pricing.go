package xapi

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// X API pay-per-use prices in USD, as published on X's developer pricing
// page (docs.x.com, "X API pay-per-usage pricing and credits", 2026): reads
// are charged per resource returned, with repeats of the same resource in
// one UTC day free; writes are charged per request.
//
// Where X publishes no price for something the client calls, the estimate
// below is deliberately on the high side so a budget check never
// under-counts:
//   - Deleting a post is billed at the "Interaction: Delete" rate ($0.010)
//     rather than the lower "Content: Manage" rate ($0.005).
//   - A media upload is billed once, at the "Content: Create" rate, on the
//     request that starts it (simple upload or INIT); APPEND, FINALIZE and
//     STATUS polls are treated as part of that upload.
//   - Expanded objects (includes.users, includes.tweets) are billed as reads
//     of their resource type, like the primary data.
//   - Unknown read endpoints are billed at the highest per-resource read
//     price, unknown writes at the "Content: Create" price.
const (
	PricePostRead          = 0.005 // Posts: Read, per post
	PriceUserRead          = 0.010 // User: Read, per user
	PriceFollowsRead       = 0.010 // Following/Followers: Read, per user
	PriceMediaRead         = 0.005 // Media: Read, per media object
	PriceDMRead            = 0.010 // DM Event: Read, per event
	PriceCommunityRead     = 0.005 // Community: Read, per community
	PriceCountsRecent      = 0.005 // Counts: Recent, per request
	PriceCountsAll         = 0.010 // Counts: All, per request
	PricePostCreate        = 0.015 // Content: Create, per request
	PricePostCreateWithURL = 0.200 // Content: Create (with URL), per request
	// PriceSummonedReply is a reply to a post that summoned the account
	// (X's 2026-04-16 entry), link or not. X lets a self-serve app reply
	// only when summoned, so every reply it takes is billed so.
	PriceSummonedReply = 0.010
	// PriceOwnedRead is an "Owned Read": a read of the authenticated
	// user's own resources (its posts, mentions, likes, bookmarks,
	// follows, blocks, mutes and lists), per resource. X's wording adds
	// that the user must own the developer app.
	PriceOwnedRead         = 0.001
	PriceInteractionCreate = 0.015 // User Interaction: Create (like, follow, repost)
	PriceInteractionDelete = 0.010 // Interaction: Delete (unlike, unfollow, unrepost; post delete, see above)
	PriceBookmark          = 0.005 // Bookmark, per request (add or remove)
	PriceMediaMetadata     = 0.005 // Media Metadata, per request
	PriceDMCreate          = 0.015 // DM Interaction: Create, per request
	PriceMediaUpload       = PricePostCreate
	// X publishes no List prices: creating a list is estimated as
	// "Content: Create", every other list write as "User Interaction:
	// Create" and a list read at the unknown-read rate, per list.
	PriceListCreate   = PricePostCreate
	PriceListManage   = PriceInteractionCreate
	PriceListRead     = PriceUnknownRead
	PriceUnknownRead  = 0.010
	PriceUnknownWrite = PricePostCreate
)

// resource kinds used for same-day deduplication.
const (
	kindPost  = "post"
	kindUser  = "user"
	kindMedia = "media"
	kindList  = "list"
	// kindDMEvent and kindCommunity are billed per resource returned, like
	// posts; the ledger keys its same-day deduplication on them.
	kindDMEvent   = "dm_event"
	kindCommunity = "community"
)

// readPrice returns the per-resource price and resource kind of a GET
// endpoint template. perRequest is true for endpoints billed per call.
// owned says that the path's user is the authenticated one, which an
// owned read's row bills at its Owned price; ownedRead reports that it
// did.
func readPrice(tpl string, owned bool) (unit float64, kind string, perRequest, ownedRead bool) {
	if r, ok := knownEndpoints().Lookup("GET", tpl); ok {
		if owned && r.Price.Owned > 0 {
			return r.Price.Owned, r.Price.Resource, r.Price.PerRequest, true
		}
		return r.Price.Unit, r.Price.Resource, r.Price.PerRequest, false
	}
	return PriceUnknownRead, "", false, false
}

// writePrice returns the per-request price of a non-GET request; reply
// marks a post that replies (see Pricing.Reply).
func writePrice(method, tpl string, hasURL, reply bool) float64 {
	r, ok := knownEndpoints().Lookup(method, tpl)
	switch {
	case !ok:
		return PriceUnknownWrite
	case reply && r.Price.Reply > 0:
		return r.Price.Reply
	case hasURL && r.Price.WithURL > 0:
		return r.Price.WithURL
	}
	return r.Price.Unit
}

// EstimatePost is the price of one post: a reply at the summoned-reply
// price (no link surcharge), any other post at the plain or with-link
// price.
func EstimatePost(text string, reply bool) float64 {
	return writePrice("POST", "/2/tweets", ContainsURL(text), reply)
}

// splitEndpoint accepts "METHOD /path", "/path" or a concrete path and
// returns the method (if any) and the template.
func splitEndpoint(method, endpoint string) (string, string) {
	endpoint = strings.TrimSpace(endpoint)
	if i := strings.IndexByte(endpoint, ' '); i > 0 {
		if method == "" {
			method = endpoint[:i]
		}
		endpoint = strings.TrimSpace(endpoint[i+1:])
	}
	return strings.ToUpper(method), pathTemplate(endpoint)
}

// EstimateCost estimates the USD charge of one request before it is made:
// reads cost items × the endpoint's per-resource price (no same-day
// deduplication, so the estimate never under-counts), writes cost the
// per-request price; hasURL selects the with-URL price for post creation.
// endpoint may be a template ("/2/users/:id/mentions"), a concrete path, or
// "METHOD /path".
func EstimateCost(method, endpoint string, items int, hasURL bool) float64 {
	m, tpl := splitEndpoint(method, endpoint)
	if m == "GET" || m == "HEAD" {
		unit, _, perRequest, _ := readPrice(tpl, false)
		if perRequest {
			return unit
		}
		if items < 0 {
			items = 0
		}
		return unit * float64(items)
	}
	return writePrice(m, tpl, hasURL, false)
}

// EstimateWrite estimates the charge of a write request from its concrete
// method, path and JSON body, so a budget can be checked before calling X.
// A POST /2/tweets body that cannot be read is priced as a post with a URL.
// GET requests are reads and cost 0 here (see EstimateCost).
func EstimateWrite(method, path string, body []byte) float64 {
	m, tpl := splitEndpoint(method, path)
	if m == "GET" || m == "HEAD" || m == "" {
		return 0
	}
	hasURL, reply := false, false
	if m == "POST" && tpl == "/2/tweets" {
		var replyTo string
		hasURL, replyTo = postBody(body)
		reply = replyTo != ""
	}
	return writePrice(m, tpl, hasURL, reply)
}

// postBody reads a POST /2/tweets body: whether its text holds a link and
// the post it replies to. A body that cannot be read is priced as a post
// with a link.
func postBody(body []byte) (hasURL bool, replyTo string) {
	var b struct {
		Text  *string `json:"text"`
		Reply *struct {
			InReplyToTweetID string `json:"in_reply_to_tweet_id"`
		} `json:"reply"`
	}
	if len(body) > 0 && json.Unmarshal(body, &b) != nil {
		return true, ""
	}
	if b.Text != nil {
		hasURL = ContainsURL(*b.Text)
	}
	if b.Reply != nil {
		replyTo = b.Reply.InReplyToTweetID
	}
	return hasURL, replyTo
}

// urlPattern finds what X would turn into a link: scheme URLs, www. hosts
// and bare domains with a common top-level domain. It errs towards finding a
// URL because the with-URL price is the higher one.
var urlPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:\bhttps?://[^\s]|\bwww\.[a-z0-9-]|(?:^|[^a-z0-9@._-])[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.(?:com|net|org|io|ai|dev|app|co|me|xyz|info|biz|gg|ly|sh|so|tv|fm|to|us|uk|ca|de|fr|es|it|nl|jp|cn|in|au|br|ru|eu|edu|gov|tech|site|online|link|page|blog|news|store|shop|cloud|run)(?:$|[^a-z0-9_-]))`)
})

// ContainsURL reports whether text contains something X would link.
func ContainsURL(text string) bool {
	return urlPattern().MatchString(text)
}

package xrules

import "github.com/tuitbot/tuitbot/internal/xapi"

// Level is an account's access level in words: what X lets its app do,
// what it refuses, and the prices the ledger and the budget use.
type Level struct {
	Account string `json:"account,omitempty"`
	Access  Access `json:"access"`
	// Allows says in words what the level lets the app do.
	Allows string `json:"allows"`
	// Refused lists the typed tools refused before X on this level.
	Refused []string `json:"refused_tools"`
	Prices  []Price  `json:"prices"`
}

// Price is one price in force, in USD.
type Price struct {
	What string  `json:"what"`
	USD  float64 `json:"usd"`
}

// Describe is what level a allows and costs.
func Describe(a Access) Level {
	prices := []Price{
		{"a post", xapi.PricePostCreate},
		{"a post with a link", xapi.PricePostCreateWithURL},
		{"a reply (summoned; a link adds nothing)", xapi.PriceSummonedReply},
		{"a read of a post", xapi.PricePostRead},
		{"a read of a user", xapi.PriceUserRead},
		{"an owned read (the account's own posts, mentions, likes, bookmarks, follows, lists), per resource", xapi.PriceOwnedRead},
		{"a repost, like or follow", xapi.PriceInteractionCreate},
	}
	if a == Enterprise {
		return Level{Access: a, Refused: []string{}, Prices: prices,
			Allows: "enterprise (a contract with X): every API feature, likes, follows, quote posts and replies to any post included. " +
				"X negotiates enterprise prices; tuitbot estimates spend at the pay-per-use prices."}
	}
	return Level{Access: PayPerUse, Refused: Unavailable(), Prices: prices,
		Allows: "pay-per-use (X's self-serve access): posts, threads, reposts, bookmarks, DMs, lists and reads; " +
			"replies only to posts that summoned the account (that @mention it or quote one of its posts); " +
			"no likes, follows or quote posts (X removed them on 2026-04-20): tuitbot refuses those before X and links to x.com to do them by hand."}
}

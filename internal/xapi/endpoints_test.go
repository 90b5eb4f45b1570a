package xapi_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
	"github.com/tuitbot/tuitbot/internal/xsim"
	"github.com/tuitbot/tuitbot/internal/xspec"
)

var placeholder = regexp.MustCompile(`:([a-z_]+)`)

// specPath turns ":id" into the OpenAPI "{id}" form.
func specPath(tpl string) string { return placeholder.ReplaceAllString(tpl, "{$1}") }

// TestEndpointTableServedByEmulator: the emulator keeps its own route table
// on purpose, so a row the product relies on but the emulator does not
// serve would leave that endpoint untested. Every owned read is served,
// typed or not, so that its price can be seen in the sandbox.
func TestEndpointTableServedByEmulator(t *testing.T) {
	s := xsim.New(xsim.Options{})
	routes := s.Routes()
	for _, e := range xapi.NewEndpoints().All() {
		if e.RawOnly && e.Price.Owned == 0 {
			// Only universal requests reach it; the emulator answers those
			// with X's not-found error, which is what the agent should see
			// when the sandbox lacks an endpoint.
			continue
		}
		key := e.Method + " " + specPath(e.Path)
		if !slices.Contains(routes, key) {
			t.Errorf("endpoint %s is in the product's table but the emulator does not serve it", key)
		}
	}
}

// TestEndpointTableAgreesWithSpec checks every row against X's OpenAPI spec.
func TestEndpointTableAgreesWithSpec(t *testing.T) {
	spec := xspec.FromEnv(t)
	for _, e := range xapi.NewEndpoints().All() {
		if !spec.HasOperation(e.Method, specPath(e.Path)) {
			t.Errorf("endpoint %s %s is not an operation of X's OpenAPI spec", e.Method, e.Path)
		}
	}
}

// TestEndpointTableRows checks the facts each row must carry.
func TestEndpointTableRows(t *testing.T) {
	eps := xapi.NewEndpoints()
	seen := map[string]bool{}
	for _, e := range eps.All() {
		key := e.RateKey()
		if e.BodyKey != "" {
			key += " with " + e.BodyKey
		}
		if seen[key] {
			t.Errorf("%s is listed twice", key)
		}
		seen[key] = true
		if e.Host == "" {
			t.Errorf("%s: no host", key)
		}
		if !e.HasRetryClass() {
			t.Errorf("%s: no retry class", key)
		}
		body := []byte(`{}`)
		if e.BodyKey != "" {
			body = []byte(`{"` + e.BodyKey + `":{}}`)
			if got, _ := eps.Lookup(e.Method, e.Path); got.BodyKey != "" {
				t.Errorf("Lookup(%s) = the %s variant, want the plain row", key, got.BodyKey)
			}
		}
		if got, ok := eps.Match(e.Method, e.Path, body); !ok || got.RateKey() != e.RateKey() || got.Tool != e.Tool {
			t.Errorf("Match(%s) = %s (%s), %v: an earlier template shadows the row", key, got.RateKey(), got.Tool, ok)
		}
		if e.Undo != nil && (e.Undo.Tool == "" || e.Undo.Param == "" || e.Undo.Note == "") {
			t.Errorf("%s: an inverse needs a tool, a parameter and a note", key)
		}
		if e.Undo != nil && len(eps.ByTool(e.Undo.Tool)) == 0 {
			t.Errorf("%s: undo tool %s calls no endpoint of the table", key, e.Undo.Tool)
		}
		// Every route that deletes is a typed delete's, so a universal
		// request to it meets the rule that deletes always need approval.
		if e.Kind == xapi.EffectDelete && e.Tool == "" && e.SameAs == "" {
			t.Errorf("%s deletes but names no typed tool whose effect it has", key)
		}
		if e.SameAs != "" && (!e.RawOnly || e.Tool != "" || len(eps.ByTool(e.SameAs)) == 0) {
			t.Errorf("%s: SameAs %q belongs on a raw-only row, naming a tool of the table", key, e.SameAs)
		}
	}
}

// TestEndpointScopesAgreeWithSpec: a row's scopes are exactly the OAuth 2.0
// user-token scopes X's spec lists for the operation, so login asks for
// what the tools need and no more; an operation user tokens cannot call
// lists none.
func TestEndpointScopesAgreeWithSpec(t *testing.T) {
	doc := xspec.FromEnv(t).Doc()
	for _, e := range xapi.NewEndpoints().All() {
		item := doc.Paths.Find(specPath(e.Path))
		if item == nil || item.GetOperation(e.Method) == nil {
			t.Errorf("%s: not in the spec", e.RateKey())
			continue
		}
		var want []string
		if sec := item.GetOperation(e.Method).Security; sec != nil {
			for _, req := range *sec {
				if sc, ok := req["OAuth2UserToken"]; ok {
					want = append(want, sc...)
				}
			}
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(e.Scopes))
		if !slices.Equal(got, want) {
			t.Errorf("%s: scopes %v, the spec says %v", e.RateKey(), got, want)
		}
	}
}

// TestLoginScopesCoverEveryTypedRow: login asks for every scope a typed
// row outside an optional scope group needs, and offline.access for the
// refresh token; asked for a group, it adds that group's scopes.
func TestLoginScopesCoverEveryTypedRow(t *testing.T) {
	eps := xapi.NewEndpoints()
	scopes := eps.Scopes()
	if !slices.Contains(scopes, "offline.access") {
		t.Error("login does not ask for offline.access")
	}
	for _, e := range eps.All() {
		if e.RawOnly {
			continue
		}
		want := scopes
		if e.ScopeGroup != "" {
			want = eps.ScopesWith(e.ScopeGroup)
		}
		for _, sc := range e.Scopes {
			if !slices.Contains(want, sc) {
				t.Errorf("%s (scope group %q) needs %s, which login with its group does not ask for", e.RateKey(), e.ScopeGroup, sc)
			}
		}
	}
}

// TestDefaultLoginScopesUnchanged: a login that asks for no optional group
// asks for exactly what it asked before scope groups existed, so adding
// the direct-message tools asks no existing user for more.
func TestDefaultLoginScopesUnchanged(t *testing.T) {
	want := []string{"bookmark.read", "bookmark.write", "follows.read", "follows.write", "like.read", "like.write",
		"media.write", "mute.write", "offline.access", "tweet.read", "tweet.write", "users.read"}
	eps := xapi.NewEndpoints()
	if got := eps.Scopes(); !slices.Equal(got, want) {
		t.Errorf("default login scopes = %v, want %v", got, want)
	}
	if got := eps.ScopesWith(); !slices.Equal(got, want) {
		t.Errorf("login with no group = %v, want %v", got, want)
	}
}

// TestScopeGroups: the direct-message rows form the "dm" group, whose
// scopes are asked for only with the group; an unknown group adds nothing.
func TestScopeGroups(t *testing.T) {
	eps := xapi.NewEndpoints()
	if got := eps.ScopeGroups(); !slices.Contains(got, xapi.ScopeGroupDM) {
		t.Fatalf("scope groups %v lack %q", got, xapi.ScopeGroupDM)
	}
	for _, sc := range []string{"dm.read", "dm.write"} {
		if slices.Contains(eps.Scopes(), sc) {
			t.Errorf("default login asks for %s", sc)
		}
		if !slices.Contains(eps.ScopesWith(xapi.ScopeGroupDM), sc) {
			t.Errorf("login with +dm does not ask for %s", sc)
		}
	}
	if got, want := eps.ScopesWith("no_such_group"), eps.Scopes(); !slices.Equal(got, want) {
		t.Errorf("an unknown group changed the scopes: %v, want %v", got, want)
	}
	for _, tool := range []string{"x_send_dm", "x_delete_dm"} {
		for _, e := range eps.ByTool(tool) {
			if e.ScopeGroup != xapi.ScopeGroupDM {
				t.Errorf("%s: scope group %q, want %q", e.RateKey(), e.ScopeGroup, xapi.ScopeGroupDM)
			}
		}
	}
}

// TestListScopesAreAnOptionalGroup: every List row is in the "list" scope
// group, and the default login asks for no list.* scope, so an account
// that never uses Lists never grants X access to them.
func TestListScopesAreAnOptionalGroup(t *testing.T) {
	eps := xapi.NewEndpoints()
	rows := 0
	for _, e := range eps.All() {
		isList := strings.HasPrefix(e.Path, "/2/lists") || strings.Contains(e.Path, "_lists") || strings.HasSuffix(e.Path, "/list_memberships")
		if isList != (e.ScopeGroup == xapi.ScopeGroupList) {
			t.Errorf("%s: scope group %q", e.RateKey(), e.ScopeGroup)
		}
		if isList {
			rows++
		}
	}
	if rows != 14 {
		t.Fatalf("%d List rows, want 14 (create, delete, add and remove member, members, tweets, owned, pinned and followed lists with their pin, unpin, follow and unfollow, memberships)", rows)
	}
	for _, sc := range eps.Scopes() {
		if strings.HasPrefix(sc, "list.") {
			t.Errorf("the default login asks for %s", sc)
		}
	}
}

// TestOwnedReadRowsAreTheTwelve: the rows priced as Owned Reads are the
// twelve reads of X's 2026-04-16 entry, each at $0.001 per resource.
func TestOwnedReadRowsAreTheTwelve(t *testing.T) {
	var want []string
	for _, suffix := range []string{"bookmarks", "blocking", "muting", "pinned_lists", "tweets", "mentions", "liked_tweets",
		"followers", "following", "owned_lists", "followed_lists", "list_memberships"} {
		want = append(want, "GET /2/users/:id/"+suffix)
	}
	var got []string
	for _, e := range xapi.NewEndpoints().All() {
		if e.Price.Owned == 0 {
			continue
		}
		got = append(got, e.RateKey())
		if e.Price.Owned != xapi.PriceOwnedRead || e.Price.Owned >= e.Price.Unit {
			t.Errorf("%s: owned price $%.3f, want $%.3f, below its ordinary $%.3f", e.RateKey(), e.Price.Owned, xapi.PriceOwnedRead, e.Price.Unit)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("owned reads %v, want %v", got, want)
	}
}

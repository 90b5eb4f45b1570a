package xsim

import (
	"fmt"
	"maps"
)

// Access is the access level of an account's developer app on X. Since
// 2026 X sells two: self-serve pay-per-use credits and negotiated
// Enterprise contracts. Several 2026 rules apply to self-serve only.
type Access string

const (
	// AccessEnterprise is an Enterprise contract: none of the 2026
	// self-serve restrictions apply. It is the level of a world that says
	// nothing, so worlds and tests written before 2026 behave as they did.
	AccessEnterprise Access = "enterprise"
	// AccessPayPerUse is self-serve pay-per-use access, the only level X
	// sells to a new developer. On it:
	//
	//   - a reply is refused unless its target post summoned the replier
	//     (changelog 2026-02-23, "Addressing LLM-generated spam");
	//   - likes, follows and quote posts are refused (changelog 2026-04-16,
	//     effective 2026-04-20: "Following, Likes, and Quote-Posts via the
	//     API have been removed from all self-serve tiers"). Unliking and
	//     unfollowing are refused too: X removed "Following" and "Likes",
	//     which in its API reference are the endpoint groups that make and
	//     undo the relation, as its 2023 removal of "Follows" from Basic and
	//     Pro took both directions; the reads of those relations stay, since
	//     the same entry prices them as Owned Reads. Deleting a quote post is
	//     still allowed: it is DELETE /2/tweets/{id}, the "Content: Manage"
	//     endpoint every post uses, which X did not change, and what X
	//     removed is making quote posts ("quote-posting requires an
	//     Enterprise plan", says the create-post reference);
	//   - a summoned reply costs $0.010 with or without a URL, and the
	//     twelve Owned Reads cost $0.001 per resource (the 2026-04-16 prices).
	AccessPayPerUse Access = "pay_per_use"
)

// ParseAccess reads an access level as configuration spells it.
func ParseAccess(s string) (Access, error) {
	switch a := Access(s); a {
	case AccessEnterprise, AccessPayPerUse:
		return a, nil
	}
	return "", fmt.Errorf("xsim: access level %q is not one of %s, %s", s, AccessPayPerUse, AccessEnterprise)
}

// DetailNotPermitted is the detail of X's bare 403, which it sends for a
// reply its target did not summon as for five other causes (an app outside
// a Project, read-only permissions, a token minted before write access, a
// suspended account, reply settings that exclude the replier). X has
// published no other body for the 2026 self-serve refusals, so likes,
// follows and quote posts on pay-per-use answer it too.
const DetailNotPermitted = "You are not permitted to perform this action."

func errNotPermitted() reply { return errForbidden(DetailNotPermitted) }

// removedFromSelfServe reports whether a self-serve app may no longer call
// the route at all (changelog 2026-04-16). Such routes are refused before
// the handler runs, as X refuses an endpoint outside an app's access level
// whatever its request says. Quote posts share POST /2/tweets with every
// other post and are refused in handleCreateTweet.
func removedFromSelfServe(routeKey string) bool {
	switch routeKey {
	case "POST /2/users/{id}/likes", "DELETE /2/users/{id}/likes/{tweet_id}",
		"POST /2/users/{id}/following", "DELETE /2/users/{source_user_id}/following/{target_user_id}":
		return true
	}
	return false
}

// accessOf is the access level of userID's app. Runs under s.mu.
func (s *state) accessOf(userID string) Access {
	if a := s.accessByUser[userID]; a != "" {
		return a
	}
	if s.access != "" {
		return s.access
	}
	return AccessEnterprise
}

// selfServe reports whether the call's app has self-serve access. Runs
// under s.mu.
func (s *Server) selfServe(c *call) bool {
	return c.user != nil && s.st.accessOf(c.user.ID) == AccessPayPerUse
}

// AccessOf returns the access level of userID's app.
func (s *Server) AccessOf(userID string) Access {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.accessOf(userID)
}

// SetAccess sets the access level of every account's app that
// SetUserAccess has not set (World.Access). Setting the level a world
// already has changes nothing, so a sandbox that applies its configuration
// at every start does not rewrite its world file.
func (s *Server) SetAccess(a Access) error {
	if _, err := ParseAccess(string(a)); err != nil {
		return err
	}
	s.mu.Lock()
	if s.st.access == a || s.st.access == "" && a == AccessEnterprise {
		s.mu.Unlock()
		return nil
	}
	s.st.access = a
	s.st.touch(touchedSettings, "")
	s.changed()
	s.mu.Unlock()
	s.persist()
	return nil
}

// SetUserAccess sets the access level of userID's app, as a sandbox
// account configured with its own level; "" makes it follow the world's
// again.
func (s *Server) SetUserAccess(userID string, a Access) error {
	if a != "" {
		if _, err := ParseAccess(string(a)); err != nil {
			return err
		}
	}
	s.mu.Lock()
	if s.st.users[userID] == nil {
		s.mu.Unlock()
		return fmt.Errorf("xsim: no user %s", userID)
	}
	if s.st.accessByUser[userID] == a {
		s.mu.Unlock()
		return nil
	}
	if a == "" {
		delete(s.st.accessByUser, userID)
	} else {
		s.st.accessByUser[userID] = a
	}
	s.st.touch(touchedSettings, "")
	s.changed()
	s.mu.Unlock()
	s.persist()
	return nil
}

// accessSnapshot returns the per-user levels for the world file.
func (s *state) accessSnapshot() map[string]Access {
	if len(s.accessByUser) == 0 {
		return nil
	}
	return maps.Clone(s.accessByUser)
}

// validAccess checks a world's access levels.
func validAccess(w *World, users map[string]bool) error {
	if w.Access != "" {
		if _, err := ParseAccess(string(w.Access)); err != nil {
			return fmt.Errorf("world: access: %w", err)
		}
	}
	for id, a := range w.AccessByUser {
		if !users[id] {
			return fmt.Errorf("world: access_by_user names %q, who is not a user", id)
		}
		if _, err := ParseAccess(string(a)); err != nil {
			return fmt.Errorf("world: access_by_user[%q]: %w", id, err)
		}
	}
	return nil
}

// Replies, as the 2026-02-23 rule sorts them.
type replyKind int

const (
	// replyOwn answers one of the replier's own posts: a thread. The rule
	// is about the original post's author summoning someone else; X sells
	// threads as before and meters them as ordinary posts.
	replyOwn replyKind = iota
	// replySummoned answers a post that summoned the replier.
	replySummoned
	// replyNotSummoned answers a post that did not.
	replyNotSummoned
)

// classifyReply sorts a reply by u to target. The target summons u when it
// @mentions u or quotes one of u's posts (X's two named summons). A target
// that is itself a reply to one of u's posts summons u as well unless
// Options.StrictSummons is set: X has not said whether it does, but its
// automation rules give "replying to a post from your account" as the
// example of a user opting in to automated replies, such a reply carries u
// as an implicit mention (it is in u's mentions timeline), and X's pricing
// meters summoned replies as their own category, which the mentions loop
// of any reply tool is made of. Runs under s.mu.
func (s *Server) classifyReply(target *Tweet, u *User) replyKind {
	if target.AuthorID == u.ID {
		return replyOwn
	}
	for _, name := range mentionsOf(target.Text) {
		if lower(name) == lower(u.Username) {
			return replySummoned
		}
	}
	if q := target.QuoteOf; q != "" {
		if t := s.st.tweets[q]; t != nil && t.AuthorID == u.ID || t == nil && s.st.deleted[q] == u.ID {
			return replySummoned
		}
	}
	if !s.opts.StrictSummons && target.InReplyToUserID == u.ID {
		return replySummoned
	}
	return replyNotSummoned
}

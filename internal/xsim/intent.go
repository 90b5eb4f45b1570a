package xsim

import (
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
)

// X's Web Intents (x.com/intent/tweet, /like, /retweet, /follow) are pages
// of x.com, not of the API: a person who is logged in sees what the link
// prefilled and presses X's button. The emulator serves a small version of
// them, as the demo user (the account the sandbox signs in), so that a
// hand-off can be done by a person without X. What a person does here is
// not an API call: X's API rules (access level, summons) do not apply, no
// counter counts it and nothing is billed, as on x.com.

// intentKinds are the intents served, with the button each one has.
// The user intent is the account's profile card, whose button follows.
var intentKinds = map[string]string{"tweet": "Post", "like": "Like", "retweet": "Repost", "follow": "Follow", "user": "Follow"}

// intentView is what an intent page shows.
type intentView struct {
	Kind, Button, Me string
	// Action is where the button posts: the page's own address, with the
	// query the link gave it.
	Action string
	// Text is the prefilled text of a post; Target the post or account
	// it acts on, in words.
	Text, Target string
	// Done says what pressing the button did; Error why it could not.
	Done, Error string
}

// intentPage is parsed when the emulator first serves an intent.
var intentPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("intent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Button}} · X emulator</title>
<style>body{font:16px system-ui,sans-serif;margin:0 auto;max-width:560px;padding:16px}textarea{width:100%;box-sizing:border-box;font:inherit}
button{font:inherit;padding:8px 20px;border-radius:20px;border:0;background:#111;color:#fff;min-height:40px}.error{color:#b00020}blockquote{border-left:3px solid #ccc;margin:8px 0;padding:4px 10px}</style>
</head><body>
<p>X emulator · signed in as <strong id="me">@{{.Me}}</strong></p>
{{if .Target}}<blockquote id="target">{{.Target}}</blockquote>{{end}}
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
{{if .Done}}<p id="done" role="status">{{.Done}}</p>{{else if not .Error}}
<form method="post" action="{{.Action}}">
{{if eq .Kind "tweet"}}<label for="text">Your post</label><textarea id="text" name="text" rows="5">{{.Text}}</textarea>{{end}}
<button type="submit" id="intent-button">{{.Button}}</button>
</form>{{end}}
</body></html>`))
})

// handleIntent serves GET (the page) and POST (the button) of an intent.
func (s *Server) handleIntent(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	button, ok := intentKinds[kind]
	if !ok {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	v := intentView{Kind: kind, Button: button, Action: "/intent/" + kind + "?" + r.URL.RawQuery, Text: q.Get("text")}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			v.Error = "the form could not be read"
		} else {
			v.Text = r.PostForm.Get("text")
		}
	}
	s.mu.Lock()
	me := s.st.users[s.st.demoUserID]
	if me == nil {
		s.mu.Unlock()
		http.Error(w, "the world has no demo user", http.StatusInternalServerError)
		return
	}
	v.Me = me.Username
	status := http.StatusOK
	target, problem := s.intentTarget(kind, q)
	switch {
	case problem != "":
		v.Error, status = problem, http.StatusBadRequest
	case r.Method == http.MethodPost && v.Error == "":
		v.Done, v.Error = s.intentDo(kind, me, target, q, v.Text)
	}
	if t, ok := target.(*Tweet); ok && t != nil {
		if a := s.st.users[t.AuthorID]; a != nil {
			v.Target = "@" + a.Username + ": " + t.Text
		}
	} else if u, ok := target.(*User); ok && u != nil {
		v.Target = "@" + u.Username + " (" + u.Name + ")"
	}
	s.mu.Unlock()
	if v.Done != "" {
		s.persist()
	}
	if v.Error != "" && status == http.StatusOK {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_ = intentPage().Execute(w, v)
}

// intentTarget is the post (*Tweet) or account (*User) an intent names,
// or why the link names none. Runs under s.mu.
func (s *Server) intentTarget(kind string, q url.Values) (any, string) {
	post := func(id string) (any, string) {
		if id == "" {
			return nil, ""
		}
		if t := s.st.tweets[id]; t != nil {
			return t, ""
		}
		return nil, "The post " + id + " does not exist."
	}
	switch kind {
	case "like", "retweet":
		if q.Get("tweet_id") == "" {
			return nil, "The link names no post (tweet_id)."
		}
		return post(q.Get("tweet_id"))
	case "follow":
		// X's follow intent takes the account's handle, screen_name,
		// and no user id (x.com/intent/follow?screen_name=NAME).
		if q.Get("screen_name") == "" {
			return nil, "The link names no account (screen_name)."
		}
		u := s.st.userByName(q.Get("screen_name"))
		if u == nil {
			return nil, "That account does not exist."
		}
		return u, ""
	case "user":
		var u *User
		switch {
		case q.Get("screen_name") != "":
			u = s.st.userByName(q.Get("screen_name"))
		case q.Get("user_id") != "":
			u = s.st.users[q.Get("user_id")]
		default:
			return nil, "The link names no account (screen_name or user_id)."
		}
		if u == nil {
			return nil, "That account does not exist."
		}
		return u, ""
	}
	if id := q.Get("in_reply_to"); id != "" {
		return post(id)
	}
	if u := q.Get("url"); u != "" {
		return post(path.Base(strings.TrimRight(u, "/")))
	}
	return nil, ""
}

// intentDo does what the intent's button does, as the person me. Runs
// under s.mu.
func (s *Server) intentDo(kind string, me *User, target any, q url.Values, text string) (done, problem string) {
	now := s.now().UTC()
	switch kind {
	case "like":
		s.st.like(Edge{From: me.ID, To: target.(*Tweet).ID, At: now})
		s.changed()
		return "You liked the post.", ""
	case "follow", "user":
		s.st.follow(Edge{From: me.ID, To: target.(*User).ID, At: now})
		s.changed()
		return "You follow @" + target.(*User).Username + ".", ""
	case "retweet":
		t := target.(*Tweet)
		if _, done := s.st.retweets[t.ID][me.ID]; !done {
			author := s.st.users[t.AuthorID]
			rt := &Tweet{ID: s.st.nextID(now), AuthorID: me.ID, Text: "RT @" + author.Username + ": " + t.Text, CreatedAt: now, RetweetOf: t.ID, Lang: t.Lang, Source: "xsim"}
			rt.ConversationID = rt.ID
			s.st.addTweet(rt)
			s.changed()
		}
		return "You reposted the post.", ""
	}
	if strings.TrimSpace(text) == "" {
		return "", "A post needs some text."
	}
	t := &Tweet{AuthorID: me.ID, Text: text, CreatedAt: now, Lang: guessLang(text), Source: "xsim"}
	if parent, ok := target.(*Tweet); ok && parent != nil {
		if q.Get("in_reply_to") != "" {
			t.InReplyToTweetID, t.InReplyToUserID, t.ConversationID = parent.ID, parent.AuthorID, parent.ConversationID
		} else {
			t.QuoteOf = parent.ID
		}
	}
	t.ID = s.st.nextID(now)
	if t.ConversationID == "" {
		t.ConversationID = t.ID
	}
	s.st.addTweet(t)
	s.changed()
	return "Your post is up: " + t.ID, ""
}

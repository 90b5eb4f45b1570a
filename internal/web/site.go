package web

import (
	"net/http"

	"github.com/tuitbot/tuitbot/internal/describe"
)

// notFound is the site's own 404 page, with its navigation. A GET of an
// address that only takes a form's POST is refused as such.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request, sess *session) {
	probe := r.Clone(r.Context())
	probe.Method = http.MethodPost
	if _, pat := s.mux.Handler(probe); pat != "" && pat != "/" {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "this address takes a form's POST", http.StatusMethodNotAllowed)
		return
	}
	s.renderStatus(w, r, http.StatusNotFound, sess, "notfound", "Page not found", r.URL.Path)
}

// postData is the post page.
type postData struct {
	ID        string
	Post      *Post
	Error     string
	When      stamp
	Followers string
	Sandbox   bool
}

// postPage shows one post as X has it. In the sandbox, where no x.com
// page exists for the emulator's posts, the review page's post links lead
// here.
func (s *Server) postPage(w http.ResponseWriter, r *http.Request, sess *session) {
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	id := r.PathValue("id")
	if !isXID(id) {
		s.notFound(w, r, sess)
		return
	}
	f := s.posts.lookup(r.Context(), a.Name, []string{id}, a.Posts)[id]
	d := postData{ID: id, Post: f.V, Error: f.Error, Sandbox: a.Sandbox}
	if p := f.V; p != nil {
		d.Followers = describe.Count(p.Followers)
		if p.CreatedAt != "" {
			d.When = stampOf(s.d.Now(), p.CreatedAt, false)
		}
	}
	s.render(w, r, sess, "postpage", "Post "+id, d)
}

// isXID reports an X id: 1 to 19 digits.
func isXID(s string) bool {
	if s == "" || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

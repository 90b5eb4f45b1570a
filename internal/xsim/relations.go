package xsim

// Relations other than following (muting, say) are plain edges between two
// users, kept per relation name: adding one to the emulator is a pair of
// routes, with no new state or persistence code.

// relate adds the edge and reports whether it is new.
func (s *state) relate(name string, e Edge) bool {
	byFrom := s.relations[name]
	if byFrom == nil {
		byFrom = map[string][]Edge{}
		s.relations[name] = byFrom
	}
	if hasEdge(byFrom[e.From], e.From, e.To) {
		return false
	}
	s.touchEdge(touchedRelation, name, e.From, e.To)
	byFrom[e.From] = append(byFrom[e.From], e)
	return true
}

// unrelate removes the edge and reports whether it was there.
func (s *state) unrelate(name, from, to string) bool {
	byFrom := s.relations[name]
	if !hasEdge(byFrom[from], from, to) {
		return false
	}
	s.touchEdge(touchedRelation, name, from, to)
	byFrom[from] = dropEdge(byFrom[from], from, to)
	return true
}

// related reports whether from has the relation to to.
func (s *state) related(name, from, to string) bool {
	return hasEdge(s.relations[name][from], from, to)
}

// relationEdges lists every edge of every relation, for the world file.
func (s *state) relationEdges() map[string][]Edge {
	if len(s.relations) == 0 {
		return nil
	}
	out := map[string][]Edge{}
	for name, byFrom := range s.relations {
		var es []Edge
		for _, e := range byFrom {
			es = append(es, e...)
		}
		if len(es) == 0 {
			continue
		}
		sortEdgesStable(es)
		out[name] = es
	}
	return out
}

// relationCreate handles POST /2/users/{id}/<relation> with a body naming
// target_user_id (verb names the act in X's refusal to relate to oneself),
// answering {"data": {flag: true}} as X does.
func (s *Server) relationCreate(name, verb, flag, bill string) func(*call) reply {
	return func(c *call) reply {
		target, bad := s.targetUserBody(c, verb)
		if bad != nil {
			return *bad
		}
		s.st.relate(name, Edge{From: c.user.ID, To: target.ID, At: c.now.UTC()})
		s.chargeWrite(c, bill)
		return ok(map[string]any{"data": map[string]any{flag: true}})
	}
}

// relationList handles GET /2/users/{id}/<relation>: the users the
// authenticated user has the relation to, the latest first, paged by
// max_results (1 to 1000) and pagination_token. X answers it for the
// authenticated user alone: their blocks and mutes are theirs to see.
func (s *Server) relationList(name string) func(*call) reply {
	return func(c *call) reply {
		if bad := s.selfUser(c, "id"); bad != nil {
			return *bad
		}
		return s.userList(c, latestEdges(s.st.relations[name][c.user.ID], edgeTo), 1, 1000, 100, BillUserRead)
	}
}

// relationDelete handles DELETE
// /2/users/{source_user_id}/<relation>/{target_user_id}.
func (s *Server) relationDelete(name, flag, bill string) func(*call) reply {
	return func(c *call) reply {
		if bad := s.selfUser(c, "source_user_id"); bad != nil {
			return *bad
		}
		tid := c.r.PathValue("target_user_id")
		if bad := idParam("target_user_id", tid); bad != nil {
			return *bad
		}
		if s.st.users[tid] == nil {
			return errNotFound("user", "target_user_id", tid)
		}
		s.st.unrelate(name, c.user.ID, tid)
		s.chargeWrite(c, bill)
		return ok(map[string]any{"data": map[string]any{flag: false}})
	}
}

// Related reports whether user from has relation name to user to (muting,
// say), for tests.
func (s *Server) Related(name, from, to string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.related(name, from, to)
}

package xrequest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tuitbot/tuitbot/internal/xapi"
)

// FuzzClassify holds the classifier to its contract on everything the
// guard lets through: a request Check accepts matches at most one row of
// the endpoint table; a write matching none is an unknown write (KindOther,
// no equivalent tool) and a GET is a read. Respelling the accepted path
// (percent-encoding every byte, changing letter case, adding a trailing
// slash) cannot move it to another row. Nothing panics, on accepted or
// refused input.
func FuzzClassify(f *testing.F) {
	f.Fuzz(func(t *testing.T, method, path, query, body string) {
		req := Request{Method: method, Path: path, Query: splitKVs(query), Body: body}
		_ = Classify(method, path) // must not panic on refused input either
		c, err := Check(req)
		if err != nil {
			return
		}
		e := assertOneRow(t, c)

		if c.Method == "GET" {
			return
		}
		respellings := []string{encodeEveryByte(c.Path), strings.ToUpper(c.Path)}
		if !strings.HasSuffix(c.Path, "/") {
			respellings = append(respellings, c.Path+"/")
		}
		for _, p := range respellings {
			if len(p) > MaxPathBytes {
				continue
			}
			alt := req
			alt.Path = p
			ac, err := Check(alt)
			if err != nil {
				t.Fatalf("path %q is accepted but its respelling %q is not: %v", c.Path, p, err)
			}
			ae := assertOneRow(t, ac)
			if ae.Kind != e.Kind || ae.Endpoint != e.Endpoint || ae.Variant != e.Variant {
				t.Fatalf("respelling %q of %q classifies as %+v, the original as %+v", p, c.Path, ae, e)
			}
		}
	})
}

// assertOneRow classifies an accepted request and checks the result
// against the table directly.
func assertOneRow(t *testing.T, c *Checked) Effect {
	t.Helper()
	rows := endpoints()
	matched := matchRows(rows, c.Method, pathSegments(c.Path))
	if len(matched) > 1 {
		names := make([]string, len(matched))
		for i, m := range matched {
			names[i] = rows[m].name()
		}
		t.Fatalf("%s %s is ambiguous: matches %v", c.Method, c.Path, names)
	}
	e := ClassifyChecked(c)
	tool := e.Equivalent()
	// Classify sees no body, so it cannot tell a body-keyed variant (an
	// edit) from its row; everything else it must agree on.
	if p := Classify(c.Method, c.Path); p.Endpoint != e.Endpoint || p.Kind != e.Kind && !isVariantOf(e, p) {
		t.Fatalf("Classify %+v and ClassifyChecked %+v disagree on %s %s", p, e, c.Method, c.Path)
	}
	switch {
	case c.Method == "GET":
		if e != (Effect{Kind: KindRead}) || len(matched) != 0 || tool != "" {
			t.Fatalf("GET %s classifies as %+v (rows %v, tool %q)", c.Path, e, matched, tool)
		}
	case len(matched) == 0:
		if e != (Effect{Kind: KindOther}) || tool != "" || e.Listed() {
			t.Fatalf("%s %s matches no row but classifies as %+v, tool %q", c.Method, c.Path, e, tool)
		}
	default:
		row := rows[matched[0]]
		typed := row.tool != "" || kindTools()[row.kind] != ""
		if e.Kind != row.kind && !isVariantOf(e, Effect{Tool: row.tool}) || e.Endpoint != row.name() || (tool == "") == typed {
			t.Fatalf("%s %s matches %q but classifies as %+v, tool %q", c.Method, c.Path, row.name(), e, tool)
		}
		for _, seg := range templateSegments(row.path) {
			if f, ok := placeholder(seg); ok && fieldValue(e, f) == "" && f != fieldMedia {
				t.Fatalf("%s %s: %s placeholder left empty in %+v", c.Method, c.Path, seg, e)
			}
		}
	}
	if e.Variant != "" && e.Kind != KindTweetCreate {
		t.Fatalf("variant %q on a %s", e.Variant, e.Kind)
	}
	return e
}

func fieldValue(e Effect, field string) string {
	switch field {
	case fieldUser:
		return e.UserID
	case fieldTweet:
		return e.TweetID
	case fieldTarget:
		return e.TargetUserID
	case fieldList:
		return e.ListID
	case fieldDM:
		return e.DMEventID
	case fieldConv:
		return e.ConversationID
	}
	return "?" // a field the classifier does not keep
}

// encodeEveryByte percent-encodes every byte but '/'.
func encodeEveryByte(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			b.WriteByte('/')
			continue
		}
		fmt.Fprintf(&b, "%%%02X", p[i])
	}
	return b.String()
}

// isVariantOf reports whether e is a body-keyed variant of plain's row.
func isVariantOf(e, plain Effect) bool {
	for _, v := range variants(xapi.NewEndpoints()) {
		if v.of == plain.Tool && v.tool == e.Tool && v.kind == e.Kind {
			return true
		}
	}
	return false
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/app"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
)

// auditStatusNames are the values `audit recent --status` accepts (the
// gateway refuses any other).
var auditStatusNames = []string{"pending", "success", "failure", "unknown", "interrupted", "duplicate"}

// showItem prints one queue item. A reviewer deciding on a delete, a like
// or a follow needs to see the post or the account it touches, which the
// parameters (an id) do not say, so it is read from X; if it cannot be,
// the item is still shown.
func (c *cli) showItem(ctx context.Context, a *app.App, it *gateway.ApprovalItem) error {
	printItem(c.stdout, it)
	if it.Status == gateway.ApprovalPending {
		// What this printed, by hash: a decision that names it holds only
		// while the item is still exactly this.
		fmt.Fprintf(c.stdout, "  content: %s\n  approve exactly this: tuitbot approve approve %d --shown %s\n", it.ContentHash, it.ID, it.ContentHash)
	}
	act := describe.Of(it.Tool, it.EquivalentTool, it.Params)
	if act.Target.Kind == describe.KindNone {
		return nil
	}
	fmt.Fprintf(c.stdout, "  %s: %s\n", act.Verb, c.describeTarget(ctx, a, act.Target))
	// An edit shows the text it replaces beside the new one.
	if id, text, ok := describe.EditOf(it.Tool, it.EquivalentTool, it.Params); ok {
		old := ""
		if x, err := a.XClient(); err == nil {
			rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			if posts, err := describe.Posts(rctx, x, []string{id}); err == nil {
				old = posts[id].Text
			}
			cancel()
		}
		fmt.Fprintf(c.stdout, "  %s\n", describe.EditLine(id, old, text))
	}
	return nil
}

// describeTarget reads one post (its text, author and age) or account
// (its handle, name and followers) for a reviewer.
func (c *cli) describeTarget(ctx context.Context, a *app.App, t describe.Target) string {
	x, err := a.XClient()
	if err != nil {
		return describe.CannotRead(t, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	return describe.TargetLine(ctx, x, t, a.Now())
}

// printBody shows the JSON body of a universal x_post request on its own,
// indented: in the parameters it is an escaped string nobody can review.
func printBody(w io.Writer, it *gateway.ApprovalItem) {
	if it.Tool != "x_post" {
		return
	}
	var p struct {
		Path string `json:"path"`
		Body string `json:"body"`
	}
	if json.Unmarshal(it.Params, &p) != nil {
		return
	}
	if p.Path != "" {
		fmt.Fprintf(w, "  POST %s\n", p.Path)
	}
	if p.Body == "" {
		fmt.Fprintln(w, "  body: (empty)")
		return
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, []byte(p.Body), "    ", "  ") != nil {
		fmt.Fprintf(w, "  body: %s\n", p.Body)
		return
	}
	fmt.Fprintf(w, "  body:\n    %s\n", pretty.String())
}

// printReview keeps a decision visible: who reviewed, when, and the note
// they left (a rejection's reason above all).
func printReview(w io.Writer, it *gateway.ApprovalItem) {
	if it.ReviewedBy == "" && it.ReviewNotes == "" {
		return
	}
	fmt.Fprintf(w, "  reviewed: %s by %s at %s\n", it.Status, orDash(it.ReviewedBy), orDash(it.ReviewedAt))
	if it.ReviewNotes != "" {
		fmt.Fprintf(w, "  notes: %s\n", it.ReviewNotes)
	}
}

// rollbackLine is an audit row's rollback guidance in one line: the tool
// and parameters that undo it, or why nothing can.
func rollbackLine(e gateway.AuditEntry) string {
	g := e.Rollback
	switch {
	case e.Status != "success":
		return "rollback: nothing to undo (" + e.Status + ")"
	case g == nil:
		return "rollback: no guidance recorded"
	case g.Reversible && g.UndoTool != "":
		keys := make([]string, 0, len(g.UndoParams))
		for k := range g.UndoParams {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var args []string
		for _, k := range keys {
			v, _ := json.Marshal(g.UndoParams[k])
			args = append(args, k+"="+string(v))
		}
		line := "rollback: " + g.UndoTool + " " + strings.Join(args, " ")
		if g.Note != "" {
			line += " (" + g.Note + ")"
		}
		return line
	default:
		note := g.Note
		if note == "" {
			note = "no undo exists"
		}
		return "rollback: not reversible: " + note
	}
}

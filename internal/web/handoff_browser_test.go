package web

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tuitbot/tuitbot/internal/config"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/xsim"
)

// callForHandOff has the agent call tool, which X's API may not do on
// pay-per-use access, and returns the hand-off the refusal names.
func (s *site) callForHandOff(cs *mcp.ClientSession, tool string, args map[string]any, code string) int64 {
	s.t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	var raw string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			raw += tc.Text
		}
	}
	var env struct {
		Success bool `json:"success"`
		Error   struct {
			Code      string `json:"code"`
			HandOffID int64  `json:"handoff_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &env); err != nil || env.Success || env.Error.Code != code || env.Error.HandOffID == 0 {
		s.t.Fatalf("%s was not refused with %s and a hand-off: %s", tool, code, raw)
	}
	if strings.Contains(raw, "/approve") || strings.Contains(raw, "/a/") {
		s.t.Fatalf("the agent got a link that decides: %s", raw)
	}
	return env.Error.HandOffID
}

// strangerPost is a post by another account that neither mentions nor
// quotes nor answers the demo account: X's API lets a pay-per-use app
// neither like it nor reply to it.
func strangerPost(t *testing.T, srv *xsim.Server, skip ...string) xsim.Tweet {
	t.Helper()
	me := srv.DemoUserID()
	w := srv.World()
	for i := len(w.Tweets) - 1; i >= 0; i-- {
		p := w.Tweets[i]
		if !slices.Contains(skip, p.ID) && p.AuthorID != me && p.RetweetOf == "" && p.QuoteOf == "" && p.InReplyToUserID == "" &&
			!strings.Contains(strings.ToLower(p.Text), "@"+xsim.DemoUsername) {
			return p
		}
	}
	t.Fatal("no stranger's post in the world")
	return xsim.Tweet{}
}

// TestBrowserHandOffLoop walks a hand-off in chromium on a phone-sized
// window, on pay-per-use access: the agent's like and reply are refused
// before X and become hand-offs; each card offers Do it on X, which opens
// the emulator's intent page prefilled; the person presses Like or Post
// there; Check X now finds it, and the audit row records done_by_person
// with the post. A reply suggestion of the autopilot (a hand-off made the
// way its discovery loop makes one) walks the same loop.
func TestBrowserHandOffLoop(t *testing.T) {
	s := newSite(t, func(c *config.Config) { c.XAPI.Access = config.AccessPayPerUse })
	simURL, srv := s.a.Sim.Current()
	if srv == nil {
		t.Fatal("the sandbox's emulator does not run in this process")
	}
	ctx := browser(t, 390, 844)
	run(t, ctx, "log in", chromedp.EmulateViewport(390, 844), chromedp.Navigate(s.login), chromedp.WaitReady("body"))
	agent := s.mcpClient()
	liked := strangerPost(t, srv)
	answered := strangerPost(t, srv, liked.ID)
	suggested := strangerPost(t, srv, liked.ID, answered.ID)
	replyText := "Thanks for this & see you at #GopherCon"
	suggestion := "A suggested reply: what made you pick Go?"

	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		code       string
		// button is the intent page's; linkHas what the link prefills.
		button  string
		linkHas []string
		post    string
	}{
		{"like", "x_like_tweet", map[string]any{"tweet_id": liked.ID}, "x_feature_unavailable", "Like",
			[]string{"/intent/like?", "tweet_id=" + liked.ID}, liked.ID},
		{"reply", "x_reply_to_tweet", map[string]any{"in_reply_to_id": answered.ID, "text": replyText}, "reply_not_summoned", "Post",
			[]string{"/intent/tweet?", "in_reply_to=" + answered.ID, "text=Thanks+for+this+%26+see+you+at+%23GopherCon"}, ""},
		{"suggestion", "", map[string]any{"in_reply_to_id": suggested.ID, "text": suggestion}, "", "Post",
			[]string{"/intent/tweet?", "in_reply_to=" + suggested.ID, "text=A+suggested+reply"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var id int64
			if tc.tool == "" {
				h, err := s.a.Gateway.HandOff(context.Background(), gateway.HandOffRequest{Effect: "x_reply_to_tweet", TweetID: suggested.ID,
					Text: suggestion, Caller: "autopilot", Loop: "discovery", Reason: "a reply suggestion"})
				if err != nil {
					t.Fatal(err)
				}
				id = h.ID
			} else {
				id = s.callForHandOff(agent, tc.tool, tc.args, tc.code)
			}
			card := fmt.Sprintf("#item-handoff-%d", id)
			run(t, ctx, "the hand-off's card", chromedp.Navigate(s.base+"/approvals"), chromedp.WaitVisible(card+" a.do-on-x"))
			if n := get(t, ctx, "no Approve", chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, card+` form[action$="/approve"]`))); n != 0 {
				t.Fatal("a hand-off's card offers Approve")
			}
			href := get(t, ctx, "the link", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).href`, card+" a.do-on-x")))
			if !strings.HasPrefix(href, simURL+"/intent/") {
				t.Fatalf("Do it on X leads to %q, not the sandbox's intent page at %s", href, simURL)
			}
			for _, part := range tc.linkHas {
				if !strings.Contains(href, part) {
					t.Fatalf("Do it on X leads to %q, without %q", href, part)
				}
			}
			if w := get(t, ctx, "fits the phone", chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, window.innerWidth]`)); w[1] != 390 || w[0] > w[1] {
				t.Fatalf("the page is %d px wide in a %d px window, want 390", w[0], w[1])
			}
			shot(t, ctx, "handoff-"+tc.name)

			// The link opens a new tab on x.com; here it opens in this one.
			run(t, ctx, "Do it on X", chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).removeAttribute("target")`, card+" a.do-on-x")),
				chromedp.Click(chromedp.CSS(card+" a.do-on-x")), chromedp.WaitVisible(chromedp.ID("intent-button")))
			if b := get(t, ctx, "button", chromedp.Text(chromedp.ID("intent-button"))); b != tc.button {
				t.Fatalf("the intent page's button says %q, want %q", b, tc.button)
			}
			if text, ok := tc.args["text"].(string); ok {
				if v := get(t, ctx, "prefilled", chromedp.Evaluate[string](`document.getElementById("text").value`)); v != text {
					t.Fatalf("the reply is prefilled as %q, want %q", v, text)
				}
			}
			run(t, ctx, "press "+tc.button, chromedp.Click(chromedp.ID("intent-button")), chromedp.WaitVisible(chromedp.ID("done")))

			// The person's act is in the world; tuitbot finds it.
			h, err := s.a.Gateway.GetHandOff(context.Background(), id)
			if err != nil || h.Status != gateway.HandOffOpen {
				t.Fatalf("before the check: %+v %v", h, err)
			}
			run(t, ctx, "check X now", chromedp.Navigate(s.base+"/approvals"), chromedp.Click(chromedp.ID("check-handoffs")),
				chromedp.WaitVisible(css("#handoff-done-%d", id)))
			if st := get(t, ctx, "status", chromedp.Evaluate[string](fmt.Sprintf(`document.getElementById("handoff-done-%d").dataset.status`, id))); st != gateway.HandOffDone {
				t.Fatalf("the page says hand-off %d is %q", id, st)
			}
			h, err = s.a.Gateway.GetHandOff(context.Background(), id)
			if err != nil || h.Status != gateway.HandOffDone || h.PostID == "" || (tc.post != "" && h.PostID != tc.post) {
				t.Fatalf("after the check: %+v %v", h, err)
			}
			row, err := s.a.Gateway.Detail(context.Background(), h.CorrelationID)
			if err != nil || row.Status != "handed_off" || row.Resolution != gateway.HandOffDone || !strings.Contains(string(row.Result), h.PostID) {
				t.Fatalf("audit row: %+v %v", row, err)
			}
			if text, ok := tc.args["text"].(string); ok {
				var made *xsim.Tweet
				for _, p := range srv.World().Tweets {
					if p.ID == h.PostID {
						made = &p
					}
				}
				if made == nil || made.InReplyToTweetID != tc.args["in_reply_to_id"] || made.Text != text || made.AuthorID != srv.DemoUserID() {
					t.Fatalf("the post found is %+v, not the person's reply", made)
				}
			}
			shot(t, ctx, "handoff-"+tc.name+"-done")
		})
	}
}

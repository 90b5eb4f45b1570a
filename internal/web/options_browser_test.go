package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserEditPostOptions: at phone width, the edit form's post
// settings fit the screen and pass axe; choosing who can reply and adding
// a poll saves them through the gateway; a poll on a post with media is
// shown back with its field named, the form still open and fitting.
func TestBrowserEditPostOptions(t *testing.T) {
	s := newSite(t, nil)
	agent := s.mcpClient()
	plain := s.postTweetWith(agent, map[string]any{"text": "Which do you use?"})
	media := s.postTweetWith(agent, map[string]any{"text": "Our new logo", "media_ids": []string{"1880000000000000001"}})
	ctx := browser(t, 390, 844)
	run(t, ctx, "log in", chromedp.Navigate(s.login), chromedp.WaitVisible(css("#item-%d", plain)))

	fits := func(step string) {
		t.Helper()
		if get(t, ctx, step+": overflow", chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)) {
			t.Errorf("%s: the page scrolls sideways at phone width", step)
		}
		t.Run("axe "+step, func(t *testing.T) {
			axe := axeSource(t)
			run(t, ctx, step+": load axe", chromedp.Evaluate[chromedp.Void](axe))
			for _, v := range get(t, ctx, step+": axe", chromedp.Evaluate[[]axeViolation](runAxe, chromedp.EvalAwaitPromise)) {
				if v.Impact == "serious" || v.Impact == "critical" {
					b, _ := json.Marshal(v.Targets)
					t.Errorf("%s: axe %s (%s) on %d elements: %s %s", step, v.ID, v.Impact, v.Nodes, v.Help, b)
				}
			}
		})
	}

	run(t, ctx, "open the edit form",
		chromedp.Click(css("#item-%d button.edit-toggle", plain)),
		chromedp.WaitVisible(css("#reply-%d", plain)))
	fits("open form")
	shot(t, ctx, "edit-options-phone")
	run(t, ctx, "choose settings",
		chromedp.SetValue(css("#reply-%d", plain), "following"),
		chromedp.SendKeys(css("#poll-%d-0", plain), "Go"),
		chromedp.SendKeys(css("#poll-%d-1", plain), "Rust"),
		chromedp.SendKeys(css("#poll-min-%d", plain), "1440"),
		chromedp.Click(css("#edit-%d button[type=submit]", plain)),
		chromedp.WaitVisible(chromedp.ID("flash")))
	it, err := s.a.Gateway.Item(context.Background(), plain)
	if err != nil || !strings.Contains(string(it.Params), `"options":{"poll":{"duration_minutes":1440,"options":["Go","Rust"]},"reply_settings":"following"}`) {
		t.Fatalf("the settings did not reach the queue: %s %v", it.Params, err)
	}
	if words := get(t, ctx, "read the settings", chromedp.Text(css("#item-%d ul.post-options", plain))); !strings.Contains(words, "Poll: Go / Rust, 1 day") || !strings.Contains(words, "Replies: people you follow") {
		t.Errorf("the item's settings read %q", words)
	}

	run(t, ctx, "a poll on a post with media",
		chromedp.Click(css("#item-%d button.edit-toggle", media)),
		chromedp.SendKeys(css("#poll-%d-0", media), "Old"),
		chromedp.SendKeys(css("#poll-%d-1", media), "New"),
		chromedp.SendKeys(css("#poll-min-%d", media), "60"),
		chromedp.Click(css("#edit-%d button[type=submit]", media)),
		chromedp.WaitVisible(css("#edit-error-%d", media)))
	if msg := get(t, ctx, "read the refusal", chromedp.Text(css("#edit-error-%d", media))); !strings.Contains(msg, "options.poll") {
		t.Errorf("the refusal reads %q, want it to name options.poll", msg)
	}
	if kept := get(t, ctx, "read the choice", chromedp.Value(css("#poll-%d-1", media))); kept != "New" {
		t.Errorf("the refused choice reads %q, want what was sent", kept)
	}
	fits("refused edit")
	shot(t, ctx, "edit-options-refused-phone")
	if it, err := s.a.Gateway.Item(context.Background(), media); err != nil || it.Edited {
		t.Errorf("a refused edit changed the item: %+v %v", it, err)
	}
}

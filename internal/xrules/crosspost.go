package xrules

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
)

// RuleCrossAccountDuplicate: no identical cross-posting across accounts.
// X's automation rules forbid posting the same or substantially similar
// content from several accounts one operates; no setting and no person
// overrides it.
const RuleCrossAccountDuplicate = "no_cross_account_duplicates"

// NearSameSimilarity is how alike two normalised texts must be to count
// as the same post: at most one edit (a character inserted, removed or
// changed) in ten. docs/x-rules.md gives the reasoning.
const NearSameSimilarity = 0.9

// Posted is a post one of the home's other accounts made, or may have made
// (pending, of unknown outcome), as its audit row keeps it.
type Posted struct {
	Account       string
	Text          string
	CorrelationID string
	Status        string
	At            string
	// Normal is Text's normal form when the caller keeps it (Normal); nil
	// means it is computed for each comparison.
	Normal *NormalForm
}

// NormalForm is a post's text as NormalizePost leaves it, computed once
// for the comparisons of many calls.
type NormalForm struct {
	text string
	norm []rune
}

// Normal returns text's normal form.
func Normal(text string) *NormalForm {
	return &NormalForm{text: text, norm: []rune(NormalizePost(text))}
}

// urlRE finds links, which X shortens to t.co links of one length
// whatever they point at: two posts that differ only in a link (or a
// tracking parameter) say the same thing.
var urlRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\b(?:https?://|www\.)\S+`) })

// NormalizePost brings a post's text to what decides whether two posts
// say the same: links removed, then foldText (compatibility forms and
// case folded, every run of whitespace, punctuation, symbols and emoji one
// space), so "New release!! 🚀 https://a.example/x" and "new release
// https://b.example/y" are one text. @ and # go with the punctuation; the
// names stay.
func NormalizePost(text string) string {
	return foldText(urlRE().ReplaceAllString(text, " "))
}

// NearSame reports whether two posts are the same or nearly the same
// text, and how alike they are (1 is identical once normalised). A text
// that normalises to nothing (links, emoji) is the same only as one that
// normalises to nothing too and is equal once folded.
func NearSame(a, b string) (bool, float64) {
	return Normal(a).nearSame(Normal(b))
}

// nearSame is NearSame of p's and q's texts.
func (p *NormalForm) nearSame(q *NormalForm) (bool, float64) {
	a, b, na, nb := p.text, q.text, p.norm, q.norm
	if len(na) == 0 || len(nb) == 0 {
		if len(na) == 0 && len(nb) == 0 && foldText(a) == foldText(b) && foldText(a) != "" {
			return true, 1
		}
		return false, 0
	}
	longest := max(len(na), len(nb))
	limit := int(float64(longest) * (1 - NearSameSimilarity))
	d, ok := editsWithin(na, nb, limit)
	if !ok {
		return false, 0
	}
	return true, 1 - float64(d)/float64(longest)
}

// editsWithin is the edit distance between a and b when it is at most k.
// Only the band of k cells either side of the diagonal is computed, so a
// long post costs k times its length, not its length squared.
func editsWithin(a, b []rune, k int) (int, bool) {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(b)-len(a) > k {
		return 0, false
	}
	inf := k + 1
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		cur[lo-1] = inf
		if lo == 1 {
			cur[0] = min(i, inf)
		}
		best := cur[lo-1]
		for j := lo; j <= hi; j++ {
			v := prev[j-1]
			if a[i-1] != b[j-1] {
				v++
			}
			v = min(v, prev[j]+1, cur[j-1]+1, inf)
			cur[j] = v
			best = min(best, v)
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		if best > k {
			return 0, false
		}
		prev, cur = cur, prev
	}
	if d := prev[len(b)]; d <= k {
		return d, true
	}
	return 0, false
}

// texts lists what call publishes, each with the field that holds it.
func texts(call Call) (out [][2]string) {
	if !posting[call.Effect] {
		return nil
	}
	if call.Text != "" {
		out = append(out, [2]string{"text", call.Text})
	}
	for i, t := range call.Thread {
		out = append(out, [2]string{fmt.Sprintf("tweets[%d]", i), t})
	}
	return out
}

// crossPosted refuses a post whose text another of the home's accounts
// posted, the same or nearly, within the window. The account's own
// earlier posts are not its business: the gateway's duplicate checks and
// X's own answer them.
func (c Checker) crossPosted(ctx context.Context, call Call) error {
	a := c.Automation
	if a.CrossAccountWindow == nil || a.PostedElsewhere == nil {
		return nil
	}
	mine := texts(call)
	if len(mine) == 0 {
		return nil
	}
	window := a.CrossAccountWindow()
	if window <= 0 {
		return nil
	}
	others, err := a.PostedElsewhere(ctx, window)
	if err != nil {
		return apperr.Wrap(apperr.DBError, err, "reading what the home's other accounts posted")
	}
	for _, m := range mine {
		// The call's text is normalised once, not once per other post.
		nm := Normal(m[1])
		for _, p := range others {
			np := p.Normal
			if np == nil {
				np = Normal(p.Text)
			}
			same, alike := nm.nearSame(np)
			if !same {
				continue
			}
			how := "the same text"
			if alike < 1 {
				how = fmt.Sprintf("nearly the same text (%.0f%% alike)", alike*100)
			}
			return apperr.New(apperr.CrossAccountDup,
				"%s: account %s posted %s at %s (audit row %s, %s); X's automation rules forbid the same or substantially similar posts across the accounts you operate, and x_api.cross_account_duplicate_hours is %s; nothing was sent to X",
				m[0], p.Account, how, p.At, p.CorrelationID, p.Status, hours(window)).
				With("rule", RuleCrossAccountDuplicate).With("other_account", p.Account).With("duplicate_of", p.CorrelationID).
				WithHints(apperr.Hint{Do: "write this account a text of its own"},
					apperr.Hint{Do: "share the other account's post as it is: repost it from this account (x_retweet) once it is on X"})
		}
	}
	return nil
}

// hours says a window in whole hours.
func hours(d time.Duration) string {
	return fmt.Sprintf("%d", int(d/time.Hour))
}

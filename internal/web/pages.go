package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/describe"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/optouts"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
	"github.com/tuitbot/tuitbot/internal/xrules"
)

type analyticsData struct {
	Missing   string
	Followers chart
	XSpend    chart
	LLMSpend  chart
	Posts     chart
	Topics    chart
	Latency   chart
	Stats     []kv
	Limits    []limitRow
	LimitsErr string
	// ByChannel is how long decided items waited, per review channel.
	ByChannel  []latencyRow
	LatencyErr string
}

// latencyRow is one review channel's approval wait.
type latencyRow struct {
	Channel  string
	Count    int
	P50, P90 string
}

type kv struct{ K, V string }

// latencyDays is the window the approval latency covers.
const latencyDays = 30

// limitRow is one policy limit against its live counter.
type limitRow struct {
	Key, Applies, Window, Source, Reset string
	Used, Max                           string
	Percent                             int
	Over                                bool
}

func (s *Server) analytics(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	var d analyticsData
	d.Limits, d.LimitsErr = s.limitRows(ctx, a)
	if lat, err := a.Gateway.ApprovalLatency(ctx, s.d.Now().Add(-latencyDays*24*time.Hour)); err != nil {
		d.LatencyErr = err.Error()
	} else {
		for _, l := range lat {
			d.ByChannel = append(d.ByChannel, latencyRow{Channel: l.Channel, Count: l.Count,
				P50: gateway.FormatLatency(l.P50), P90: gateway.FormatLatency(l.P90)})
		}
	}
	wf := a.Workflow
	if wf == nil {
		d.Missing = "analytics need the workflow service (the database), which is not available"
		s.render(w, r, sess, "analytics", "Analytics", d)
		return
	}
	const days = 14
	now := s.d.Now()
	snaps, err := wf.FollowerTrend(ctx, 200, now.Add(-days*24*time.Hour))
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	var fl []string
	var fv []float64
	for _, sn := range snaps {
		fl = append(fl, dayLabel(sn.TakenAt))
		fv = append(fv, float64(sn.Followers))
	}
	d.Followers = followerChart(fl, fv)
	xu, err := wf.XUsage(ctx, days)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	byDay := map[string]float64{}
	for _, row := range xu.Rows {
		byDay[row.Day] += row.CostUSD
	}
	dl, dv := perDay(now, days, byDay)
	// In the sandbox no call reaches X: its spend is what X would have
	// charged, and says so.
	spend := "X spend"
	if a.Sandbox {
		spend = "Simulated X spend"
	}
	d.XSpend = spendChart("x-spend", spend+" per day", spend, dl, dv, a.DailyBudgetUSD)
	lu, err := wf.LLMUsage(ctx, days)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	byDay = map[string]float64{}
	for _, row := range lu.Rows {
		byDay[row.Day] += row.CostUSD
	}
	dl, dv = perDay(now, days, byDay)
	d.LLMSpend = spendChart("llm-spend", "LLM spend per day", "LLM spend", dl, dv, 0)
	st, err := wf.Stats(ctx, 7)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	d.Stats = []kv{{"Replies (7 days)", fmt.Sprint(st.Replies)}, {"Posts (7 days)", fmt.Sprint(st.Tweets)},
		{"Threads (7 days)", fmt.Sprint(st.Threads)}, {"Pending approvals", fmt.Sprint(st.PendingApprovals)},
		{spend + " (7 days)", numberFmt(st.XSpendUSD, "$")}, {"LLM spend (7 days)", numberFmt(st.LLMSpendUSD, "$")}}
	d.Posts = actionsChart(st.MutationsByTool)
	waits, err := a.Gateway.DecisionTimes(ctx, now.Add(-7*24*time.Hour), 10000)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	d.Latency = latencyChart(waits)
	topics, err := wf.MeasuredTopics(ctx)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	// The best ten: the measured performance of the posts on each topic.
	var tl []string
	var tp []float64
	for i, t := range topics {
		if i == 10 {
			break
		}
		tl = append(tl, fmt.Sprintf("%s (%d posts)", t.Topic, t.Posts))
		tp = append(tp, t.AvgPerformance)
	}
	summary := "No topic has measured posts yet: scores come in once posts are a day old."
	if len(topics) > 0 {
		summary = fmt.Sprintf("Best topic: %s, an average score of %s over %d posts.", topics[0].Topic, trimFloat(topics[0].AvgPerformance), topics[0].Posts)
	}
	d.Topics = rowChart("topics", "Topics by average performance score", summary, tl, tp, "", false)
	s.render(w, r, sess, "analytics", "Analytics", d)
}

// limitRows lists the account's policy limits against their counters.
func (s *Server) limitRows(ctx context.Context, a *Account) ([]limitRow, string) {
	if len(a.Policy.Limits) == 0 {
		return nil, ""
	}
	usage := map[string]policy.Usage{}
	if a.Policy.Usage != nil {
		u, err := a.Policy.Usage(ctx)
		if err != nil {
			return nil, "the limit counters could not be read: " + apperr.As(err).Message
		}
		usage = u
	}
	now := s.d.Now()
	var out []limitRow
	for _, l := range a.Policy.Limits {
		u, ok := usage[l.Key]
		used := 0.0
		if ok {
			// A window that has elapsed counts as empty.
			u = l.UsageAt(u.Used, u.WindowStart, now)
			used = u.Used
		}
		row := limitRow{Key: l.Key, Source: l.Source, Window: human(time.Duration(l.PeriodSeconds) * time.Second),
			Used: trimFloat(used), Max: trimFloat(l.Max)}
		switch {
		case l.Dimension == "global" || l.MatchValue == "" || l.MatchValue == "*":
			row.Applies = "every mutation"
		default:
			row.Applies = l.Dimension + " " + l.MatchValue
		}
		if l.Dimension == "budget" {
			row.Used += " USD"
			row.Max += " USD"
		}
		if ok && !u.ResetAt.IsZero() && used > 0 {
			row.Reset = until(now, store.FormatTime(u.ResetAt))
		}
		if l.Max > 0 {
			row.Percent = min(int(used/l.Max*100+0.5), 100)
		}
		row.Over = l.Max > 0 && used >= l.Max
		out = append(out, row)
	}
	return out, ""
}

// dayLabel writes a stored time as a short date ("26 Nov").
func dayLabel(stamp string) string {
	t, err := store.ParseTime(stamp)
	if err != nil {
		return stamp
	}
	return t.Local().Format("2 Jan")
}

// followerChart is the follower trend, summed up as "Followers: 1,218,
// +34 since 12 Nov".
func followerChart(labels []string, values []float64) chart {
	const title = "Followers"
	switch len(values) {
	case 0:
		return trendChart("followers", title, "No follower count yet: the autopilot takes one each day.", labels, values, "", "", true)
	case 1:
		n := describe.Count(int64(values[0]))
		return trendChart("followers", title, "Followers: "+n+" on "+labels[0]+".", labels, values, "",
			"One count so far ("+n+" on "+labels[0]+"), so there is no trend to draw yet. The autopilot counts once a day.", true)
	}
	last, first := values[len(values)-1], values[0]
	sign := "+"
	if last < first {
		sign = "-"
	}
	summary := fmt.Sprintf("Followers: %s, %s%s since %s.", describe.Count(int64(last)), sign, describe.Count(int64(math.Abs(last-first))), labels[0])
	return trendChart("followers", title, summary, labels, values, "", "", true)
}

// spendChart is a spend per day, summed up over the days and today.
func spendChart(id, title, what string, labels []string, values []float64, budget float64) chart {
	total := 0.0
	for _, v := range values {
		total += v
	}
	today := 0.0
	if len(values) > 0 {
		today = values[len(values)-1]
	}
	summary := fmt.Sprintf("%s: %s over %d days, %s today", what, numberFmt(total, "$"), len(values), numberFmt(today, "$"))
	if budget > 0 {
		summary += " of a " + numberFmt(budget, "$") + " daily budget"
	}
	return columnChart(id, title+" (USD)", summary+".", labels, values, budget, "$", "Daily budget")
}

// actionsChart is what ran in the last 7 days, one bar per kind of action
// named in words.
func actionsChart(byTool map[string]int) chart {
	tools := make([]string, 0, len(byTool))
	total := 0
	for t, n := range byTool {
		tools = append(tools, t)
		total += n
	}
	// Most first; ties in name order.
	sort.Slice(tools, func(i, j int) bool {
		if byTool[tools[i]] != byTool[tools[j]] {
			return byTool[tools[i]] > byTool[tools[j]]
		}
		return tools[i] < tools[j]
	})
	var labels []string
	var values []float64
	for _, t := range tools {
		labels = append(labels, describe.Of(t, "", nil).Plural)
		values = append(values, float64(byTool[t]))
	}
	summary := "Nothing ran in the last 7 days."
	if total > 0 {
		summary = fmt.Sprintf("%d actions ran on X in the last 7 days; most were %s (%d).", total, strings.ToLower(labels[0]), byTool[tools[0]])
	}
	return rowChart("actions", "Actions that ran, by kind (7 days)", summary, labels, values, "", true)
}

// latencyBands sort waits before a decision into bands a person reads at
// a glance.
var latencyBands = []struct {
	label string
	upTo  time.Duration
}{
	{"under 5 min", 5 * time.Minute}, {"5 to 30 min", 30 * time.Minute}, {"30 min to 2 h", 2 * time.Hour},
	{"2 to 12 h", 12 * time.Hour}, {"over 12 h", 1<<63 - 1},
}

// latencyChart is how long items waited for a decision (queued to
// approved or rejected) over the last 7 days, summed up by the median.
func latencyChart(waits []time.Duration) chart {
	const id, title = "latency", "Time from queued to decided (7 days)"
	if len(waits) == 0 {
		return rowChart(id, title, "No item was approved or rejected in the last 7 days.", nil, nil, "", true)
	}
	counts := make([]float64, len(latencyBands))
	for _, w := range waits {
		for i, b := range latencyBands {
			if w < b.upTo {
				counts[i]++
				break
			}
		}
	}
	labels := make([]string, len(latencyBands))
	for i, b := range latencyBands {
		labels[i] = b.label
	}
	sorted := slices.Clone(waits)
	slices.Sort(sorted)
	summary := fmt.Sprintf("Half of the %d decisions came within %s of the request; the slowest took %s.",
		len(waits), describe.Span(sorted[(len(sorted)-1)/2]), describe.Span(sorted[len(sorted)-1]))
	return rowChart(id, title, summary, labels, counts, "", true)
}

// perDay lays values out over the last days, oldest first, zero where a
// day has none.
func perDay(now time.Time, days int, byDay map[string]float64) ([]string, []float64) {
	var l []string
	var v []float64
	for i := days - 1; i >= 0; i-- {
		t := now.UTC().Add(-time.Duration(i) * 24 * time.Hour)
		l = append(l, t.Format("2 Jan"))
		v = append(v, byDay[t.Format("2006-01-02")])
	}
	return l, v
}

// capRow is one of today's counts beside its cap.
type capRow struct {
	What       string
	Count, Cap int
	Percent    int
	Over       bool
}

func capRows(st *autopilot.Status) []capRow {
	rows := []capRow{
		{What: "Replies today", Count: st.Today.Replies, Cap: st.Caps.RepliesPerDay},
		{What: "Posts today", Count: st.Today.Tweets, Cap: st.Caps.TweetsPerDay},
		{What: "Threads in the last 7 days", Count: st.Today.ThreadsWeek, Cap: st.Caps.ThreadsPerWeek},
		{What: "Replies to target accounts today", Count: st.Today.TargetReplies, Cap: st.Caps.TargetRepliesPerDay},
	}
	for i := range rows {
		if rows[i].Cap > 0 {
			rows[i].Percent = min(rows[i].Count*100/rows[i].Cap, 100)
			rows[i].Over = rows[i].Count >= rows[i].Cap
		}
	}
	return rows
}

func (s *Server) autopilotPage(w http.ResponseWriter, r *http.Request, sess *session) {
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	var d struct {
		Missing  string
		S        *autopilot.Status
		Caps     []capRow
		Mentions string
		CanHold  bool
		Acct     string
		// Spend names today's X spend: simulated in the sandbox.
		Spend string
	}
	d.Spend = "X spend today"
	if at := s.sandboxAt(a); at != "" {
		d.Spend = "Simulated X spend today (" + at + ")"
	}
	if a != s.accts[0] {
		d.Acct = a.Name
	}
	d.CanHold = a.Hold != nil
	if a.Autopilot == nil {
		d.Missing = "the autopilot is not available here"
	} else {
		st, err := a.Autopilot(r.Context())
		if err != nil {
			d.Missing = err.Error()
		}
		d.S = st
		if st != nil {
			d.Caps = capRows(st)
			d.Mentions = fmt.Sprintf("%d of %d replies today name the product (at most %d%%)", st.Today.ProductMentions,
				st.Today.Replies, int(st.Caps.ProductMentionRatio*100+0.5))
		}
	}
	s.render(w, r, sess, "autopilot", "Autopilot", d)
}

// hold pauses or resumes one loop of the account.
func (s *Server) hold(w http.ResponseWriter, r *http.Request, sess *session) {
	a, err := s.acct(r)
	if err != nil {
		s.flash(sess, true, "%s", apperr.As(err).Message)
		s.back(w, r, "/autopilot")
		return
	}
	loop, held := r.PathValue("loop"), r.PostFormValue("held") == "1"
	switch {
	case a.Hold == nil:
		s.flash(sess, true, "the autopilot is not available here")
	default:
		if err := a.Hold(r.Context(), loop, held); err != nil {
			s.flash(sess, true, "%s: %s", loop, apperr.As(err).Message)
		} else if held {
			s.flash(sess, false, "%s paused; it stays paused until you resume it", loop)
		} else {
			s.flash(sess, false, "%s resumed", loop)
		}
	}
	s.back(w, r, s.at(a, "/autopilot"))
}

// ruleRow is one policy rule as the settings page lists it.
type ruleRow struct {
	N                                  int
	ID, Label, Source, Action, Reason  string
	Does                               string
	Priority                           int
	Tools, Categories, Modes, Schedule string
}

func ruleRows(rules []policy.Rule) []ruleRow {
	out := make([]ruleRow, 0, len(rules))
	for i, r := range rules {
		row := ruleRow{N: i + 1, ID: r.ID, Label: r.Label, Source: r.Source, Action: r.Action.Type, Reason: r.Action.Reason,
			Priority: r.Priority, Tools: orAny(r.Conditions.Tools), Modes: orAny(r.Conditions.Modes)}
		cats := make([]string, 0, len(r.Conditions.Categories))
		for _, c := range r.Conditions.Categories {
			cats = append(cats, string(c))
		}
		row.Categories = orAny(cats)
		row.Does = ruleDoes[r.Action.Type]
		if row.Does == "" {
			row.Does = r.Action.Type
		}
		if sc := r.Conditions.Schedule; sc != nil {
			row.Schedule = fmt.Sprintf("%02d:00–%02d:00", sc.StartHour, sc.EndHour)
			if sc.Timezone != "" {
				row.Schedule += " " + sc.Timezone
			}
			if len(sc.Days) > 0 {
				row.Schedule += " on " + strings.Join(sc.Days, ", ")
			}
		} else {
			row.Schedule = "always"
		}
		out = append(out, row)
	}
	return out
}

// ruleDoes says what each rule action does to a call.
var ruleDoes = map[string]string{
	policy.ActionAllow: "Lets it run", policy.ActionDeny: "Refuses it", policy.ActionRequireApproval: "Asks for your approval",
	policy.ActionDryRun: "Answers with a dry run",
}

func orAny(v []string) string {
	if len(v) == 0 {
		return "any"
	}
	return strings.Join(v, ", ")
}

func (s *Server) settings(w http.ResponseWriter, r *http.Request, sess *session) {
	a := s.acctOrFail(w, r, sess)
	if a == nil {
		return
	}
	groups, err := settingsGroups(s.d.Settings)
	raw := ""
	if err != nil {
		raw = s.d.Settings
	}
	var outs []optouts.OptOut
	if a.OptOuts != nil {
		if outs, err = a.OptOuts(r.Context()); err != nil {
			s.fail(w, r, sess, http.StatusInternalServerError, err)
			return
		}
	}
	s.render(w, r, sess, "settings", "Settings", struct {
		Groups   []settingsGroup
		Raw      string
		Warnings []string
		Rules    []ruleRow
		Access   xrules.Level
		OptOuts  []optouts.OptOut
	}{groups, raw, s.d.Warnings, ruleRows(a.Policy.Rules), a.Access, outs})
}

package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/apperr"
	"github.com/tuitbot/tuitbot/internal/autopilot"
	"github.com/tuitbot/tuitbot/internal/gateway"
	"github.com/tuitbot/tuitbot/internal/policy"
	"github.com/tuitbot/tuitbot/internal/store"
)

// chart is a small SVG chart drawn on the server: bars, or a line, with an
// optional cap drawn across. Coordinates are precomputed; the template
// only places them, so nothing from the data reaches the SVG unescaped.
type chart struct {
	Title  string
	Desc   string
	W, H   int
	Bars   []bar
	Points string // polyline points for a line chart
	Dots   []bar  // line chart markers (X, Y, Label)
	CapY   float64
	HasCap bool
	CapLbl string
	Empty  bool
}

type bar struct {
	X, Y, W, H float64
	Label      string
}

const chartW, chartH, pad = 600, 160, 20

// barChart draws one bar per (label, value); limit, when positive, is
// drawn as a line.
func barChart(title string, labels []string, values []float64, limit float64, unit string) chart {
	c := chart{Title: title, W: chartW, H: chartH, Empty: len(values) == 0}
	top := limit
	for _, v := range values {
		top = max(top, v)
	}
	if top <= 0 {
		top = 1
	}
	n := max(len(values), 1)
	slot := float64(chartW-2*pad) / float64(n)
	var desc []string
	for i, v := range values {
		h := v / top * float64(chartH-2*pad)
		c.Bars = append(c.Bars, bar{X: pad + float64(i)*slot + slot*0.1, Y: float64(chartH-pad) - h, W: slot * 0.8, H: h,
			Label: fmt.Sprintf("%s: %s%s", labels[i], trimFloat(v), unit)})
		desc = append(desc, fmt.Sprintf("%s %s%s", labels[i], trimFloat(v), unit))
	}
	if limit > 0 {
		c.HasCap, c.CapY = true, float64(chartH-pad)-limit/top*float64(chartH-2*pad)
		c.CapLbl = "cap " + trimFloat(limit) + unit
	}
	c.Desc = strings.Join(desc, ", ")
	return c
}

// lineChart draws values in order as a line.
func lineChart(title string, labels []string, values []float64) chart {
	c := chart{Title: title, W: chartW, H: chartH, Empty: len(values) == 0}
	if len(values) == 0 {
		return c
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo {
		hi, lo = hi+1, lo-1
	}
	step := float64(chartW-2*pad) / float64(max(len(values)-1, 1))
	var pts, desc []string
	for i, v := range values {
		x := pad + float64(i)*step
		y := float64(chartH-pad) - (v-lo)/(hi-lo)*float64(chartH-2*pad)
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		c.Dots = append(c.Dots, bar{X: x, Y: y, Label: labels[i] + ": " + trimFloat(v)})
		desc = append(desc, labels[i]+" "+trimFloat(v))
	}
	c.Points = strings.Join(pts, " ")
	c.Desc = strings.Join(desc, ", ")
	return c
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

type analyticsData struct {
	Missing   string
	Followers chart
	XSpend    chart
	LLMSpend  chart
	Posts     chart
	Topics    chart
	Stats     []kv
	Limits    []limitRow
	LimitsErr string
	// Latency is how long decided items waited, per review channel.
	Latency    []latencyRow
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
			d.Latency = append(d.Latency, latencyRow{Channel: l.Channel, Count: l.Count,
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
		fl = append(fl, sn.TakenAt)
		fv = append(fv, float64(sn.Followers))
	}
	d.Followers = lineChart("Followers", fl, fv)
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
	d.XSpend = barChart("X spend per day (USD)", dl, dv, a.DailyBudgetUSD, " USD")
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
	d.LLMSpend = barChart("LLM spend per day (USD)", dl, dv, 0, " USD")
	st, err := wf.Stats(ctx, 7)
	if err != nil {
		s.fail(w, r, sess, statusOf(err), err)
		return
	}
	d.Stats = []kv{{"Replies (7 days)", fmt.Sprint(st.Replies)}, {"Posts (7 days)", fmt.Sprint(st.Tweets)},
		{"Threads (7 days)", fmt.Sprint(st.Threads)}, {"Pending approvals", fmt.Sprint(st.PendingApprovals)},
		{"X spend (7 days)", trimFloat(st.XSpendUSD) + " USD"}, {"LLM spend (7 days)", trimFloat(st.LLMSpendUSD) + " USD"}}
	tools := make([]string, 0, len(st.MutationsByTool))
	for t := range st.MutationsByTool {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	var tv []float64
	for _, t := range tools {
		tv = append(tv, float64(st.MutationsByTool[t]))
	}
	d.Posts = barChart("Executed mutations by tool (7 days)", tools, tv, 0, "")
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
	d.Topics = barChart("Top topics by average performance score", tl, tp, 0, "")
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

// perDay lays values out over the last days, oldest first, zero where a
// day has none.
func perDay(now time.Time, days int, byDay map[string]float64) ([]string, []float64) {
	var l []string
	var v []float64
	for i := days - 1; i >= 0; i-- {
		day := now.UTC().Add(-time.Duration(i) * 24 * time.Hour).Format("2006-01-02")
		l = append(l, day)
		v = append(v, byDay[day])
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
	s.render(w, r, sess, "settings", "Settings", struct {
		Settings string
		Warnings []string
		Rules    []ruleRow
	}{s.d.Settings, s.d.Warnings, ruleRows(a.Policy.Rules)})
}

package web

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/tuitbot/tuitbot/internal/autopilot"
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
	Stats     []kv
}

type kv struct{ K, V string }

func (s *Server) analytics(w http.ResponseWriter, r *http.Request, sess *session) {
	ctx := r.Context()
	var d analyticsData
	wf := s.d.Workflow
	if wf == nil {
		d.Missing = "analytics need the workflow service (the database), which is not available"
		s.render(w, sess, "analytics", "Analytics", d)
		return
	}
	const days = 14
	now := s.d.Now()
	snaps, err := wf.FollowerTrend(ctx, 200, now.Add(-days*24*time.Hour))
	if err != nil {
		s.fail(w, sess, statusOf(err), err)
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
		s.fail(w, sess, statusOf(err), err)
		return
	}
	byDay := map[string]float64{}
	for _, row := range xu.Rows {
		byDay[row.Day] += row.CostUSD
	}
	dl, dv := perDay(now, days, byDay)
	d.XSpend = barChart("X spend per day (USD)", dl, dv, s.d.DailyBudgetUSD, " USD")
	lu, err := wf.LLMUsage(ctx, days)
	if err != nil {
		s.fail(w, sess, statusOf(err), err)
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
		s.fail(w, sess, statusOf(err), err)
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
	s.render(w, sess, "analytics", "Analytics", d)
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

func (s *Server) autopilotPage(w http.ResponseWriter, r *http.Request, sess *session) {
	var d struct {
		Missing string
		S       *autopilot.Status
	}
	if s.d.Autopilot == nil {
		d.Missing = "the autopilot is not available here"
	} else {
		st, err := s.d.Autopilot(r.Context())
		if err != nil {
			d.Missing = err.Error()
		}
		d.S = st
	}
	s.render(w, sess, "autopilot", "Autopilot", d)
}

func (s *Server) settings(w http.ResponseWriter, _ *http.Request, sess *session) {
	s.render(w, sess, "settings", "Settings", struct {
		Settings string
		Warnings []string
	}{s.d.Settings, s.d.Warnings})
}

package web

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestNiceTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		whole  bool
		want   []float64
	}{
		{0, 0.25, false, []float64{0, 0.1, 0.2, 0.3}},
		{0, 2, true, []float64{0, 1, 2}},
		{0, 37, true, []float64{0, 10, 20, 30, 40}},
		{1180, 1218, true, []float64{1180, 1190, 1200, 1210, 1220}},
		{5, 5, true, []float64{5, 6}},
	} {
		if got := niceTicks(tc.lo, tc.hi, 4, tc.whole); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("niceTicks(%g, %g, whole %v) = %v, want %v", tc.lo, tc.hi, tc.whole, got, tc.want)
		}
	}
}

// TestChartsSayWhatTheyShow: every drawn chart has values on its axis and
// on its bars, a summary, and a legend when it draws two series; a trend
// of one point says so instead of drawing a dot.
func TestChartsSayWhatTheyShow(t *testing.T) {
	spend := spendChart("x", "X spend per day", "X spend", []string{"1 Mar", "2 Mar", "3 Mar"}, []float64{0, 0.5, 1.25}, 2)
	if spend.Note != "" || len(spend.Grid) < 3 || spend.Grid[len(spend.Grid)-1].Label != "$2" {
		t.Fatalf("spend axis: %+v", spend.Grid)
	}
	if spend.Bars[2].Value != "$1.25" || spend.Bars[0].Value != "" || spend.Bars[2].Label != "3 Mar" {
		t.Fatalf("spend bars: %+v", spend.Bars)
	}
	if !spend.HasCap || len(spend.Legend) != 2 || spend.Legend[1].Label != "Daily budget $2" {
		t.Fatalf("a budget line needs its legend: %+v", spend.Legend)
	}
	if want := "X spend: $1.75 over 3 days, $1.25 today of a $2 daily budget."; spend.Summary != want {
		t.Fatalf("summary %q, want %q", spend.Summary, want)
	}
	acts := actionsChart(map[string]int{"x_post_tweet": 3, "x_like_tweet": 5})
	if acts.Bars[0].Label != "Likes" || acts.Bars[0].Value != "5" || acts.Bars[1].Label != "Posts" {
		t.Fatalf("actions are named in words, most first: %+v", acts.Bars)
	}
	if !strings.Contains(acts.Summary, "8 actions") || !strings.Contains(acts.Summary, "likes (5)") {
		t.Fatalf("actions summary: %q", acts.Summary)
	}
	for _, g := range acts.Grid {
		if strings.Contains(g.Label, ".") {
			t.Fatalf("a count axis shows %q", g.Label)
		}
	}
	one := followerChart([]string{"1 Mar"}, []float64{1218})
	if one.Note == "" || len(one.Dots) != 0 || !strings.Contains(one.Note, "One count so far (1,218 on 1 Mar)") {
		t.Fatalf("one point: note %q, %d dots", one.Note, len(one.Dots))
	}
	trend := followerChart([]string{"1 Mar", "2 Mar", "3 Mar"}, []float64{1184, 1200, 1218})
	if trend.Summary != "Followers: 1,218, +34 since 1 Mar." || len(trend.Dots) != 3 || trend.Note != "" || len(trend.Grid) == 0 {
		t.Fatalf("trend: %q, %d dots, note %q", trend.Summary, len(trend.Dots), trend.Note)
	}
	if none := spendChart("l", "LLM", "LLM spend", []string{"1 Mar"}, []float64{0}, 0); none.Grid[len(none.Grid)-1].Label != "$1" {
		t.Fatalf("nothing spent is drawn against a dollar, not %q", none.Grid[len(none.Grid)-1].Label)
	}
}

// TestLatencyChart: the waits before each decision, in bands, summed up by
// the median and the slowest.
func TestLatencyChart(t *testing.T) {
	if c := latencyChart(nil); c.Note == "" || !strings.Contains(c.Summary, "No item was approved or rejected") {
		t.Fatalf("no decisions: %+v", c)
	}
	c := latencyChart([]time.Duration{40 * time.Second, 3 * time.Minute, 20 * time.Minute, 3 * time.Hour, 30 * time.Hour})
	var got []string
	for _, b := range c.Bars {
		got = append(got, b.Label+"="+b.Value)
	}
	if want := "under 5 min=2,5 to 30 min=1,30 min to 2 h=0,2 to 12 h=1,over 12 h=1"; strings.Join(got, ",") != want {
		t.Fatalf("bands %s, want %s", strings.Join(got, ","), want)
	}
	if want := "Half of the 5 decisions came within 20 min of the request; the slowest took 30 h."; c.Summary != want {
		t.Fatalf("summary %q, want %q", c.Summary, want)
	}
}

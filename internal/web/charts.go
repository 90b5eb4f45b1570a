package web

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tuitbot/tuitbot/internal/describe"
)

// chart is a small SVG chart drawn on the server: vertical bars (a value
// per day), horizontal bars (a value per named thing) or a line (a trend),
// with axes and their values, each bar's value written on it, a legend
// when there is more than one series, and a sentence that sums it up.
// Coordinates are computed here; the template only places them, and every
// label reaches the SVG through html/template's escaping.
type chart struct {
	ID, Title string
	// Summary sums the chart up in a sentence, above it; Desc lists every
	// value, for screen readers.
	Summary, Desc string
	// Note replaces the drawing when there is nothing to draw from (no
	// data, or a single point that makes no trend).
	Note string
	W, H int
	// The plot area: X0..XEnd across, YTop..Y0 down.
	X0, Y0, XEnd, YTop px
	Grid               []tick
	Bars               []bar
	Points             string
	Dots               []dot
	HasCap             bool
	CapY               px
	AxisLabel          string
	Legend             []legendKey
}

// px is an SVG coordinate, written with one decimal.
type px float64

func (p px) String() string { return strconv.FormatFloat(float64(p), 'f', 1, 64) }

// tick is a grid line with its value written at the axis.
type tick struct {
	X1, Y1, X2, Y2, TX, TY px
	Anchor, Label          string
}

type bar struct {
	X, Y, W, H px
	Value      string
	VX, VY     px
	Anchor     string
	Label      string
	LX, LY     px
	LAnchor    string
}

type dot struct {
	X, Y   px
	Label  string
	LX, LY px
}

type legendKey struct{ Class, Label string }

const (
	chartW     = 480
	chartH     = 220
	padLeft    = 48 // room for the value axis
	padRight   = 12
	padTop     = 22
	padBottom  = 34 // room for the labels under the axis
	labelRoom  = 150
	rowHeight  = 26
	maxXLabels = 5
)

// niceTicks returns values from at or below lo to at or above hi in
// about n round steps (1, 2, 2.5 or 5 times a power of ten); whole steps
// only for counts.
func niceTicks(lo, hi float64, n int, whole bool) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	if whole {
		raw = max(raw, 1)
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw && (!whole || m*mag == math.Trunc(m*mag)) {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for v := start; v < hi+step*0.999; v += step {
		// Rounded so that 3 steps of 0.1 read 0.3.
		out = append(out, math.Round(math.Round(v/step)*step*1e9)/1e9)
	}
	return out
}

// numberFmt writes a value for a tick or a bar: thousands separated,
// at most two decimals (four below a cent), with unit "$" before it.
func numberFmt(v float64, unit string) string {
	s := trimFloat(v)
	switch {
	case math.Abs(v) >= 1000:
		s = describe.Count(int64(math.Round(v)))
	case v != 0 && math.Abs(v) < 0.01:
		s = strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
	}
	if unit == "$" {
		return "$" + s
	}
	return s
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// columnChart draws one vertical bar per label (days, oldest first),
// writing each non-zero value on its bar. limit, when positive, is drawn
// across as a second series with its own legend entry.
func columnChart(id, title, summary string, labels []string, values []float64, limit float64, unit, limitName string) chart {
	c := chart{ID: id, Title: title, Summary: summary, W: chartW, H: chartH,
		X0: padLeft, Y0: chartH - padBottom, XEnd: chartW - padRight, YTop: padTop}
	if len(values) == 0 {
		c.Note = "No data yet."
		return c
	}
	hi := limit
	for _, v := range values {
		hi = max(hi, v)
	}
	if hi == 0 {
		// Nothing spent: a scale of a dollar, not of nothing.
		hi = 1
	}
	ticks := niceTicks(0, hi, 4, unit != "$")
	top := ticks[len(ticks)-1]
	y := func(v float64) px { return c.Y0 - px(v/top)*(c.Y0-c.YTop) }
	for _, t := range ticks {
		c.Grid = append(c.Grid, tick{X1: c.X0, X2: c.XEnd, Y1: y(t), Y2: y(t), TX: c.X0 - 6, TY: y(t) + 4, Anchor: "end", Label: numberFmt(t, unit)})
	}
	slot := (c.XEnd - c.X0) / px(len(values))
	every := (len(values) + maxXLabels - 1) / maxXLabels
	var desc []string
	for i, v := range values {
		b := bar{X: c.X0 + px(i)*slot + slot*0.15, W: slot * 0.7, Y: y(v), H: c.Y0 - y(v), Anchor: "middle", LAnchor: "middle"}
		if v != 0 {
			b.Value = numberFmt(v, unit)
		}
		b.VX, b.VY = b.X+b.W/2, b.Y-4
		// Every label when they fit, else every few, counted back from
		// the last (today).
		if (len(values)-1-i)%every == 0 {
			b.Label = labels[i]
		}
		b.LX, b.LY = b.X+b.W/2, c.Y0+16
		c.Bars = append(c.Bars, b)
		desc = append(desc, labels[i]+" "+numberFmt(v, unit))
	}
	if limit > 0 {
		c.HasCap, c.CapY = true, y(limit)
		c.Legend = []legendKey{{"key-bar", title}, {"key-cap", limitName + " " + numberFmt(limit, unit)}}
	}
	c.Desc = strings.Join(desc, ", ")
	return c
}

// rowChart draws one horizontal bar per named thing, its name at the left
// and its value at its end, with the value axis below.
func rowChart(id, title, summary string, labels []string, values []float64, unit string, whole bool) chart {
	c := chart{ID: id, Title: title, Summary: summary, W: chartW}
	if len(values) == 0 {
		c.Note = "No data yet."
		return c
	}
	c.H = padTop + rowHeight*len(values) + padBottom
	c.X0, c.XEnd, c.YTop, c.Y0 = labelRoom, chartW-padRight-40, padTop, px(c.H-padBottom)
	hi := 0.0
	for _, v := range values {
		hi = max(hi, v)
	}
	ticks := niceTicks(0, max(hi, 1), 4, whole)
	top := ticks[len(ticks)-1]
	x := func(v float64) px { return c.X0 + px(v/top)*(c.XEnd-c.X0) }
	for _, t := range ticks {
		c.Grid = append(c.Grid, tick{X1: x(t), X2: x(t), Y1: c.YTop, Y2: c.Y0, TX: x(t), TY: c.Y0 + 16, Anchor: "middle", Label: numberFmt(t, unit)})
	}
	var desc []string
	for i, v := range values {
		rowY := c.YTop + px(i*rowHeight)
		b := bar{X: c.X0, Y: rowY + 4, W: x(v) - c.X0, H: rowHeight - 8, Value: numberFmt(v, unit), Anchor: "start",
			Label: shorten(labels[i], 24), LAnchor: "end"}
		b.VX, b.VY = x(v)+4, rowY+rowHeight/2+4
		b.LX, b.LY = c.X0-6, b.VY
		c.Bars = append(c.Bars, b)
		desc = append(desc, labels[i]+" "+numberFmt(v, unit))
	}
	c.Desc = strings.Join(desc, ", ")
	return c
}

// trendChart draws values in order as a line with its points, the value
// axis at the left and the first, middle and last labels below. With one
// point there is no trend to draw: the chart says so.
func trendChart(id, title, summary string, labels []string, values []float64, unit, one string, whole bool) chart {
	c := chart{ID: id, Title: title, Summary: summary, W: chartW, H: chartH,
		X0: padLeft + 8, Y0: chartH - padBottom, XEnd: chartW - padRight - 8, YTop: padTop}
	switch len(values) {
	case 0:
		c.Note = "No data yet."
		return c
	case 1:
		c.Note = one
		return c
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = min(lo, v), max(hi, v)
	}
	ticks := niceTicks(lo, hi, 4, whole)
	bottom, top := ticks[0], ticks[len(ticks)-1]
	y := func(v float64) px { return c.Y0 - px((v-bottom)/(top-bottom))*(c.Y0-c.YTop) }
	for _, t := range ticks {
		c.Grid = append(c.Grid, tick{X1: c.X0, X2: c.XEnd, Y1: y(t), Y2: y(t), TX: c.X0 - 6, TY: y(t) + 4, Anchor: "end", Label: numberFmt(t, unit)})
	}
	step := (c.XEnd - c.X0) / px(len(values)-1)
	mid := len(values) / 2
	var pts, desc []string
	for i, v := range values {
		d := dot{X: c.X0 + px(i)*step, Y: y(v)}
		if i == 0 || i == mid || i == len(values)-1 {
			d.Label, d.LX, d.LY = labels[i], d.X, c.Y0+16
		}
		pts = append(pts, d.X.String()+","+d.Y.String())
		c.Dots = append(c.Dots, d)
		desc = append(desc, labels[i]+" "+numberFmt(v, unit))
	}
	c.Points = strings.Join(pts, " ")
	c.Desc = strings.Join(desc, ", ")
	return c
}

// shorten cuts s to n runes with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

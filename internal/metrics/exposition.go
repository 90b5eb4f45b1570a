package metrics

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ContentType is the media type of the text exposition format.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// label is one name="value" pair of a series.
type label struct{ name, value string }

// sample is one line of a family: a value under labels, with an optional
// suffix (_bucket, _sum, _count) for histograms.
type sample struct {
	suffix string
	labels []label
	value  float64
}

// family is one metric as it is written: HELP, TYPE and its samples.
type family struct {
	name, help, kind string
	samples          []sample
}

func gauge(name, help string, v float64) family {
	return family{name: name, help: help, kind: "gauge", samples: []sample{{value: v}}}
}

// vec is a counter or histogram family keyed by its label values.
type vec struct {
	name, help string
	labels     []string
	buckets    []float64 // nil for a counter

	mu     sync.Mutex
	series map[string]*series
}

// series is one label set's state: a counter's value, or a histogram's
// per-bucket (not cumulative) counts, sum and count.
type series struct {
	values []string
	value  float64
	counts []uint64
	count  uint64
	v      *vec
}

func newCounter(name, help string, labels ...string) *vec {
	return &vec{name: name, help: help, labels: labels, series: map[string]*series{}}
}

func newHistogram(name, help string, buckets []float64, labels ...string) *vec {
	v := newCounter(name, help, labels...)
	v.buckets = buckets
	return v
}

// with returns the series of these label values, creating it at zero.
func (v *vec) with(values ...string) *series {
	if len(values) != len(v.labels) {
		panic("metrics: " + v.name + " takes " + strconv.Itoa(len(v.labels)) + " label values")
	}
	key := strings.Join(values, "\xff")
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.series[key]
	if s == nil {
		s = &series{values: slices.Clone(values), v: v}
		if v.buckets != nil {
			s.counts = make([]uint64, len(v.buckets))
		}
		v.series[key] = s
	}
	return s
}

func (s *series) add(d float64) {
	s.v.mu.Lock()
	s.value += d
	s.v.mu.Unlock()
}

func (s *series) observe(x float64) {
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	if i, _ := slices.BinarySearch(s.v.buckets, x); i < len(s.counts) {
		s.counts[i]++
	}
	s.count++
	s.value += x
}

// family snapshots the vec for writing.
func (v *vec) family() family {
	v.mu.Lock()
	defer v.mu.Unlock()
	f := family{name: v.name, help: v.help, kind: "counter"}
	if v.buckets != nil {
		f.kind = "histogram"
	}
	for _, s := range v.series {
		ls := make([]label, len(v.labels))
		for i, n := range v.labels {
			ls[i] = label{n, s.values[i]}
		}
		if v.buckets == nil {
			f.samples = append(f.samples, sample{labels: ls, value: s.value})
			continue
		}
		var cum uint64
		for i, b := range v.buckets {
			cum += s.counts[i]
			f.samples = append(f.samples, sample{suffix: "_bucket", labels: append(slices.Clone(ls), label{"le", formatFloat(b)}), value: float64(cum)})
		}
		f.samples = append(f.samples,
			sample{suffix: "_bucket", labels: append(slices.Clone(ls), label{"le", "+Inf"}), value: float64(s.count)},
			sample{suffix: "_sum", labels: ls, value: s.value},
			sample{suffix: "_count", labels: ls, value: float64(s.count)})
	}
	return f
}

// writeText writes the families sorted by name, each family's series in a
// stable order, labels sorted by name with a histogram's le last, as
// Prometheus' own client does.
func writeText(w io.Writer, fams []family) error {
	slices.SortFunc(fams, func(a, b family) int { return strings.Compare(a.name, b.name) })
	bw := bufio.NewWriter(w)
	for _, f := range fams {
		if f.help != "" {
			bw.WriteString("# HELP " + f.name + " " + escapeHelp(f.help) + "\n")
		}
		bw.WriteString("# TYPE " + f.name + " " + f.kind + "\n")
		lines := make([]string, 0, len(f.samples))
		for _, s := range f.samples {
			lines = append(lines, sampleLine(f.name, s))
		}
		if f.kind != "histogram" {
			slices.Sort(lines)
		} else {
			sortHistogram(f.samples, lines)
		}
		for _, l := range lines {
			bw.WriteString(l)
		}
	}
	return bw.Flush()
}

// sortHistogram orders a histogram's lines by series, keeping each
// series' buckets, sum and count together and in order.
func sortHistogram(samples []sample, lines []string) {
	key := func(s sample) string {
		var b strings.Builder
		for _, l := range s.labels {
			if l.name != "le" {
				b.WriteString(l.name + "\xff" + l.value + "\xff")
			}
		}
		return b.String()
	}
	idx := make([]int, len(samples))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(key(samples[a]), key(samples[b])) })
	sorted := make([]string, len(lines))
	for i, j := range idx {
		sorted[i] = lines[j]
	}
	copy(lines, sorted)
}

func sampleLine(name string, s sample) string {
	var b strings.Builder
	b.WriteString(name + s.suffix)
	ls := slices.Clone(s.labels)
	slices.SortStableFunc(ls, func(x, y label) int {
		switch {
		case x.name == "le":
			return 1
		case y.name == "le":
			return -1
		}
		return strings.Compare(x.name, y.name)
	})
	for i, l := range ls {
		if i == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.WriteString(l.name + `="` + escapeValue(l.value) + `"`)
	}
	if len(ls) > 0 {
		b.WriteByte('}')
	}
	b.WriteString(" " + formatFloat(s.value) + "\n")
	return b.String()
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeValue(s string) string { return valueEscaper.Replace(s) }

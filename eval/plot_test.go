package eval

import (
	"fmt"
	"strings"
	"testing"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"
)

// drawnText is one string drawn on a canvas and its box.
type drawnText struct {
	s   string
	box vg.Rectangle
}

// recordText draws with draw onto a recording canvas of w × h and returns
// every horizontal string drawn, with its box (baseline start to the
// width, descent to ascent).
func recordText(t *testing.T, w, h vg.Length, drawOn func(draw.Canvas) error) []drawnText {
	t.Helper()
	rec := new(recorder.Canvas)
	if err := drawOn(draw.Canvas{Canvas: rec, Rectangle: vg.Rectangle{Max: vg.Point{X: w, Y: h}}}); err != nil {
		t.Fatal(err)
	}
	var out []drawnText
	rotated := 0
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.Rotate:
			rotated++
		case *recorder.Pop:
			rotated = max(rotated-1, 0)
		case *recorder.FillString:
			if rotated > 0 {
				continue // the y axis label
			}
			face := font.DefaultCache.Lookup(a.Font, a.Size)
			e := face.Extents()
			out = append(out, drawnText{a.String, vg.Rectangle{
				Min: vg.Point{X: a.Point.X, Y: a.Point.Y - e.Descent},
				Max: vg.Point{X: a.Point.X + face.Width(a.String), Y: a.Point.Y + e.Ascent},
			}})
		}
	}
	return out
}

// overlap reports whether a and b come closer than gap.
func overlap(a, b vg.Rectangle, gap vg.Length) bool {
	return a.Min.X-gap < b.Max.X && b.Min.X-gap < a.Max.X && a.Min.Y-gap < b.Max.Y && b.Min.Y-gap < a.Max.Y
}

// TestReliabilityLayout checks the reliability diagram's layout: the
// title within the page and clear of the legend (it touched it, and ran
// off a 7-inch page, on webis-ecir20-dev), and each bin's pair count
// drawn, clear of the legend and the title.
func TestReliabilityLayout(t *testing.T) {
	bins := make([]ReliabilityBin, 10)
	for i := range bins {
		bins[i].Lo, bins[i].Hi = float64(i)/10, float64(i+1)/10
	}
	// webis-ecir20-dev's remove decision, label = 3, in the shape it has:
	// most pairs at the ends, a few in between, one bin empty.
	for _, b := range []struct {
		i, n     int
		p, share float64
	}{{0, 52, 0.02, 0}, {1, 6, 0.14, 0.17}, {2, 3, 0.24, 0.67}, {3, 4, 0.36, 0.25}, {4, 3, 0.45, 0.33},
		{5, 3, 0.56, 0.67}, {6, 2, 0.67, 0}, {7, 3, 0.78, 0.33}, {8, 3, 0.87, 0.33}, {9, 31, 0.96, 0.97}} {
		bins[b.i].Pairs, bins[b.i].MeanProb, bins[b.i].DupShare = b.n, b.p, b.share
	}
	bins[6].Pairs = 0 // empty: no point, no count
	const w, h = 7 * vg.Inch, 6 * vg.Inch
	title := "webis-ecir20-dev, duplicate = label = 3\nreliability of the remove decision (in sample, ECE 0.066)"
	texts := recordText(t, w, h, func(c draw.Canvas) error { return drawReliability(c, bins, title) })

	var titles, legend, counts []drawnText
	for _, d := range texts {
		switch {
		case strings.Contains(title, d.s) && len(d.s) > 10:
			titles = append(titles, d)
		case strings.HasPrefix(d.s, "perfect calibration") || strings.HasPrefix(d.s, "decision") || strings.HasPrefix(d.s, "model"):
			legend = append(legend, d)
		case strings.HasPrefix(d.s, "n="):
			counts = append(counts, d)
		}
	}
	if len(titles) == 0 || len(legend) < 2 {
		t.Fatalf("drawn: title %v, legend %v; want both\n%v", titles, legend, texts)
	}
	for _, ti := range titles {
		if ti.box.Min.X < 0 || ti.box.Max.X > w || ti.box.Max.Y > h {
			t.Errorf("title line %q spans %v, outside the %v × %v page", ti.s, ti.box, w, h)
		}
		for _, l := range append(legend, counts...) {
			if overlap(ti.box, l.box, 4) {
				t.Errorf("%q (%v) is within 4 points of the title's %q (%v)", l.s, l.box, ti.s, ti.box)
			}
		}
	}
	want := map[string]bool{}
	for _, b := range bins {
		if b.Pairs > 0 {
			want[fmt.Sprintf("n=%d", b.Pairs)] = true
		}
	}
	got := map[string]bool{}
	for i, c := range counts {
		got[c.s] = true
		for _, o := range counts[i+1:] {
			if overlap(c.box, o.box, 0) {
				t.Errorf("counts %q (%v) and %q (%v) overlap", c.s, c.box, o.s, o.box)
			}
		}
		for _, l := range legend {
			if overlap(c.box, l.box, 0) {
				t.Errorf("count %q overlaps the legend entry %q", c.s, l.s)
			}
		}
	}
	for s := range want {
		if !got[s] {
			t.Errorf("no bin count %q drawn (drawn: %v)", s, counts)
		}
	}
	if len(counts) != 9 {
		t.Errorf("%d counts drawn, want 9 (one per non-empty bin)", len(counts))
	}
}

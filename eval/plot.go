package eval

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/winnow-search/winnow/resultlist"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// axis turns a method's score into a distance on a fixed integer scale, as
// the Moz post plots fingerprint difference (0..128) against simhash
// difference (0..64).
type axis struct {
	label string
	max   int
	dist  func(s float64) float64
	// published is the paper threshold on the distance scale; NaN if none.
	published float64
}

func axisFor(m Method) (axis, error) {
	switch m.Name {
	case "simhash":
		return axis{"simhash distance (bits of 64)", 64, func(s float64) float64 { return s }, m.Published}, nil
	case "supershingles":
		return axis{"supershingles not shared (of 6)", 6, func(s float64) float64 { return 6 - s }, 6 - m.Published}, nil
	case "jaccard":
		return axis{"min-hash difference (of 84)", 84, func(s float64) float64 { return math.Round(84 * (1 - s)) }, math.NaN()}, nil
	case "bloom", "lcs", "lcs-central":
		pub := math.NaN()
		if !math.IsNaN(m.Published) {
			pub = math.Round(100 * (1 - m.Published))
		}
		return axis{m.Name + " difference (% of 100)", 100, func(s float64) float64 { return math.Round(100 * (1 - s)) }, pub}, nil
	}
	return axis{}, fmt.Errorf("eval: no histogram axis for method %q", m.Name)
}

// Plot writes the charts of a report into dir and returns their paths:
// one precision-recall chart per definition, with a curve per method and
// the mode decision of that definition as a point (group for label >= 1
// and dup, remove for label = 3), and a Moz-style 2-D histogram of the
// distances of methods x and y over all scored pairs, with a logarithmic
// colour scale and the published thresholds drawn as lines.
func Plot(rep *Report, dir, name, x, y string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var files []string
	for _, r := range rep.Results {
		path := filepath.Join(dir, name+"-pr-"+slug(r.Definition)+".png")
		if err := plotPR(r, name, path); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	path := filepath.Join(dir, name+"-hist-"+x+"-"+y+".png")
	if err := plotHistogram(rep, name, x, y, path); err != nil {
		return files, err
	}
	files = append(files, path)
	for _, r := range rep.Results {
		for _, pu := range resultlist.Purposes() {
			mode := pu.String()
			path := filepath.Join(dir, name+"-reliability-"+mode+"-"+slug(r.Definition)+".png")
			title := fmt.Sprintf("%s, duplicate = %s\nreliability of the %s decision (in sample, ECE %.3f)", name, r.Definition, mode, r.ECE[mode])
			if err := plotReliabilityBins(r.Reliability[mode], title, path); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

func slug(s string) string {
	r := strings.NewReplacer(">=", "ge", "=", "eq", " ", "")
	return r.Replace(s)
}

var lineColors = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255}, color.RGBA{148, 103, 189, 255}, color.RGBA{140, 86, 75, 255},
	color.RGBA{227, 119, 194, 255},
}

func plotPR(r Result, name, path string) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: precision-recall (duplicate = %s, %d pairs)", name, r.Definition, r.Pairs)
	p.X.Label.Text = "recall"
	p.Y.Label.Text = "precision"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1.02
	p.Legend.Left = true
	p.Legend.Top = false
	p.Add(plotter.NewGrid())
	for i, m := range r.Methods {
		pts := make(plotter.XYs, 0, len(m.Curve))
		for _, c := range m.Curve {
			pts = append(pts, plotter.XY{X: c.Recall, Y: c.Precision})
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("eval: plot %s: %w", m.Name, err)
		}
		l.Color = lineColors[i%len(lineColors)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s (best F1 %.3f)", m.Name, m.Best.F1), l)
	}
	pt, label := prMark(r)
	d, err := plotter.NewScatter(plotter.XYs{{X: pt.Recall, Y: pt.Precision}})
	if err != nil {
		return fmt.Errorf("eval: plot %s decision: %w", r.ModeDecision, err)
	}
	d.Color = color.Black
	d.Radius = vg.Points(5)
	p.Add(d)
	p.Legend.Add(label, d)
	if err := p.Save(8*vg.Inch, 6*vg.Inch, path); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// prMark returns the point a precision-recall chart marks and its
// legend: the figures of the mode decision whose definition the chart
// is for (group for label >= 1 and dup, remove for label = 3), at its
// min_confidence (a paper method's threshold when the decision is one).
func prMark(r Result) (Point, string) {
	pt := r.Decisions[r.ModeDecision]
	setting := fmt.Sprintf("min_confidence %.2f", pt.Threshold)
	if math.IsNaN(r.ECE[r.ModeDecision]) { // no probabilities: a paper method
		setting = fmt.Sprintf("threshold %.3g", pt.Threshold)
	}
	return pt, fmt.Sprintf("%s decision at %s (P %.3f, R %.3f, F1 %.3f)", r.ModeDecision, setting, pt.Precision, pt.Recall, pt.F1)
}

// grid is a count histogram for plotter.HeatMap; Z is log10(count), NaN
// for empty cells, which the heat map leaves white.
type grid struct {
	nx, ny int
	counts []float64
}

func (g *grid) Dims() (c, r int) { return g.nx, g.ny }
func (g *grid) X(c int) float64  { return float64(c) }
func (g *grid) Y(r int) float64  { return float64(r) }
func (g *grid) Z(c, r int) float64 {
	n := g.counts[r*g.nx+c]
	if n == 0 {
		return math.NaN()
	}
	return math.Log10(n)
}

func methodByName(name string) (Method, error) {
	for _, m := range Methods() {
		if m.Name == name {
			return m, nil
		}
	}
	return Method{}, fmt.Errorf("eval: unknown method %q", name)
}

func plotHistogram(rep *Report, name, xName, yName, path string) error {
	mx, err := methodByName(xName)
	if err != nil {
		return err
	}
	my, err := methodByName(yName)
	if err != nil {
		return err
	}
	ax, err := axisFor(mx)
	if err != nil {
		return err
	}
	ay, err := axisFor(my)
	if err != nil {
		return err
	}
	g := &grid{nx: ax.max + 1, ny: ay.max + 1}
	g.counts = make([]float64, g.nx*g.ny)
	maxCount := 0.0
	for i := range rep.Scored {
		s := &rep.Scored[i].Scores
		vx, vy := mx.Score(s), my.Score(s)
		if math.IsNaN(vx) || math.IsNaN(vy) {
			continue
		}
		cx := int(min(max(ax.dist(vx), 0), float64(ax.max)))
		cy := int(min(max(ay.dist(vy), 0), float64(ay.max)))
		g.counts[cy*g.nx+cx]++
		maxCount = max(maxCount, g.counts[cy*g.nx+cx])
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: %d pairs, colour = log10(count)", name, len(rep.Scored))
	p.X.Label.Text = ax.label
	p.Y.Label.Text = ay.label
	cm := moreland.ExtendedBlackBody()
	cm.SetMin(0)
	cm.SetMax(math.Max(math.Log10(maxCount), 1e-9))
	h := plotter.NewHeatMap(g, cm.Palette(255))
	h.Min, h.Max = 0, math.Max(math.Log10(maxCount), 1e-9)
	h.NaN = color.White
	p.Add(h)
	for _, t := range []struct {
		v        float64
		vertical bool
	}{{ax.published, true}, {ay.published, false}} {
		if math.IsNaN(t.v) {
			continue
		}
		pts := plotter.XYs{{X: t.v + 0.5, Y: -0.5}, {X: t.v + 0.5, Y: float64(ay.max) + 0.5}}
		if !t.vertical {
			pts = plotter.XYs{{X: -0.5, Y: t.v + 0.5}, {X: float64(ax.max) + 0.5, Y: t.v + 0.5}}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		l.Color = color.RGBA{0, 120, 255, 255}
		l.Width = vg.Points(1.5)
		p.Add(l)
	}
	if err := p.Save(8*vg.Inch, 6*vg.Inch, path); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// PlotReliability writes one reliability diagram per data set and truth of
// a cross-validation into dir and returns their paths: each bin's mean
// out-of-fold probability against its share of duplicates, with the
// diagonal of perfect calibration and the expected calibration error in
// the title.
func PlotReliability(rep *CVReport, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var files []string
	for _, t := range rep.Tables {
		path := filepath.Join(dir, t.Set+"-reliability-"+slug(truthSlug(t.Truth))+".png")
		title := fmt.Sprintf("%s, duplicate = %s\nreliability of the model (out of fold, ECE %.3f)", t.Set, t.Truth, ece(t.Reliability))
		if err := plotReliabilityBins(t.Reliability, title, path); err != nil {
			return files, err
		}
		files = append(files, path)
	}
	return files, nil
}

// truthSlug keeps the rule of a truth's name ("label >= 1"), dropping a
// note in brackets.
func truthSlug(t string) string {
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	return strings.TrimSpace(t)
}

// plotReliabilityBins writes one reliability diagram ([drawReliability])
// as a PNG to path.
func plotReliabilityBins(bins []ReliabilityBin, title, path string) error {
	c, err := draw.NewFormattedCanvas(7*vg.Inch, 6*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := drawReliability(draw.New(c), bins, title); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if _, err := c.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("eval: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// drawReliability draws one reliability diagram onto c: each bin's mean
// probability against its share of duplicates, labelled with the bin's
// pair count, and the diagonal of perfect calibration. The legend stands
// in a strip under the chart, where it covers neither the title nor a
// bin, wherever the bins fall.
func drawReliability(c draw.Canvas, bins []ReliabilityBin, title string) error {
	p := plot.New()
	p.Title.Text = title
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = "predicted probability (bin mean)"
	p.Y.Label.Text = "share of duplicates"
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
	p.Add(plotter.NewGrid())
	diag, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 1}})
	if err != nil {
		return fmt.Errorf("eval: plot: %w", err)
	}
	diag.Color = color.Gray{160}
	diag.Dashes = []vg.Length{vg.Points(4), vg.Points(4)}
	p.Add(diag)
	legend := plot.NewLegend()
	legend.Top, legend.Left = true, true
	legend.Add("perfect calibration", diag)
	// Each count stands above its point, or below it when the point
	// before is too near for the two to stand side by side.
	var pts plotter.XYs
	var above, below plotter.XYLabels
	last := math.Inf(-1)
	for _, b := range bins {
		if b.Pairs == 0 {
			continue
		}
		pt := plotter.XY{X: b.MeanProb, Y: b.DupShare}
		pts = append(pts, pt)
		side := &above
		if pt.X-last < 0.08 && len(above.XYs) > 0 && above.XYs[len(above.XYs)-1].X == last {
			side = &below
		}
		last = pt.X
		side.XYs = append(side.XYs, pt)
		side.Labels = append(side.Labels, fmt.Sprintf("n=%d", b.Pairs))
	}
	if len(pts) > 0 {
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("eval: plot: %w", err)
		}
		l.Color, s.Color = lineColors[0], lineColors[0]
		p.Add(l, s)
		legend.Add("model (n= pairs in the bin)", l, s)
		for _, side := range []struct {
			labels plotter.XYLabels
			dy     vg.Length
			align  text.YAlignment
		}{{above, vg.Points(5), draw.YBottom}, {below, vg.Points(-5), draw.YTop}} {
			if len(side.labels.XYs) == 0 {
				continue
			}
			ls, err := plotter.NewLabels(side.labels)
			if err != nil {
				return fmt.Errorf("eval: plot: %w", err)
			}
			ls.Offset = vg.Point{Y: side.dy}
			for i := range ls.TextStyle {
				ls.TextStyle[i].XAlign, ls.TextStyle[i].YAlign = draw.XCenter, side.align
				ls.TextStyle[i].Color = lineColors[0]
			}
			p.Add(ls)
		}
	}
	pad := vg.Points(6)
	strip := legend.Rectangle(c).Size().Y + 2*pad
	p.Draw(draw.Crop(c, 0, 0, strip, 0))
	legend.Draw(draw.Crop(c, pad, 0, pad, strip-pad-c.Size().Y))
	return nil
}

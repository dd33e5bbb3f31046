package report

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"slices"
	"text/tabwriter"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/winnow-search/winnow/cluster/partition"
	"github.com/winnow-search/winnow/similarity"
)

// BalanceRow is the load balance of one length partitioning of a set of
// pages.
type BalanceRow struct {
	// Dims is the number of dimensions of the length vectors partitioned.
	Dims int
	// Parts is the number of partitions P.
	Parts int
	// Factors is the number of intervals of each dimension; their product
	// is Parts.
	Factors []int
	// Imbalance is the load-imbalance factor (largest partition over the
	// mean, [partition.Imbalance]) of the [partition.Partitioner], whose
	// later dimensions are cut at quantiles inside the earlier ones' slabs.
	Imbalance float64
	// Grid is the imbalance of Zhu's literal product grid, each dimension
	// cut at the quantiles of its own values alone, for comparison; it
	// equals Imbalance in 1-D.
	Grid float64
}

// BalanceParts returns the partition counts [Balance] measures in dims
// dimensions up to maxParts: the powers of two from 2, and the squares (in
// 2-D) or cubes (in 3-D) that are not, for which P splits over dims into
// intervals of at least 2 (see [partition.Factors]).
func BalanceParts(dims, maxParts int) []int {
	var ps []int
	for p := 2; p <= maxParts; p *= 2 {
		ps = append(ps, p)
	}
	for b := 3; dims >= 2 && dims <= 3; b++ {
		p := b * b
		if dims == 3 {
			p *= b
		}
		if p > maxParts {
			break
		}
		ps = append(ps, p)
	}
	slices.Sort(ps)
	ps = slices.Compact(ps)
	return slices.DeleteFunc(ps, func(p int) bool { return partition.Factors(p, dims) == nil })
}

// Balance measures the load balance of length partitionings of the pages
// with signatures sigs, as in Zhu Fig. 4: for 1, 2 and 3 dimensions and
// each partition count of [BalanceParts] up to maxParts, it builds a
// [partition.Partitioner] from the pages' length vectors, maps every page
// and reports the imbalance. The partitioner is built from the pages it
// maps, as the cluster service builds it from the pages it holds, so the
// figures are the balance the slicing reaches, not an estimate on unseen
// pages.
//
// The d-dimensional vectors are derived from the N-dimensional
// Signature.Lengths by [partition.Fold]: dimension i goes to i·d/N, which
// is the length vector of a dictionary split into d parts made of whole
// parts of the N-part split (Zhu splits the dictionary once per mapping;
// folding gives such a split without signing again). The d parts are of
// equal expected size when d divides N, e.g. with N = 6; with the default
// N = 3, 2-D is (a+b, c). Empty signatures ([similarity.Signature.Empty])
// are left out, as the service never partitions them; so are signatures
// whose length vector is shorter than d. Balance returns nil when no page
// is left.
func Balance(sigs []*similarity.Signature, maxParts int) []BalanceRow {
	var rows []BalanceRow
	for dims := 1; dims <= 3; dims++ {
		var vs [][]uint32
		for _, s := range sigs {
			if s == nil || s.Empty() || len(s.Lengths) < dims {
				continue
			}
			vs = append(vs, partition.Fold(s.Lengths, dims))
		}
		if len(vs) == 0 {
			return nil
		}
		for _, parts := range BalanceParts(dims, maxParts) {
			p, err := partition.New(dims, parts, vs)
			if err != nil {
				continue // BalanceParts holds only counts New takes
			}
			counts := make([]int, parts)
			for _, v := range vs {
				counts[p.Partition(v)]++
			}
			rows = append(rows, BalanceRow{
				Dims:      dims,
				Parts:     parts,
				Factors:   p.Factors(),
				Imbalance: partition.Imbalance(counts),
				Grid:      gridImbalance(vs, p.Factors()),
			})
		}
	}
	return rows
}

// gridImbalance returns the imbalance of the product grid that cuts
// dimension k of vs into factors[k] intervals at the quantiles of that
// dimension alone (Zhu §4.3 read literally).
func gridImbalance(vs [][]uint32, factors []int) float64 {
	dims := len(factors)
	marg := make([]*partition.Partitioner, dims)
	col := make([][]uint32, len(vs))
	for k, f := range factors {
		for i, v := range vs {
			col[i] = []uint32{v[k]}
		}
		p, err := partition.New(1, f, col)
		if err != nil {
			return 0
		}
		marg[k] = p
	}
	parts := 1
	for _, f := range factors {
		parts *= f
	}
	counts := make([]int, parts)
	x := make([]uint32, 1)
	for _, v := range vs {
		cell := 0
		for k, f := range factors {
			x[0] = v[k]
			cell = cell*f + marg[k].Partition(x)
		}
		counts[cell]++
	}
	return partition.Imbalance(counts)
}

// WriteBalance writes rows as an aligned text table, one row per
// partitioning.
func WriteBalance(w io.Writer, rows []BalanceRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "dims\tparts\tfactors\timbalance\tgrid\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.3f\t%.3f\t\n", r.Dims, r.Parts, factorString(r.Factors), r.Imbalance, r.Grid)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func factorString(fs []int) string {
	s := ""
	for i, f := range fs {
		if i > 0 {
			s += "x"
		}
		s += fmt.Sprint(f)
	}
	return s
}

var dimColors = []color.Color{
	color.RGBA{31, 119, 180, 255}, color.RGBA{255, 127, 14, 255}, color.RGBA{44, 160, 44, 255},
	color.RGBA{214, 39, 40, 255},
}

// PlotBalance draws rows as Zhu's Fig. 4 into the PNG (or SVG, PDF, by
// extension) file at path: the load-imbalance factor against the number of
// partitions, one line per dimension count.
func PlotBalance(rows []BalanceRow, path string) error {
	if len(rows) == 0 {
		return fmt.Errorf("report: no balance rows to plot")
	}
	p := plot.New()
	p.Title.Text = "Load imbalance of length partitioning (Zhu et al. Fig. 4)"
	p.X.Label.Text = "partitions"
	p.Y.Label.Text = "load imbalance factor (max / mean)"
	p.Y.Min = 1
	p.Add(plotter.NewGrid())
	byDims := map[int]plotter.XYs{}
	for _, r := range rows {
		byDims[r.Dims] = append(byDims[r.Dims], plotter.XY{X: float64(r.Parts), Y: r.Imbalance})
	}
	dims := make([]int, 0, len(byDims))
	for d := range byDims {
		dims = append(dims, d)
	}
	slices.Sort(dims)
	for i, d := range dims {
		pts := byDims[d]
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("report: plot %d-D: %w", d, err)
		}
		l.Color = dimColors[i%len(dimColors)]
		l.Width = vg.Points(1.5)
		s.Color = l.Color
		s.Shape = draw.CircleGlyph{}
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("%d-D", d), l, s)
		p.Y.Max = max(p.Y.Max, slices.MaxFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.Y, b.Y) }).Y*1.05)
	}
	p.Legend.Top = true
	if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

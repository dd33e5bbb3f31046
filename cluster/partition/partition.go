package partition

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// MaxDims is the largest number of dimensions a [Partitioner] takes; it is
// the largest length vector a signature has.
const MaxDims = 64

// MaxParts is the largest number of partitions a [Partitioner] takes.
const MaxParts = 1 << 20

// ErrParts is returned by [New] when the partitions cannot be split over
// the dimensions: each dimension needs at least two intervals, so P must be
// a product of dims factors of at least 2 each.
var ErrParts = errors.New("partition: partitions cannot be split over the dimensions")

// ErrSample is returned by [New] for an empty sample.
var ErrSample = errors.New("partition: empty sample")

// Partitioner maps a document's length vector to one of P partitions (Zhu
// §4): dimension k is cut into Factors()[k] intervals, at quantiles of the
// sample pages inside the box already fixed by dimensions 1..k−1, so each
// partition holds about the same number of sample pages; P is the product
// of the factors (64 = 4×4×4 in 3-D, 8×8 in 2-D, 64 in 1-D). Partitions
// are numbered in mixed radix, dimension 1 most significant.
//
// The zero Partitioner is not usable; build one with [New] or
// [Partitioner.UnmarshalBinary]. A Partitioner is immutable and safe for
// concurrent use.
type Partitioner struct {
	dims    int
	parts   int
	factors []int
	// cuts[k] holds the cut values of dimension k: node n of level k (one
	// of the product of factors[:k] boxes fixed by the earlier dimensions)
	// has factors[k]−1 ascending cuts at cuts[k][n*(f−1):(n+1)*(f−1)].
	// Interval j of a node holds the values v with cut[j−1] ≤ v < cut[j]
	// (no lower cut for j = 0, no upper cut for the last).
	cuts [][]uint32
}

// New returns a Partitioner of parts partitions over dims dimensions cut at
// the quantiles of sample, the length vectors of a representative set of
// pages. The factors are as equal as possible (16 in 3-D is 4×2×2). Sample
// vectors are folded to dims dimensions as [Fold] does. New does not retain
// sample. It fails with [ErrParts] when parts is not a product of dims
// factors of at least 2 each (so 1-D takes any parts ≥ 2, 3-D needs 8, 12,
// 16, 18, 20, 24, 27, ...), and with [ErrSample] for an empty sample.
func New(dims, parts int, sample [][]uint32) (*Partitioner, error) {
	if dims < 1 || dims > MaxDims {
		return nil, fmt.Errorf("partition: %d dimensions, want 1 to %d", dims, MaxDims)
	}
	if parts < 2 || parts > MaxParts {
		return nil, fmt.Errorf("%w: %d partitions, want 2 to %d", ErrParts, parts, MaxParts)
	}
	factors := Factors(parts, dims)
	if factors == nil {
		return nil, fmt.Errorf("%w: %d partitions over %d dimensions", ErrParts, parts, dims)
	}
	if len(sample) == 0 {
		return nil, ErrSample
	}
	vs := make([][]uint32, len(sample))
	for i, v := range sample {
		vs[i] = Fold(v, dims)
	}
	p := &Partitioner{dims: dims, parts: parts, factors: factors, cuts: make([][]uint32, dims)}
	// groups[n] holds the sample vectors in node n of the current level.
	groups := [][][]uint32{vs}
	for k, f := range factors {
		next := make([][][]uint32, 0, len(groups)*f)
		cuts := make([]uint32, 0, len(groups)*(f-1))
		for _, g := range groups {
			slices.SortFunc(g, func(a, b []uint32) int { return cmpU32(a[k], b[k]) })
			c := quantileCuts(g, k, f)
			cuts = append(cuts, c...)
			lo := 0
			for j := range f {
				hi := len(g)
				if j < f-1 {
					hi, _ = slices.BinarySearchFunc(g, c[j], func(v []uint32, t uint32) int { return cmpU32(v[k], t) })
					hi = max(hi, lo)
				}
				next = append(next, g[lo:hi])
				lo = hi
			}
		}
		p.cuts[k] = cuts
		groups = next
	}
	return p, nil
}

func cmpU32(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// quantileCuts returns f−1 ascending cuts of the values in dimension k of
// g, sorted by that dimension, so the f intervals hold about len(g)/f
// vectors each. The cut at quantile j/f is the value there, or the next
// larger value when the one below it is equal (a run of equal values goes
// to the interval that holds most of it). Cuts are nondecreasing; an
// interval between equal cuts is empty. An empty g gets cuts that are all
// the largest value, leaving every vector in the first interval.
func quantileCuts(g [][]uint32, k, f int) []uint32 {
	c := make([]uint32, f-1)
	n := len(g)
	if n == 0 {
		for j := range c {
			c[j] = math.MaxUint32
		}
		return c
	}
	for j := range c {
		q := (j + 1) * n / f
		if q <= 0 {
			c[j] = g[0][k]
			continue
		}
		v := g[q][k]
		// The run of v spans [first, last]; cut before it or after it,
		// whichever is nearer to q.
		first, _ := slices.BinarySearchFunc(g, v, func(x []uint32, t uint32) int { return cmpU32(x[k], t) })
		last := first
		for last < n && g[last][k] == v {
			last++
		}
		if q-first <= last-q || last == n {
			c[j] = v
		} else {
			c[j] = g[last][k]
		}
		if j > 0 && c[j] < c[j-1] {
			c[j] = c[j-1]
		}
	}
	return c
}

// Factors returns the per-dimension interval counts [New] uses for parts
// partitions over dims dimensions: dims factors of at least 2 each whose
// product is parts, as equal as possible (the largest factor is smallest),
// in descending order, or nil when there are none.
func Factors(parts, dims int) []int {
	if dims < 1 || parts < 2 {
		return nil
	}
	var best []int
	cur := make([]int, 0, dims)
	var rec func(rest, maxF int)
	rec = func(rest, maxF int) {
		if len(cur) == dims-1 {
			if rest >= 2 && rest <= maxF {
				cand := append(slices.Clone(cur), rest)
				if best == nil || slices.Compare(cand, best) < 0 {
					best = cand
				}
			}
			return
		}
		for f := min(maxF, rest); f >= 2; f-- {
			if rest%f != 0 || rest/f < 2 {
				continue
			}
			cur = append(cur, f)
			rec(rest/f, f)
			cur = cur[:len(cur)-1]
		}
	}
	if dims == 1 {
		return []int{parts}
	}
	rec(parts, parts)
	return best
}

// Fold returns lengths as a vector of dims dimensions: dimension i of an
// N-dimensional vector goes to dimension i·dims/N, so the result is the
// length vector of a coarser split of the same dictionary (3-D (a, b, c)
// folds to (a+b, c) in 2-D and to (a+b+c) in 1-D), and the bound of
// [Partitioner.Candidates] holds for it as for the original. A vector
// shorter than dims is padded with zeros. Fold returns lengths itself when
// it has dims dimensions.
func Fold(lengths []uint32, dims int) []uint32 {
	n := len(lengths)
	if n == dims {
		return lengths
	}
	out := make([]uint32, dims)
	if n < dims {
		copy(out, lengths)
		return out
	}
	for i, v := range lengths {
		j := i * dims / n
		out[j] = satAdd(out[j], v)
	}
	return out
}

func satAdd(a, b uint32) uint32 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint32
}

// Dims returns the number of dimensions of p.
func (p *Partitioner) Dims() int { return p.dims }

// Parts returns the number of partitions P of p.
func (p *Partitioner) Parts() int { return p.parts }

// Factors returns the number of intervals of each dimension of p; their
// product is P. The caller may modify the result.
func (p *Partitioner) Factors() []int { return slices.Clone(p.factors) }

// Partition returns the partition, in [0, P), of a document with this
// length vector. A vector of other than p.Dims() dimensions is folded as
// [Fold] does. Cost: O(dims · log P).
func (p *Partitioner) Partition(lengths []uint32) int {
	if len(lengths) != p.dims {
		lengths = Fold(lengths, p.dims)
	}
	node := 0
	for k, f := range p.factors {
		cs := p.cuts[k][node*(f-1) : (node+1)*(f-1)]
		// j = number of cuts ≤ v.
		v := lengths[k]
		lo, hi := 0, len(cs)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if cs[m] <= v {
				lo = m + 1
			} else {
				hi = m
			}
		}
		node = node*f + lo
	}
	return node
}

// Candidates returns, in ascending order, the partitions that may hold a
// near-duplicate of a document with these lengths A under similarity
// threshold tau: every partition whose box holds a length vector B with
//
//	Σ_i (max(A_i − B_i, 0) + tau·max(B_i − A_i, 0)) ≤ (1 − tau)·|A|,
//
// that is with weighted Jaccard Σ min(A_i, B_i) / Σ max(A_i, B_i) ≥ tau,
// which every B whose multiset word Jaccard with A is at least tau meets
// (see the package documentation for the proof and for what it covers).
// In one dimension this is Zhu's bound tau·|A| ≤ |B| ≤ |A|/tau. To enlarge
// the bound by Zhu's interval enlarging factor rho, pass tau/rho. The
// document's own partition is always included. tau is clamped to [0, 1]
// (NaN counts as 0): at 0 every partition that can hold a vector is a
// candidate. A vector of other than p.Dims() dimensions is folded as
// [Fold] does. Cost: O(dims · P) in the worst case, less as the bound
// prunes.
func (p *Partitioner) Candidates(lengths []uint32, tau float64) []int {
	if len(lengths) != p.dims {
		lengths = Fold(lengths, p.dims)
	}
	if !(tau > 0) {
		tau = 0
	}
	tau = min(tau, 1)
	var total float64
	for _, v := range lengths {
		total += float64(v)
	}
	// A little slack keeps rounding from dropping a box whose nearest
	// point meets the bound with equality.
	budget := (1-tau)*total*(1+1e-12) + 1e-9
	var out []int
	var walk func(k, node int, spent float64)
	walk = func(k, node int, spent float64) {
		if k == p.dims {
			out = append(out, node)
			return
		}
		f := p.factors[k]
		cs := p.cuts[k][node*(f-1) : (node+1)*(f-1)]
		a := float64(lengths[k])
		for j := range f {
			// Interval j holds the integers in [lo, hi].
			lo, hi := float64(0), math.Inf(1)
			if j > 0 {
				lo = float64(cs[j-1])
			}
			if j < f-1 {
				if cs[j] == 0 || (j > 0 && cs[j] == cs[j-1]) {
					continue // empty interval
				}
				hi = float64(cs[j]) - 1
			}
			var h float64
			switch {
			case lo > a:
				h = tau * (lo - a)
			case hi < a:
				h = a - hi
			}
			if spent+h <= budget {
				walk(k+1, node*f+j, spent+h)
			}
		}
	}
	walk(0, 0, 0)
	return out
}

// Imbalance returns the load-imbalance factor of partition sizes counts,
// the largest over the mean (Zhu §6, Fig. 4): 1 is perfect balance. It
// returns 0 when counts is empty or sums to zero.
func Imbalance(counts []int) float64 {
	if len(counts) == 0 {
		return 0
	}
	var sum, mx int
	for _, n := range counts {
		sum += n
		mx = max(mx, n)
	}
	if sum == 0 {
		return 0
	}
	return float64(mx) * float64(len(counts)) / float64(sum)
}

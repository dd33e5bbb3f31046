package pipeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// Connected components by large-star / small-star (Kiveris et al., SoCC
// 2014). Nodes are document keys, ordered as strings; an edge is a KV
// (u, v). Each operation groups the edges, both ways, by node: a worker
// holds one node's neighbours at a time. Large-star links every larger
// neighbour of u to the smallest of u and its neighbours; small-star links
// u and its smaller neighbours to the smallest of them. Both keep the
// components; alternated, they leave one star per component whose centre
// is its smallest node, in O(log² n) rounds (in practice a handful).

// symmetric emits an edge both ways.
func symmetric(u, v string, emit func(string, string)) {
	emit(u, v)
	emit(v, u)
}

// neighbours collects, sorts and deduplicates a node's neighbours.
func neighbours(u string, values func(*string) bool) []string {
	var ns []string
	var v string
	for values(&v) {
		if v != u {
			ns = append(ns, v)
		}
	}
	slices.Sort(ns)
	return slices.Compact(ns)
}

// settled reports that u is a star's centre (every neighbour larger) or a
// leaf (one neighbour, smaller).
func settled(u string, ns []string) bool {
	return len(ns) == 0 || ns[0] > u || len(ns) == 1 && ns[0] < u
}

// starFn runs one large-star or small-star operation and counts the nodes
// not yet settled under its counter name.
type starFn struct {
	Large   bool
	Counter string

	unsettled beam.Counter
}

func (f *starFn) Setup() { f.unsettled = beam.NewCounter(metricNS, f.Counter) }

func (f *starFn) ProcessElement(ctx context.Context, u string, values func(*string) bool, emit func(string, string)) {
	ns := neighbours(u, values)
	if len(ns) == 0 {
		return
	}
	if !settled(u, ns) {
		f.unsettled.Inc(ctx, 1)
	}
	m := min(ns[0], u)
	if f.Large {
		for _, v := range ns {
			if v > u {
				emit(v, m)
			}
		}
		return
	}
	if u != m {
		emit(u, m)
	}
	for _, v := range ns {
		if v < u && v != m {
			emit(v, m)
		}
	}
}

// roundCounter names the counter of the nodes unsettled at the start of
// round r (1-based); round 0 is the check after the last round.
func roundCounter(r int) string { return fmt.Sprintf("cc_unsettled_round_%03d", r) }

// components returns, for every node of edges, a KV (node, smallest node
// of its component), after at most rounds rounds.
func components(s beam.Scope, edges beam.PCollection, rounds int) beam.PCollection {
	s = s.Scope("components")
	star := func(edges beam.PCollection, large bool, counter string) beam.PCollection {
		both := beam.ParDo(s, symmetric, edges)
		return beam.ParDo(s, &starFn{Large: large, Counter: counter}, beam.GroupByKey(s, both))
	}
	for r := 1; r <= rounds; r++ {
		edges = star(edges, true, roundCounter(r))
		edges = star(edges, false, roundCounter(r)+"_small")
	}
	// The check: a last large-star over stars changes nothing and counts
	// any node still unsettled.
	edges = star(edges, true, roundCounter(0))
	return beam.ParDo(s, labelFn, edges)
}

// labelFn turns a star's edge (leaf, centre) into both nodes' labels.
func labelFn(leaf, centre string, emit func(string, string)) {
	emit(leaf, centre)
	emit(centre, centre)
}

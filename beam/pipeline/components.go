package pipeline

import (
	"cmp"
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

// Edge is an edge (U, V) grouped by U.
type Edge struct {
	U, V string
}

// edgeBatcher batches undirected edges both ways, each grouped by its
// first node.
type edgeBatcher struct {
	b batcher[Edge, *Edge]
}

// add adds the edge {u, v}.
func (e *edgeBatcher) add(u, v string, packs int) {
	e.b.add(pack(u, packs), &Edge{u, v})
	e.b.add(pack(v, packs), &Edge{v, u})
}

func (e *edgeBatcher) flush(emit func(int, []byte)) { e.b.flush(emit) }

// neighbours returns the sorted distinct neighbours of a run of edges of
// one node.
func neighbours(run []Edge) []string {
	ns := make([]string, 0, len(run))
	for _, e := range run {
		if e.V != e.U && (len(ns) == 0 || ns[len(ns)-1] != e.V) {
			ns = append(ns, e.V)
		}
	}
	return ns
}

// settled reports that u is a star's centre (every neighbour larger) or a
// leaf (one neighbour, smaller).
func settled(u string, ns []string) bool {
	return len(ns) == 0 || ns[0] > u || len(ns) == 1 && ns[0] < u
}

// starFn runs one large-star or small-star operation and counts the nodes
// not yet settled under its counter name. Its edges (leaf, centre) go out
// both ways for the next operation, or, with Labels, as both nodes'
// labels (Members) grouped by node.
type starFn struct {
	Large, Labels bool
	Counter       string
	Packs         int

	unsettled beam.Counter
	edges     edgeBatcher
	labels    batcher[Member, *Member]
}

func (f *starFn) Setup() { f.unsettled = beam.NewCounter(metricNS, f.Counter) }

func (f *starFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	es, err := readBatches[Edge](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(es, func(a, b Edge) int { return cmp.Or(cmp.Compare(a.U, b.U), cmp.Compare(a.V, b.V)) })
	out := func(leaf, centre string) {
		if !f.Labels {
			f.edges.add(leaf, centre, f.Packs)
			return
		}
		f.labels.add(pack(leaf, f.Packs), &Member{Key: leaf, Root: centre, Label: true})
		f.labels.add(pack(centre, f.Packs), &Member{Key: centre, Root: centre, Label: true})
	}
	runs(es, func(e *Edge) string { return e.U }, func(run []Edge) { f.node(ctx, run[0].U, neighbours(run), out) })
	f.edges.flush(emit)
	f.labels.flush(emit)
	return nil
}

func (f *starFn) node(ctx context.Context, u string, ns []string, emit func(string, string)) {
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

// components returns, for every node of edges (batches of [Edge]s both
// ways, grouped by first node), its label: batches of [Member]s (node,
// smallest node of its component) grouped by node, after at most rounds
// rounds.
func components(s beam.Scope, edges beam.PCollection, rounds, packs int) beam.PCollection {
	s = s.Scope("components")
	star := func(edges beam.PCollection, large, labels bool, counter string) beam.PCollection {
		return beam.ParDo(s, &starFn{Large: large, Labels: labels, Counter: counter, Packs: packs}, beam.GroupByKey(s, edges))
	}
	for r := 1; r <= rounds; r++ {
		edges = star(edges, true, false, roundCounter(r))
		edges = star(edges, false, false, roundCounter(r)+"_small")
	}
	// The check: a last large-star over stars changes nothing and counts
	// any node still unsettled; its edges (leaf, centre) are the labels.
	return star(edges, true, true, roundCounter(0))
}

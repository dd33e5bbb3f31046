package pipeline

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

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
// smallest node of its component) grouped by node. A graph whose edge
// batches hold at most small bytes (negative: none) is labelled in one
// grouping by unionFn; a larger one by at most rounds rounds. Its
// counters' names start with prefix: Run reads those of the empty one.
func components(s beam.Scope, prefix string, edges beam.PCollection, rounds, packs int, small int64) beam.PCollection {
	s = s.Scope(prefix + "components")
	// The total size of the batches reaches every group as a marker (as
	// the splitters do in ids.go: a grouping, not a side input).
	sizes := beam.ParDo(s, edgeBytesFn, edges)
	totals := beam.ParDo(s, &totalFn{Groups: packs}, beam.GroupByKey(s, beam.AddFixedKey(s, sizes)))
	few, many := beam.ParDo2(s, &routeFn{Small: small}, beam.GroupByKey(s, beam.Flatten(s, edges, totals)))
	labelled := beam.ParDo(s, &unionFn{Packs: packs, Counter: prefix + "cc_union_nodes"}, beam.GroupByKey(s, few))

	star := func(edges beam.PCollection, large, labels bool, counter string) beam.PCollection {
		return beam.ParDo(s, &starFn{Large: large, Labels: labels, Counter: counter, Packs: packs}, beam.GroupByKey(s, edges))
	}
	edges = many
	for r := 1; r <= rounds; r++ {
		edges = star(edges, true, false, prefix+roundCounter(r))
		edges = star(edges, false, false, prefix+roundCounter(r)+"_small")
	}
	// The check: a last large-star over stars changes nothing and counts
	// any node still unsettled; its edges (leaf, centre) are the labels.
	return beam.Flatten(s, labelled, star(edges, true, true, prefix+roundCounter(0)))
}

// DefaultSmallEdges is the most bytes of edge batches whose graph
// components labels in one grouping (unionFn) rather than in rounds: 16
// MiB, about 800,000 edges, which one worker joins in about a second. The
// rounds cost two groupings each (25 with the default 12 rounds) whatever
// the graph; for a small one their fixed cost is most of the step's.
const DefaultSmallEdges = 16 << 20

// totalMagic starts the marker that carries the total size of the edge
// batches to each group (totalFn). An edge batch starts with a node's
// length (8) and a spilled one with spillMagic, so neither is a marker.
const totalMagic = "\xfeedges1"

// edgeBytesFn emits the size of an edge batch (of the data a spilled
// batch refers to).
func edgeBytesFn(_ int, batch []byte, emit func(int64)) error {
	if spillDir() == "" {
		emit(int64(len(batch)))
		return nil
	}
	_, _, n, err := parseRefMagic(spillMagic, batch)
	emit(int64(n))
	return err
}

// totalFn adds the sizes of the edge batches and sends the total to each
// of Groups groups as a marker (totalMagic and the total, a varint).
type totalFn struct {
	Groups int
}

func (f *totalFn) ProcessElement(_ int, sizes func(*int64) bool, emit func(int, []byte)) {
	var total, n int64
	for sizes(&n) {
		total += n
	}
	m := binary.AppendUvarint([]byte(totalMagic), uint64(total))
	for g := range f.Groups {
		emit(g, m)
	}
}

// routeFn sends the edge batches of its group on, as they came, to one
// group for unionFn (few) when the marker's total is at most Small bytes
// (Small not negative), else to the rounds (many) in their group.
type routeFn struct {
	Small int64
}

func (f *routeFn) ProcessElement(g int, values func(*[]byte) bool, emitFew, emitMany func(int, []byte)) error {
	var batches [][]byte
	total := int64(-1)
	var b []byte
	for values(&b) {
		if rest, ok := strings.CutPrefix(string(b), totalMagic); ok {
			n, w := binary.Uvarint([]byte(rest))
			if w <= 0 {
				return errBatch
			}
			total = int64(n)
			continue
		}
		batches = append(batches, b)
	}
	if total < 0 && len(batches) > 0 {
		return errors.New("pipeline: edges without their total")
	}
	for _, b := range batches {
		if f.Small >= 0 && total <= f.Small {
			emitFew(0, b)
		} else {
			emitMany(g, b)
		}
	}
	return nil
}

// unionFn labels the nodes of a whole graph, its edges in one group, with
// the smallest node of their components: a union-find over the nodes in
// key order (union by smaller index, path halving; Tarjan 1975), whose
// roots are then the smallest keys. It emits each node's label once.
type unionFn struct {
	Packs   int
	Counter string // the name of the counter of the nodes labelled

	nodes  beam.Counter
	labels batcher[Member, *Member]
}

func (f *unionFn) Setup() { f.nodes = beam.NewCounter(metricNS, f.Counter) }

func (f *unionFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	es, err := readBatches[Edge](nil, values)
	if err != nil {
		return err
	}
	nodes := make([]string, 0, len(es))
	for _, e := range es {
		nodes = append(nodes, e.U) // edges go both ways: every node is some U
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	parent := make([]int, len(nodes))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	index := func(k string) int { i, _ := slices.BinarySearch(nodes, k); return i }
	for _, e := range es {
		a, b := find(index(e.U)), find(index(e.V))
		if a > b {
			a, b = b, a
		}
		parent[b] = a
	}
	f.nodes.Inc(ctx, int64(len(nodes)))
	for i, n := range nodes {
		f.labels.add(pack(n, f.Packs), &Member{Key: n, Root: nodes[find(i)], Label: true})
	}
	f.labels.flush(emit)
	return nil
}

package pipeline

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// The dedup pipeline decides a bucket's pairs in two rounds. A template
// family of a real crawl (1,517 near-identical pages) fills hundreds of
// buckets with the same pages, and the window of every one of them makes
// pairs: deciding them all took 1.1 M decisions where `winnow dedup`,
// whose BatchCluster skips a pair already joined, made 28 k. So the first
// round decides the chain of each bucket (each entry against its
// immediate predecessor), the components of its matches and of the
// identical signatures label the documents, and the second round decides
// only the other pairs of the window whose documents those components do
// not already join. Union-find only merges: a pair within one component
// cannot change the components (the spanning-forest argument of
// similarity/batchverify.go), so the final components, of the matches of
// both rounds and the identical signatures, are those of deciding every
// pair; and clusterFn's BatchCluster computes any verdict it lacks, so
// the lines are the same.

// twoRoundEdges decides the pairs of exactFn's entries in two rounds and
// returns the matching ones with exactFn's edges (same), and with
// keepVerdicts the verdicts of both rounds for the cluster step.
func twoRoundEdges(s beam.Scope, enc []byte, entries, same, sigs beam.PCollection, o Options, keepVerdicts bool) (edges, verdicts beam.PCollection) {
	chain, rest := bucketPairs(s, entries, o.HotBucket, o.Packs, true)
	matched1, verdicts1 := decidePairs(s.Scope("first"), enc, sigs, chain, o.Packs, keepVerdicts)
	// The first round's components count under counters of their own:
	// Run's rounds and union nodes are the final components'.
	labels := components(s, "first_", beam.Flatten(s, matched1, same), o.Rounds, o.Packs, o.SmallEdges)
	byQ := beam.ParDo(s, &joinedFn{Packs: o.Packs}, beam.GroupByKey(s, beam.Flatten(s, rest, labels)))
	left := beam.ParDo(s, &joinedFn{Packs: o.Packs, ByQ: true}, beam.GroupByKey(s, beam.Flatten(s, byQ, labels)))
	matched2, verdicts2 := decidePairs(s.Scope("second"), enc, sigs, left, o.Packs, keepVerdicts)
	return beam.Flatten(s, matched1, matched2, same), beam.Flatten(s, verdicts1, verdicts2)
}

// addRest adds the pair (p, q) of representatives that is not of a
// bucket's chain to rest, as a [Member] (Key p, Pair q) grouped by p,
// for joinedFn.
func addRest(rest *batcher[Member, *Member], p, q *Entry, packs int) {
	rest.add(pack(p.Rep, packs), &Member{Key: p.Rep, Pair: q.Rep})
}

// joinedFn drops the pairs whose documents the first round's components
// join, in two groupings of the pairs with the labels ([Member]s with
// Label). Grouped by the first document p (addRest), it sends each
// distinct pair with p's root to the second document q; grouped by q
// (ByQ), it compares that root with q's and sends on a pair of two
// components for the second decision (addPair's elements), counting the
// others (pairs_joined). A document without a label is its own root.
type joinedFn struct {
	Packs int
	ByQ   bool

	joined beam.Counter
	rest   batcher[Member, *Member]
	pairs  batcher[Join, *Join]
}

func (f *joinedFn) Setup() { f.joined = beam.NewCounter(metricNS, "pairs_joined") }

func (f *joinedFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool, emit func(int, []byte)) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	// By key, the labels first, then the pairs by their other document.
	slices.SortFunc(ms, func(a, b Member) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), -cmpBool(a.Label, b.Label), cmp.Compare(a.Pair, b.Pair))
	})
	var joined int64
	runs(ms, func(m *Member) string { return m.Key }, func(run []Member) {
		root := run[0].Key
		if run[0].Label {
			root = run[0].Root
		}
		for i := range run {
			m := &run[i]
			if m.Label || i > 0 && m.Pair == run[i-1].Pair && !run[i-1].Label {
				continue // a label, or a pair again (from another bucket)
			}
			if !f.ByQ {
				f.rest.add(pack(m.Pair, f.Packs), &Member{Key: m.Pair, Pair: m.Key, Root: root})
				continue
			}
			if m.Root == root {
				joined++
				continue
			}
			addPair(&f.pairs, m.Pair, m.Key, f.Packs)
		}
	})
	f.joined.Inc(ctx, joined)
	f.rest.flush(emit)
	f.pairs.flush(emit)
	return nil
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

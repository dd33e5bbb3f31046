package eval

import (
	"context"
	"fmt"
	"math"
	neturl "net/url"
	"time"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/similarity"
)

// IncrementalReport compares the groups the cluster service builds page
// by page with a batch clustering of the same pages (Zhu et al. §6,
// Table 1: the relative error of precision and recall of the incremental
// result against the batch one).
type IncrementalReport struct {
	Docs int `json:"docs"`
	// Incremental and Batch are pairwise precision / recall / F1 against
	// the gold pairs (grey pairs left out).
	Incremental Point `json:"incremental"`
	Batch       Point `json:"batch"`
	// RelErrPrecision and RelErrRecall are |incremental − batch| / batch.
	RelErrPrecision float64 `json:"rel_err_precision"`
	RelErrRecall    float64 `json:"rel_err_recall"`
	// IngestTime is the time of feeding every page one by one; BatchTime
	// the time of one batch clustering of all of them.
	IngestTime time.Duration `json:"ingest_ns"`
	BatchTime  time.Duration `json:"batch_ns"`
	// Steps are the cumulative ingest time at every tenth of the corpus,
	// against a batch clustering from scratch of the pages seen so far
	// (Zhu Fig. 7).
	Steps []GrowthStep `json:"steps"`
}

// GrowthStep is one point of the growth comparison.
type GrowthStep struct {
	Docs        int           `json:"docs"`
	Incremental time.Duration `json:"incremental_ns"` // ingest time of the pages since the last step
	FromScratch time.Duration `json:"from_scratch_ns"`
}

// Incremental feeds a corpus-mode set into svc one page at a time, in the
// order of docs.tsv (release order for llvm-docs), and scores the groups
// it holds at the end against the gold pairs and against a batch
// clustering with o.Decision.
func Incremental(ctx context.Context, set *Set, o Options, svc *cluster.Service) (*IncrementalReport, error) {
	if set.Mode != CorpusMode {
		return nil, fmt.Errorf("eval: incremental needs a corpus-mode set")
	}
	sigs, err := signAll(ctx, set, o)
	if err != nil {
		return nil, err
	}
	n := len(sigs)
	rep := &IncrementalReport{Docs: n}
	// The ID as the URL's path, escaped: the service keys pages by
	// canon.URL, which would drop a "#…" or tracking parameters of an ID
	// written into the URL as it is, and make two documents one page.
	url := func(i int) string {
		return (&neturl.URL{Scheme: "http", Host: "eval.invalid", Path: "/" + set.Docs[i].ID}).String()
	}
	step := max(n/10, 1)
	var since time.Duration
	for i, s := range sigs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := s.MarshalBinary()
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := svc.Ingest([]client.Page{{URL: url(i), Signature: b}}); err != nil {
			return nil, fmt.Errorf("eval: ingest %s: %w", set.Docs[i].ID, err)
		}
		d := time.Since(start)
		rep.IngestTime += d
		since += d
		if (i+1)%step == 0 || i == n-1 {
			start := time.Now()
			similarity.BatchCluster(sigs[:i+1], o.Decision, similarity.BatchOptions{WinnerVerified: true})
			rep.Steps = append(rep.Steps, GrowthStep{Docs: i + 1, Incremental: since, FromScratch: time.Since(start)})
			since = 0
		}
	}
	urls := make([]string, n)
	for i := range urls {
		urls[i] = url(i)
	}
	res, err := svc.Lookup(urls)
	if err != nil {
		return nil, err
	}
	inc := make([]int, n)
	groupIndex := map[string]int{}
	for i, r := range res {
		inc[i] = -1 - i
		if r.Group == "" {
			continue
		}
		g, ok := groupIndex[r.Group]
		if !ok {
			g = len(groupIndex)
			groupIndex[r.Group] = g
		}
		inc[i] = g
	}
	start := time.Now()
	batch := make([]int, n)
	for i := range batch {
		batch[i] = -1 - i
	}
	for ci, c := range similarity.BatchCluster(sigs, o.Decision, similarity.BatchOptions{WinnerVerified: true}) {
		for _, m := range c.Members {
			batch[m.Index] = ci
		}
	}
	rep.BatchTime = time.Since(start)
	rep.Incremental = pairScore(set, inc)
	rep.Batch = pairScore(set, batch)
	rep.RelErrPrecision = relErr(rep.Incremental.Precision, rep.Batch.Precision)
	rep.RelErrRecall = relErr(rep.Incremental.Recall, rep.Batch.Recall)
	return rep, nil
}

func relErr(got, ref float64) float64 {
	if ref == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-ref) / ref
}

// pairScore scores a clustering (a cluster label per document) pairwise
// against the gold duplicate pairs, grey pairs left out.
func pairScore(set *Set, label []int) Point {
	dup := map[uint64]bool{}
	for _, p := range set.Pairs {
		dup[PairKey(p.A, p.B)] = true
	}
	tp, fp, fn := 0, 0, 0
	n := len(label)
	for a := range n {
		for b := a + 1; b < n; b++ {
			k := PairKey(a, b)
			if set.Grey[k] {
				continue
			}
			same := label[a] == label[b]
			switch {
			case same && dup[k]:
				tp++
			case same:
				fp++
			case dup[k]:
				fn++
			}
		}
	}
	return pointOf(0, tp, fp, fn)
}

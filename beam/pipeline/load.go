package pipeline

import (
	"cmp"
	"context"
	"slices"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"

	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/similarity"
)

// loadDocs loads every signed document of numbered (the documents keyed by
// rank key, in batches) into the cluster service at
// baseURL, as `winnow dedup -cluster` does: with offline.Loader, in input
// order. The service clusters incrementally, so the order of ingest
// decides its groups, and it writes one batch at a time (its replicas
// included: a writer lease); the load therefore runs on one worker, which
// sorts the documents by input position and sends them in batches. It
// holds every signature while it sorts (about 0.7 KB a page).
//
// signer is the fingerprint of the signing settings (sent with each
// batch, so that the service refuses signatures of other settings).
func loadDocs(s beam.Scope, numbered beam.PCollection, baseURL string, maxBatch int, signer string) {
	s = s.Scope("load")
	beam.ParDo0(s, &loadFn{URL: baseURL, MaxBatch: maxBatch, Signer: signer}, beam.GroupByKey(s, beam.ParDo(s, oneGroup, numbered)))
}

// oneGroup puts every batch in group 0.
func oneGroup(_ int, batch []byte) (int, []byte) { return 0, batch }

// loadFn sends the documents to the cluster service.
type loadFn struct {
	URL      string
	MaxBatch int
	Signer   string
}

// Counter names of the load: a page loaded, by the service's status, or
// not, by reason.
const (
	loadedPrefix    = "load_status_"
	notLoadedPrefix = "load_skipped_"
)

func (f *loadFn) ProcessElement(ctx context.Context, _ int, values func(*[]byte) bool) error {
	ms, err := readBatches[Member](nil, values)
	if err != nil {
		return err
	}
	slices.SortFunc(ms, func(a, b Member) int {
		return cmp.Or(cmp.Compare(a.Doc.Input, b.Doc.Input), cmp.Compare(a.Doc.Shard, b.Doc.Shard), cmp.Compare(a.Doc.Pos, b.Doc.Pos))
	})
	l, err := offline.NewLoader(f.URL, f.MaxBatch, f.Signer)
	if err != nil {
		return err
	}
	l.OnSkip = func(page, reason string, err error) {
		if err != nil {
			log.Warnf(ctx, "dedup_load_skip: %s: %v", page, err)
		}
	}
	for i := range ms {
		d := &ms[i].Doc
		var sig similarity.Signature
		if err := sig.UnmarshalBinary(d.Sig); err != nil {
			return err
		}
		if err := l.Add(ctx, d.Key, d.URL, d.Sig, sig.Empty()); err != nil {
			return err
		}
	}
	if err := l.Flush(ctx); err != nil {
		return err
	}
	for status, n := range l.Result.Statuses {
		beam.NewCounter(metricNS, loadedPrefix+status).Inc(ctx, int64(n))
	}
	for reason, n := range l.Result.Skipped {
		beam.NewCounter(metricNS, notLoadedPrefix+reason).Inc(ctx, int64(n))
	}
	return nil
}

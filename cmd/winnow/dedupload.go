package main

import (
	"context"

	"github.com/winnow-search/winnow/offline"
	"github.com/winnow-search/winnow/options"
)

// ingestDocs loads signed documents into a running cluster service, in
// input order, with offline.Loader (winnow-beam dedup -cluster loads the
// same way).
func ingestDocs(ctx context.Context, e *env, baseURL string, docs []signedDoc) (offline.LoadResult, error) {
	l, err := offline.NewLoader(baseURL, e.cfg.Cluster.MaxBatch, options.BatchSigner(e.cfg).Fingerprint())
	if err != nil {
		return offline.LoadResult{}, err
	}
	l.OnSkip = func(page, reason string, err error) {
		if err != nil {
			e.log.Warn("dedup_load_skip", "url", page, "err", err)
			return
		}
		e.log.Debug("dedup_load_skip", "page", page, "reason", reason)
	}
	for _, d := range docs {
		var sig []byte
		if !d.sig.Empty() {
			if sig, err = d.sig.MarshalBinary(); err != nil {
				return l.Result, err
			}
		}
		if err := l.Add(ctx, d.key, d.url, sig, d.sig.Empty()); err != nil {
			return l.Result, err
		}
	}
	err = l.Flush(ctx)
	return l.Result, err
}

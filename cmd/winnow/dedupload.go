package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/client"
)

// loadResult is what dedup -backend did: pages by the service's status,
// and pages not loaded by reason.
type loadResult struct {
	Statuses map[string]int
	Skipped  map[string]int
}

// ingestDocs loads signed documents into a running cluster service, in
// batches. A document without a URL goes under one made from its key
// (http://dedup.invalid/<key>) so offline corpora load too. One bad page
// never stops the load: a page whose URL the service would refuse, or that
// the service refuses (a 4xx naming the item), is left out and counted by
// reason, and the rest of its batch is sent again. Only an unreachable or
// failing service (no item named) ends the load with an error.
func ingestDocs(ctx context.Context, e *env, baseURL string, docs []signedDoc) (loadResult, error) {
	res := loadResult{Statuses: map[string]int{}, Skipped: map[string]int{}}
	cl, err := client.New(baseURL, client.Options{MaxBatch: e.cfg.Backend.MaxBatch})
	if err != nil {
		return res, err
	}
	const batch = 500
	for start := 0; start < len(docs); start += batch {
		var pages []client.Page
		for _, d := range docs[start:min(start+batch, len(docs))] {
			if d.sig.Empty() {
				res.Skipped["too short to compare"]++
				continue
			}
			u := pageURL(d)
			if reason := loadableURL(u); reason != "" {
				res.Skipped[reason]++
				e.log.Debug("dedup_load_skip", "doc", d.id, "reason", reason)
				continue
			}
			b, err := d.sig.MarshalBinary()
			if err != nil {
				return res, err
			}
			pages = append(pages, client.Page{URL: u, Signature: b})
		}
		for len(pages) > 0 {
			out, err := cl.Ingest(ctx, pages)
			var ae *client.APIError
			if errors.As(err, &ae) && ae.Item >= 0 && ae.Item < len(pages) && ae.Status/100 == 4 {
				// The service validates a batch before it applies any
				// of it: drop the page it names and send the rest.
				res.Skipped["refused by the service"]++
				e.log.Warn("dedup_load_skip", "url", pages[ae.Item].URL, "err", err)
				pages = slices.Delete(pages, ae.Item, ae.Item+1)
				continue
			}
			if err != nil {
				return res, fmt.Errorf("ingest into %s: %w", baseURL, err)
			}
			for _, r := range out {
				res.Statuses[r.Status]++
			}
			break
		}
	}
	return res, nil
}

// loadableURL returns why the cluster service would refuse u as a page
// URL, or "" if it takes it (the same checks as cluster.Service).
func loadableURL(u string) string {
	if len(u) > cluster.DefaultMaxURL {
		return "URL too long"
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return "not an absolute http(s) URL"
	}
	return ""
}

// pageURL is the URL a document is known by in the cluster service.
func pageURL(d signedDoc) string {
	if d.url != "" {
		return d.url
	}
	return (&url.URL{Scheme: "http", Host: "dedup.invalid", Path: "/" + d.key}).String()
}

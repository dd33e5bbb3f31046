package offline

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/client"
)

// LoadBatch is the number of pages a [Loader] sends in one ingest call.
const LoadBatch = 500

// LoadResult is what a load did: pages by the service's status, and pages
// not loaded by reason.
type LoadResult struct {
	Statuses map[string]int
	Skipped  map[string]int
}

// Loader loads signed documents into a running cluster service, in
// batches of [LoadBatch], in the order they are added (the service
// clusters incrementally, so the order decides the groups: both offline
// jobs add documents in input order). A document without a URL goes under
// one made from its key (http://dedup.invalid/<key>) so offline corpora
// load too. One bad page never stops the load: a page whose URL the
// service would refuse, or that the service refuses (a 4xx naming the
// item), is left out and counted by reason, and the rest of its batch is
// sent again. Only an unreachable or failing service (no item named) ends
// the load with an error. A Loader is not safe for concurrent use.
type Loader struct {
	// Result counts what was loaded and what was not.
	Result LoadResult
	// OnSkip, if set, is told of each page left out: its key or URL, the
	// reason, and the service's error for a refused page (else nil).
	OnSkip func(page, reason string, err error)

	cl      *client.Client
	baseURL string
	pending []client.Page
}

// NewLoader returns a Loader for the cluster service at baseURL, which
// takes at most maxBatch pages a call (backend.max_batch; 0: the
// client's default). signer is the fingerprint of the settings that
// signed the documents (page.Signer.Fingerprint), sent with each batch
// so that the service refuses them if its store holds signatures of
// other settings; "" sends none.
func NewLoader(baseURL string, maxBatch int, signer string) (*Loader, error) {
	cl, err := client.New(baseURL, client.Options{MaxBatch: maxBatch, SignerFingerprint: signer})
	if err != nil {
		return nil, err
	}
	return &Loader{
		Result: LoadResult{Statuses: map[string]int{}, Skipped: map[string]int{}},
		cl:     cl, baseURL: baseURL,
	}, nil
}

// Add queues the document with key, URL (may be empty) and encoded
// signature sig; empty reports a signature too short to compare, which
// is not loaded. A full batch is sent before Add returns.
func (l *Loader) Add(ctx context.Context, key, pageURL string, sig []byte, empty bool) error {
	if empty {
		l.skip(key, "too short to compare", nil)
		return nil
	}
	if pageURL == "" {
		pageURL = (&url.URL{Scheme: "http", Host: "dedup.invalid", Path: "/" + key}).String()
	}
	if reason := LoadableURL(pageURL); reason != "" {
		l.skip(pageURL, reason, nil)
		return nil
	}
	l.pending = append(l.pending, client.Page{URL: pageURL, Signature: sig})
	if len(l.pending) >= LoadBatch {
		return l.Flush(ctx)
	}
	return nil
}

// loadRetries are the waits before a batch is sent again after the
// service could not be reached or failed (ErrUnavailable): about 7.5 s
// in all, for a service restarting or a connection reset.
var loadRetries = []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second}

// Flush sends the queued pages. A batch the service may not have
// received whole, or whose answer was lost, is sent again (ingest is
// idempotent: a page already applied comes back "stayed"), after each
// of loadRetries.
func (l *Loader) Flush(ctx context.Context) error {
	pages := l.pending
	l.pending = nil
	retries := loadRetries
	for len(pages) > 0 {
		out, err := l.cl.Ingest(ctx, pages)
		for _, r := range out {
			l.Result.Statuses[r.Status]++
		}
		// Ingest answers the batches before the one that failed, and
		// names a refused page by its place in pages.
		done := len(out)
		pages = pages[done:]
		var ae *client.APIError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &ae) && ae.Item >= done && ae.Item-done < len(pages) && ae.Status/100 == 4:
			// The service validates a batch before it applies any of
			// it: drop the page it names and send the rest.
			i := ae.Item - done
			l.skip(pages[i].URL, "refused by the service", err)
			pages = slices.Delete(pages, i, i+1)
		case errors.Is(err, client.ErrUnavailable) && len(retries) > 0 && ctx.Err() == nil:
			select {
			case <-ctx.Done():
				return fmt.Errorf("ingest into %s: %w", l.baseURL, err)
			case <-time.After(retries[0]):
			}
			retries = retries[1:]
		default:
			return fmt.Errorf("ingest into %s: %w", l.baseURL, err)
		}
	}
	return nil
}

func (l *Loader) skip(page, reason string, err error) {
	l.Result.Skipped[reason]++
	if l.OnSkip != nil {
		l.OnSkip(page, reason, err)
	}
}

// LoadableURL returns why the cluster service would refuse u as a page
// URL, or "" if it takes it (the same checks as cluster.Service).
func LoadableURL(u string) string {
	if len(u) > cluster.DefaultMaxURL {
		return "URL too long"
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return "not an absolute http(s) URL"
	}
	return ""
}

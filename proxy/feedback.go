package proxy

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/similarity"
)

// Batching of the signatures fed back to the cluster service.
const (
	feedQueue   = 4096            // signatures waiting; past it they are dropped
	feedBatch   = 256             // pages per ingest request
	feedEvery   = time.Second     // a partial batch waits at most this long
	feedTimeout = 5 * time.Second // one ingest request
)

// ingester is what the feed-back needs of the cluster service
// (cluster/client.Client).
type ingester interface {
	Ingest(ctx context.Context, pages []client.Page) ([]client.IngestResult, error)
}

// feeder sends the signatures the proxy computes (Options.ClusterFeed) to
// the cluster service in the background, in batches, so the service learns
// the pages its index pipeline has not fed it yet. It never holds up a
// request: when the queue is full a signature is dropped and counted.
type feeder struct {
	cl    ingester
	log   *slog.Logger
	m     *metrics
	queue chan client.Page
	done  chan struct{}
	life  context.Context
	stop  context.CancelFunc

	mu     sync.RWMutex // guards closed against sends on a closed queue
	closed bool
}

func newFeeder(cl ingester, log *slog.Logger, m *metrics) *feeder {
	life, stop := context.WithCancel(context.Background())
	f := &feeder{cl: cl, log: log, m: m, queue: make(chan client.Page, feedQueue), done: make(chan struct{}), life: life, stop: stop}
	go f.run()
	return f
}

// add queues the signature of the page at url (a canonical URL, as the
// proxy looks pages up).
func (f *feeder) add(url string, sig *similarity.Signature) {
	b, err := sig.MarshalBinary()
	if err != nil {
		f.log.Debug("cluster_feed_encode", "url", url, "err", err)
		return
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return
	}
	select {
	case f.queue <- client.Page{URL: url, Signature: b}:
	default:
		f.m.feed("dropped", 1)
	}
}

func (f *feeder) run() {
	defer close(f.done)
	tick := time.NewTicker(feedEvery)
	defer tick.Stop()
	batch := make([]client.Page, 0, feedBatch)
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(f.life, feedTimeout)
		_, err := f.cl.Ingest(ctx, batch)
		cancel()
		if err != nil {
			f.m.feed("error", len(batch))
			f.log.Warn("cluster_feed_failed", "pages", len(batch), "err", err)
		} else {
			f.m.feed("sent", len(batch))
		}
		batch = batch[:0]
	}
	for {
		select {
		case p, ok := <-f.queue:
			if !ok {
				flush()
				return
			}
			if batch = append(batch, p); len(batch) >= feedBatch {
				flush()
			}
		case <-tick.C:
			flush()
		}
	}
}

// close sends what is queued and stops the feeder; past ctx, the send in
// flight is abandoned.
func (f *feeder) close(ctx context.Context) error {
	f.mu.Lock()
	if !f.closed {
		f.closed = true
		close(f.queue)
	}
	f.mu.Unlock()
	defer f.stop()
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		f.stop()
		<-f.done
		return ctx.Err()
	}
}

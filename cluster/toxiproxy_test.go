package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/internal/toxiproxy"
)

// TestRedisNetworkFaults runs the service on a Redis Cluster behind
// Toxiproxy and breaks the network under batches: every node's answers
// reset after the command ran, and requests cut after some bytes (a
// pipeline of the batch's records half sent).
// Each faulty batch fails within the client's bounds or succeeds; once
// the network heals the next batch is applied at once (replaying a
// journal the failed one left), the store is consistent, and every
// acknowledged page is known. The next batch waited out the lease's TTL
// (30 s by default) after a reset: the lease script had run, its answer
// was lost, and go-redis's retry of it found the lease held; so after a
// release that did not reach Redis.
func TestRedisNetworkFaults(t *testing.T) {
	tp := toxiproxy.Start(t)
	addrs, proxies := redisClusterThrough(t, tp)
	const ttl = 8 * time.Second
	st, err := OpenRedis(addrs, RedisOptions{LeaseTTL: ttl, LeaseWait: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s, err := New(st, Options{SampleSize: 20})
	if err != nil {
		t.Fatal(err)
	}
	var pages []client.Page
	for _, p := range signedSample(t) {
		pages = append(pages, client.Page{URL: p.url, Signature: p.sig})
	}
	for i, p := range signedSample(t) {
		if i%3 == 0 {
			pages = append(pages, client.Page{URL: p.url + "?copy", Signature: p.sig})
		}
	}
	next := 0
	batch := func() []client.Page {
		b := pages[next:min(next+8, len(pages))]
		next += len(b)
		return b
	}
	acked := map[string]bool{}
	ingest := func(what string, b []client.Page) error {
		start := time.Now()
		_, err := s.Ingest(b)
		t.Logf("%s: %d pages, %v: %v", what, len(b), time.Since(start).Round(time.Millisecond), err)
		if err == nil {
			for _, p := range b {
				acked[p.URL] = true
			}
		}
		return err
	}
	if err := ingest("before the faults", batch()); err != nil {
		t.Fatal(err)
	}
	faults := []toxiproxy.Toxic{
		{Name: "reset", Type: "reset_peer", Attributes: map[string]any{"timeout": 0}},
		{Name: "cut-600", Type: "limit_data", Stream: "upstream", Attributes: map[string]any{"bytes": 600}},
		{Name: "cut-3000", Type: "limit_data", Stream: "upstream", Attributes: map[string]any{"bytes": 3000}},
		{Name: "cut-9000", Type: "limit_data", Stream: "upstream", Attributes: map[string]any{"bytes": 9000}},
	}
	for _, x := range faults {
		for _, p := range proxies {
			p.Add(t, x)
		}
		start := time.Now()
		ingest(x.Name, batch())
		if took := time.Since(start); took > 40*time.Second {
			t.Errorf("%s: the batch took %v", x.Name, took)
		}
		for _, p := range proxies {
			p.Clear(t)
		}
		start = time.Now()
		if err := ingest("after "+x.Name, batch()); err != nil {
			t.Errorf("after %s healed: %v", x.Name, err)
		}
		if took := time.Since(start); took > ttl/2 {
			t.Errorf("after %s healed, the next batch took %v (lease TTL %v)", x.Name, took, ttl)
		}
		checkConsistent(t, st)
	}
	// A release that never reached Redis (each connection reset as it
	// was sent) leaves the lease held: the store's next lease takes it
	// back.
	ctx := context.Background()
	if _, err := st.lease(ctx, st.applied()); err != nil {
		t.Fatal(err)
	}
	for _, p := range proxies {
		p.Add(t, toxiproxy.Toxic{Name: "reset-release", Type: "reset_peer", Stream: "upstream", Attributes: map[string]any{"timeout": 0}})
	}
	if err := st.release(ctx); err == nil {
		t.Errorf("release through resets: no error")
	}
	for _, p := range proxies {
		p.Clear(t)
	}
	start := time.Now()
	if _, err := st.lease(ctx, st.applied()); err != nil {
		t.Fatal(err)
	} else if took := time.Since(start); took > ttl/2 {
		t.Errorf("lease after a lost release took %v (TTL %v)", took, ttl)
	}
	if err := st.release(ctx); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for u := range acked {
		urls = append(urls, u)
	}
	res, err := s.Lookup(urls)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Known {
			t.Errorf("%s acknowledged, then unknown", r.URL)
		}
	}
}

// scanPages lists the page records of a Redis store, for the consistency
// check (storePages): a test's method, as the service itself never lists
// a Redis store's pages.
func (s *RedisStore) scanPages(fn func(url, rec []byte) error) error {
	return eachRecord(s, "w:p:", func(url string) ([]byte, bool, error) { return s.get(redisPage(url)) },
		func(url string, rec []byte) error { return fn([]byte(url), rec) })
}

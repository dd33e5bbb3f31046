package proxy

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	service "github.com/winnow-search/winnow/cluster"
	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/page"
)

// TestClusterService runs the proxy with the cluster service (winnow
// backend) healthy, stopped, slow and failing. The search results hold
// the Benchmarking page of two releases, reachable, and a third release
// whose page cannot be fetched: only the service knows it is a duplicate.
// In every state the proxy answers every query.
func TestClusterService(t *testing.T) {
	bodies := map[string][]byte{}
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		bodies[strings.TrimPrefix(d.ID, "sample://llvm/")] = d.Body
	}
	var pages *httptest.Server
	pages = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/_search"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"hits":{"total":{"value":4,"relation":"eq"},"hits":[`+
				`{"_id":"a","_source":{"url":"%[1]s/13/Benchmarking"}},{"_id":"b","_source":{"url":"%[1]s/14/Benchmarking"}},`+
				`{"_id":"c","_source":{"url":"%[1]s/gone/Benchmarking"}},{"_id":"d","_source":{"url":"%[1]s/13/CodeReview"}}]}}`, pages.URL)
		case bodies[strings.TrimPrefix(r.URL.Path, "/")] != nil:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(bodies[strings.TrimPrefix(r.URL.Path, "/")])
		default:
			http.NotFound(w, r)
		}
	}))
	defer pages.Close()

	// The service knows the unreachable page as a verified duplicate of
	// release 13 (it was crawled when it was up).
	svc, err := service.New(service.NewMemStore(), service.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	var ingest []client.Page
	for _, p := range []struct{ url, page string }{
		{pages.URL + "/13/Benchmarking", "13/Benchmarking"},
		{pages.URL + "/gone/Benchmarking", "15/Benchmarking"},
	} {
		res, err := page.Signer{}.Sign(bodies[p.page], "text/html")
		if err != nil {
			t.Fatal(err)
		}
		b, err := res.Sig.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		ingest = append(ingest, client.Page{URL: p.url, Signature: b, Popularity: 1})
	}
	if res, err := svc.Ingest(ingest); err != nil || res[1].Group != res[0].Group {
		t.Fatalf("service ingest: %+v, %v; want one group", res, err)
	}

	var state atomic.Value
	state.Store("up")
	api := svc.Handler()
	svcHTTP := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch state.Load() {
		case "slow":
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
				return
			}
		case "error":
			w.WriteHeader(500)
			io.WriteString(w, `{"error":"store failure"}`)
			return
		case "garbage":
			io.WriteString(w, `{"results": [`)
			return
		}
		api.ServeHTTP(w, r)
	}))
	defer svcHTTP.Close()
	cl, err := client.New(svcHTTP.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(pages.URL)}, Cluster: cl,
		ClusterTimeout: 100 * time.Millisecond, Budget: 2 * time.Second})

	marks := func(t *testing.T) (gone string) {
		t.Helper()
		start := time.Now()
		code, body := get(t, base+"/llvm/_search?q=x&size=4", "X-Winnow-Mode", "annotate")
		if code != 200 {
			t.Fatalf("status %d: %s", code, body)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("answer took %v", d)
		}
		a := decodeES(t, body)
		if len(a.Hits.Hits) != 4 {
			t.Fatalf("%d hits, want 4", len(a.Hits.Hits))
		}
		if h := a.Hits.Hits[1].Winnow; h == nil || h.Relation != "duplicate" {
			t.Errorf("release 14 (fetched online) is not marked a duplicate: %+v", h)
		}
		if h := a.Hits.Hits[2].Winnow; h != nil {
			return h.Explain
		}
		return ""
	}
	t.Run("up", func(t *testing.T) {
		if got := marks(t); !strings.Contains(got, "cluster service") {
			t.Errorf("the unreachable page: %q, want marked by the cluster service", got)
		}
	})
	for _, st := range []string{"slow", "error", "garbage"} {
		t.Run(st, func(t *testing.T) {
			state.Store(st)
			if got := marks(t); got != "" {
				t.Errorf("service %s: the unreachable page is marked %q, want unmarked (no help)", st, got)
			}
		})
	}
	t.Run("stopped", func(t *testing.T) {
		svcHTTP.Close()
		if got := marks(t); got != "" {
			t.Errorf("service stopped: the unreachable page is marked %q", got)
		}
	})
}

// TestClusterFeed runs the proxy with ClusterFeed: the pages it fetches
// and signs for a query reach the cluster service, which then knows them
// and groups the releases of one page.
func TestClusterFeed(t *testing.T) {
	d := startDemo(t, demo.Options{})
	svc, err := service.New(service.NewMemStore(), service.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	svcHTTP := httptest.NewServer(svc.Handler())
	defer svcHTTP.Close()
	cl, err := client.New(svcHTTP.URL, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Cluster: cl, ClusterFeed: true, Budget: 2 * time.Second})
	if code, body := get(t, base+"/llvm/_search?q=benchmarking&size=10"); code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	s.ref.wait()
	// The hits of the same query as the backend gives them.
	_, raw := get(t, base+"/llvm/_search?q=benchmarking&size=10&winnow_mode=off")
	p, err := s.transp.light.Parse([]byte(raw), "application/json")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range p.Results {
		k, err := s.ref.keys.key(r.URL)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if len(keys) < 3 {
		t.Fatalf("%d pages signed, want the Benchmarking page of several releases", len(keys))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := svc.Lookup(keys)
		if err != nil {
			t.Fatal(err)
		}
		known, dups := 0, 0
		for _, r := range res {
			if r.Known {
				known++
			}
			if r.Known && !r.IsWinner {
				dups++
			}
		}
		if known == len(keys) {
			if dups == 0 {
				t.Errorf("the service knows the %d pages but groups none of the releases", known)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5s the service knows %d of the %d pages the proxy signed", known, len(keys))
		}
		time.Sleep(50 * time.Millisecond)
	}
	var m strings.Builder
	s.m.write(&m)
	if !strings.Contains(m.String(), `winnow_cluster_feed_pages_total{outcome="sent"}`) {
		t.Errorf("/metrics lacks the pages sent to the cluster service:\n%s", m.String())
	}
}

// TestClusterFeedNeedsService checks that ClusterFeed without a service is
// refused at start.
func TestClusterFeedNeedsService(t *testing.T) {
	if _, err := New(Options{Engines: []Engine{esEngine("http://127.0.0.1:1")}, ClusterFeed: true}); err == nil {
		t.Error("New with ClusterFeed and no Cluster: nil error")
	}
}

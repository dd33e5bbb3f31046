package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
)

// lockedBuffer is a bytes.Buffer safe for the concurrent writes of a
// logger.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startWarnLogged serves a proxy with o as it is (no network allowed
// but o's) on loopback, its warnings logged to the buffer returned.
func startWarnLogged(t *testing.T, o Options) (*Server, string, *lockedBuffer) {
	t.Helper()
	logs := new(lockedBuffer)
	o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Shutdown(ctx)
	})
	return s, "http://" + ln.Addr().String(), logs
}

// TestInternalPagesSaid runs winnow in front of an engine whose result
// pages live on loopback, which the SSRF guard refuses by default (an
// intranet search engine): the refusals are warned about once, naming
// serve.fetch.allow, counted in /metrics, and noted on the search page.
func TestInternalPagesSaid(t *testing.T) {
	d := startDemo(t, demo.Options{})
	s, base, logs := startWarnLogged(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 2 * time.Second})
	for _, q := range []string{"benchmark", "code+review", "tutorial"} {
		if code, _ := get(t, base+"/llvm/_search?q="+q+"&size=3"); code != 200 {
			t.Fatalf("search %s: %d", q, code)
		}
	}
	_, page := get(t, base+"/_winnow/search.json?q=benchmark")
	var v struct{ Notice string }
	if err := json.Unmarshal([]byte(page), &v); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Notice, "results not refined: their addresses are internal") {
		t.Errorf("search page notice %q, want the internal addresses named", v.Notice)
	}
	s.ref.wait()
	if n := strings.Count(logs.String(), "result_pages_internal"); n != 1 || !strings.Contains(logs.String(), "serve.fetch.allow") {
		t.Errorf("%d warnings about internal pages, want 1 naming serve.fetch.allow:\n%s", n, logs.String())
	}
	_, m := get(t, base+"/metrics")
	if !strings.Contains(m, "winnow_results_internal_total ") || strings.Contains(m, "winnow_results_internal_total 0\n") {
		t.Errorf("/metrics does not count the internal pages:\n%s", m)
	}
}

// TestAnswerBytesBound sets the bound on answers in flight below one
// answer: every answer then passes through unrefined, as the engine gives
// it for the client's own request, and none is lost.
func TestAnswerBytesBound(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, AnswerBytesInFlight: 100})
	_, direct := get(t, d.URL()+"/llvm/_search?q=benchmark&size=3")
	code, body := get(t, base+"/llvm/_search?q=benchmark&size=3")
	a := decodeES(t, body)
	if code != 200 || len(a.Hits.Hits) != 3 || strings.Contains(body, "_winnow") {
		t.Errorf("over the bound: %d, %d hits, marked %v; want the engine's own 3 hits", code, len(a.Hits.Hits), strings.Contains(body, "_winnow"))
	}
	if want := decodeES(t, direct); a.Hits.Total != want.Hits.Total {
		t.Errorf("total %+v, want the engine's %+v", a.Hits.Total, want.Hits.Total)
	}
}

// TestBadPortPagesNotInternal runs winnow in front of an engine whose
// result pages are on loopback, allowed, but on a port browsers refuse
// (10080, else another unprivileged one of the Fetch standard's bad
// ports): the guard refuses them on every network, so they are not said
// to be internal, and serve.fetch.allow, which cannot open them, is not
// named.
func TestBadPortPagesNotInternal(t *testing.T) {
	var d *demo.Server
	for _, port := range []string{"10080", "6665", "6666", "6667", "6668", "6669", "6679", "6697", "6000", "5060"} {
		var err error
		if d, err = tryDemo(t, "127.0.0.1:"+port, demo.Options{}); err == nil {
			break
		}
	}
	if d == nil {
		t.Skip("no unprivileged bad port free on loopback")
	}
	o := Options{Engines: []Engine{esEngine(d.URL())}, Budget: 2 * time.Second}
	o.Fetch.Allow = loopback
	s, base, logs := startWarnLogged(t, o)
	if code, _ := get(t, base+"/llvm/_search?q=benchmark&size=3"); code != 200 {
		t.Fatalf("search: %d", code)
	}
	_, page := get(t, base+"/_winnow/search.json?q=benchmark")
	var v struct{ Notice string }
	if err := json.Unmarshal([]byte(page), &v); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(v.Notice, "internal") {
		t.Errorf("search page notice %q, want no internal addresses named", v.Notice)
	}
	s.ref.wait()
	if strings.Contains(logs.String(), "result_pages_internal") {
		t.Errorf("warned about internal pages on a bad port:\n%s", logs.String())
	}
	if st := s.fetcher.Stats(); st.Blocked == 0 {
		t.Errorf("fetch stats %+v: no page refused; want the bad port refused", st)
	}
}

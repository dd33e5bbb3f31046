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

// TestInternalPagesSaid runs winnow in front of an engine whose result
// pages live on loopback, which the SSRF guard refuses by default (an
// intranet search engine): the refusals are warned about once, naming
// serve.fetch.allow, counted in /metrics, and noted on the search page.
func TestInternalPagesSaid(t *testing.T) {
	d := startDemo(t, demo.Options{})
	var logs lockedBuffer
	s, err := New(Options{Engines: []Engine{esEngine(d.URL())}, Budget: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
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
	base := "http://" + ln.Addr().String()
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

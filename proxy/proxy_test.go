package proxy

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/proxy/ui"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// startDemo starts the demo search engine over the embedded sample.
func startDemo(t testing.TB, o demo.Options) *demo.Server {
	t.Helper()
	return startDemoWith(t, "127.0.0.1:0", o)
}

// startDemoAt starts the demo search engine on addr.
func startDemoAt(t testing.TB, addr string) *demo.Server {
	t.Helper()
	return startDemoWith(t, addr, demo.Options{})
}

func startDemoWith(t testing.TB, addr string, o demo.Options) *demo.Server {
	t.Helper()
	srv, err := tryDemo(t, addr, o)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// tryDemo starts the demo engine on addr, or reports why it cannot listen
// there.
func tryDemo(t testing.TB, addr string, o demo.Options) (*demo.Server, error) {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	eng, err := demo.New(sample.Docs(), o)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := demo.Start(addr, eng)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { srv.Close() })
	return srv, nil
}

// startProxy starts a proxy with o on loopback and returns its base URL.
func startProxy(t testing.TB, o Options) (*Server, string) {
	t.Helper()
	s, ln := newProxy(t, o)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		<-done
	})
	return s, "http://" + ln.Addr().String()
}

// newProxy builds a proxy with o (loopback fetches allowed, logs
// discarded unless -v) and a loopback listener for it, not yet served.
func newProxy(t testing.TB, o Options) (*Server, net.Listener) {
	t.Helper()
	o.Logger = slog.New(slog.DiscardHandler)
	if testing.Verbose() {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	o.Fetch.Allow = append(o.Fetch.Allow, loopback...)
	if o.CursorKey == nil {
		o.CursorKey = testCursorKey
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return s, ln
}

// behindDemo starts a loopback server that passes each request on to the
// demo engine d and has answer write d's answer to the client, as it
// likes: a backend that misbehaves, or one whose answers a test varies.
func behindDemo(t testing.TB, d *demo.Server, answer func(w http.ResponseWriter, resp *http.Response)) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(d.URL() + r.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		answer(w, resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func engineConfig(kind, path string) engine.Config { return engine.Config{Kind: kind, Path: path} }

func esEngine(url string) Engine {
	return Engine{Name: "es", URL: url, Adapter: engine.Config{Kind: "elasticsearch", Path: "/llvm/_search"}, Timeout: 2 * time.Second}
}

func get(t testing.TB, url string, header ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// esAnswer is the part of an Elasticsearch answer the tests read.
type esAnswer struct {
	Took int `json:"took"`
	Hits struct {
		Total struct {
			Value    int
			Relation string
		} `json:"total"`
		Hits []struct {
			ID        string `json:"_id"`
			InnerHits struct {
				Winnow struct {
					Hits struct {
						Hits []json.RawMessage `json:"hits"`
					} `json:"hits"`
				} `json:"winnow"`
			} `json:"inner_hits"`
			Winnow *struct {
				Cluster  string `json:"cluster"`
				Relation string `json:"relation"`
				Explain  string `json:"explain"`
			} `json:"_winnow"`
		} `json:"hits"`
	} `json:"hits"`
}

func decodeES(t testing.TB, body string) esAnswer {
	t.Helper()
	var a esAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("answer is not Elasticsearch JSON: %v\n%s", err, body)
	}
	return a
}

// page returns the page name of a demo hit ID "sample://llvm/13/Benchmarking".
func pageOf(id string) string {
	_, p, _ := strings.Cut(strings.TrimPrefix(id, "sample://llvm/"), "/")
	return p
}

func TestTransparentModes(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	q := base + "/llvm/_search?q=benchmark+tips+code+review&size=4"

	_, raw := get(t, d.URL()+"/llvm/_search?q=benchmark+tips+code+review&size=4")
	plain := decodeES(t, raw)
	dupsInPlain := 0
	seen := map[string]bool{}
	for _, h := range plain.Hits.Hits {
		if seen[pageOf(h.ID)] {
			dupsInPlain++
		}
		seen[pageOf(h.ID)] = true
	}
	if dupsInPlain == 0 {
		t.Fatalf("the demo's plain answer has no duplicates to remove: %s", raw)
	}

	// removePage checks a remove-mode answer: a full page, and no page
	// shown twice unless remove mode kept it and says why. It returns the
	// answer and the number of such kept repeats.
	removePage := func(t *testing.T, params string) (esAnswer, int) {
		code, body := get(t, q+params)
		a := decodeES(t, body)
		if code != 200 || len(a.Hits.Hits) != 4 {
			t.Fatalf("remove: status %d, %d hits; want 200 and a full page of 4", code, len(a.Hits.Hits))
		}
		pages, kept := map[string]bool{}, 0
		for _, h := range a.Hits.Hits {
			if pages[pageOf(h.ID)] {
				if !keptAnnotated(h.Winnow) {
					t.Errorf("remove: page %s shown twice without saying why (%s): %+v", pageOf(h.ID), h.ID, h.Winnow)
				}
				kept++
			}
			pages[pageOf(h.ID)] = true
		}
		return a, kept
	}
	t.Run("remove keeps what is not content-equivalent", func(t *testing.T) {
		// The same page of two releases differs in version strings: at
		// the default confidence (0.9) the content-equivalence decision
		// accepts few of them; the others stay, annotated.
		if _, kept := removePage(t, "&winnow_mode=remove"); kept == 0 {
			t.Error("remove at the default confidence kept no near-duplicate of another release")
		}
	})
	t.Run("remove", func(t *testing.T) {
		a, _ := removePage(t, "&winnow_mode=remove&winnow_min_confidence=0.5")
		// Duplicates were dropped from the page, yet the total is the
		// engine's own: the documents matching, whatever the mode.
		if tot := a.Hits.Total; tot != plain.Hits.Total {
			t.Errorf("remove: total %+v, want the engine's own %+v", tot, plain.Hits.Total)
		}
	})
	t.Run("group", func(t *testing.T) {
		_, body := get(t, q) // group is the default
		a := decodeES(t, body)
		nested := 0
		for _, h := range a.Hits.Hits {
			nested += len(h.InnerHits.Winnow.Hits.Hits)
		}
		if nested == 0 || len(a.Hits.Hits) != 4 {
			t.Errorf("group: %d hits, %d nested duplicates; want 4 winners with duplicates nested", len(a.Hits.Hits), nested)
		}
	})
	t.Run("annotate", func(t *testing.T) {
		_, body := get(t, q, "X-Winnow-Mode", "annotate")
		a := decodeES(t, body)
		explained := 0
		for _, h := range a.Hits.Hits {
			if h.Winnow != nil && strings.HasPrefix(h.Winnow.Explain, "duplicate: ") {
				explained++
			}
		}
		if explained == 0 {
			t.Errorf("annotate: no hit explains its duplicate: %s", body)
		}
	})
	t.Run("off", func(t *testing.T) {
		_, body := get(t, q+"&winnow_mode=off")
		if a := decodeES(t, body); len(a.Hits.Hits) != 4 || a.Hits.Hits[0].Winnow != nil {
			t.Errorf("off: the answer was changed: %s", body)
		}
	})
	t.Run("pages stay consistent", func(t *testing.T) {
		seen := map[string]string{}
		for from := 0; from < 12; from += 4 {
			_, body := get(t, fmt.Sprintf("%s/llvm/_search?q=benchmark+tips+code+review+getting+started&size=4&from=%d&winnow_mode=remove&winnow_min_confidence=0.5", base, from))
			for _, h := range decodeES(t, body).Hits.Hits {
				if prev, ok := seen[pageOf(h.ID)]; ok && !keptAnnotated(h.Winnow) {
					t.Errorf("page %s shown at from=%s came back at from=%d (%s)", pageOf(h.ID), prev, from, h.ID)
				}
				seen[pageOf(h.ID)] = fmt.Sprint(from)
			}
		}
	})
	t.Run("not a search", func(t *testing.T) {
		// A read-only gateway: the demo's pages are not a search route.
		code, body := get(t, base+"/pages/13/Benchmarking.html")
		if code != 403 || !strings.Contains(body, `"type":"security_exception"`) {
			t.Errorf("a non-search path: got %d %s, want 403 in Elasticsearch's error shape", code, body)
		}
	})
}

// keptAnnotated reports a hit that remove mode kept because the
// content-equivalence decision did not accept it, and says so.
func keptAnnotated(w *struct {
	Cluster  string `json:"cluster"`
	Relation string `json:"relation"`
	Explain  string `json:"explain"`
}) bool {
	return w != nil && strings.HasPrefix(w.Explain, "kept: a near-duplicate of ") && strings.Contains(w.Explain, "P(content-equivalent)")
}

func TestBackendErrorsPassThrough(t *testing.T) {
	var mode atomic.Value
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case "400":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"error":{"root_cause":[{"type":"parsing_exception","reason":"bad"}],"type":"parsing_exception","reason":"bad"},"status":400}`)
		case "500":
			w.WriteHeader(500)
			io.WriteString(w, "internal trouble")
		case "garbage":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"hits": {"hits": [ {"_source": {"url": "http://x/"}} ,, oops`)
		case "hang":
			<-r.Context().Done()
		}
	}))
	defer backend.Close()
	e := esEngine(backend.URL)
	e.Timeout = 300 * time.Millisecond
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	tests := []struct {
		mode     string
		code     int
		contains string
	}{
		{"400", 400, "parsing_exception"},
		{"500", 500, "internal trouble"},
		{"garbage", 200, ",, oops"}, // an answer winnow cannot parse is relayed as it is
		{"hang", 504, "winnow: engine es"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			mode.Store(tt.mode)
			start := time.Now()
			code, body := get(t, base+"/llvm/_search?q=x")
			if code != tt.code || !strings.Contains(body, tt.contains) {
				t.Errorf("backend %s: got %d %q, want %d containing %q", tt.mode, code, body, tt.code, tt.contains)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("backend %s: answered after %v", tt.mode, d)
			}
		})
	}
	backend.Close()
	if code, body := get(t, base+"/llvm/_search?q=x"); code != 502 {
		t.Errorf("dead backend: got %d %q, want 502", code, body)
	}
}

// slowPages serves n result pages that answer after delay, and an ES
// answer listing them; pages i and i+1 (i even) are near-duplicates.
func slowPages(t *testing.T, n int, delay func(i int) time.Duration) *httptest.Server {
	t.Helper()
	var docs []string
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(d.Body))
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_search") {
			w.Header().Set("Content-Type", "application/json")
			var hits []string
			for i := range n {
				hits = append(hits, fmt.Sprintf(`{"_id":"%d","_source":{"url":"%s/p/%d","title":"page %d"}}`, i, srv.URL, i, i))
			}
			fmt.Fprintf(w, `{"took":1,"hits":{"total":{"value":%d,"relation":"eq"},"hits":[%s]}}`, n, strings.Join(hits, ","))
			return
		}
		var i int
		fmt.Sscanf(r.URL.Path, "/p/%d", &i)
		select {
		case <-time.After(delay(i)):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, docs[(i/2)%len(docs)]) // pairs of identical pages
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestColdPathBudget(t *testing.T) {
	// 50 pages answering after 50 ms each are fetched, signed and
	// clustered inside a 300 ms budget.
	if raceEnabled {
		t.Skip("the race detector's slow-down breaks any time budget")
	}
	srv := slowPages(t, 50, func(int) time.Duration { return 50 * time.Millisecond })
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(srv.URL)}, Budget: 300 * time.Millisecond,
		Fetch: fetch.Options{MaxConnsPerHost: 64}})
	start := time.Now()
	_, body := get(t, base+"/llvm/_search?q=x&size=50", "X-Winnow-Mode", "annotate")
	took := time.Since(start)
	a := decodeES(t, body)
	marked := 0
	for _, h := range a.Hits.Hits {
		if h.Winnow != nil && h.Winnow.Cluster != "" {
			marked++
		}
	}
	if marked != 50 {
		t.Errorf("cold path: %d of 50 results refined within the 300 ms budget (took %v)", marked, took)
	}
	t.Logf("cold path: 50 pages at 50 ms each refined in %v", took)
}

func TestSlowPagesPassThrough(t *testing.T) {
	// Even pages answer at once, odd ones after 2 s: the odd ones pass
	// through unmarked and the answer comes within the budget.
	srv := slowPages(t, 10, func(i int) time.Duration {
		if i%2 == 1 {
			return 2 * time.Second
		}
		return 0
	})
	// Results usually come from many hosts; here one host serves them all,
	// so its connection limit must not queue the fast pages behind the
	// slow ones.
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(srv.URL)}, Budget: 200 * time.Millisecond,
		Fetch: fetch.Options{MaxConnsPerHost: 16}})
	start := time.Now()
	_, body := get(t, base+"/llvm/_search?q=x&size=10", "X-Winnow-Mode", "annotate")
	if d := time.Since(start); d > time.Second {
		t.Errorf("answer took %v, want about the 200 ms budget", d)
	}
	a := decodeES(t, body)
	if len(a.Hits.Hits) != 10 {
		t.Fatalf("%d hits, want all 10 (slow ones unmarked)", len(a.Hits.Hits))
	}
	for i, h := range a.Hits.Hits {
		marked := h.Winnow != nil && h.Winnow.Cluster != ""
		if slow := i%2 == 1; slow == marked {
			t.Errorf("hit %d (slow %v): marked %v", i, slow, marked)
		}
	}
}

// metaPage is the part of /_winnow/search.json the tests read.
type metaPage struct {
	Engines []struct {
		Name    string
		Results int
		Error   string
		Partial string
	}
	Groups []struct {
		Result struct {
			URL     string
			Engines []string
		}
		Duplicates []struct{ URL, Explain string }
	}
}

// searchJSON runs a metasearch through the proxy at base.
func searchJSON(t *testing.T, base, q string) metaPage {
	t.Helper()
	code, body := get(t, base+"/_winnow/search.json?q="+url.QueryEscape(q))
	if code != 200 {
		t.Fatalf("search.json: %d %s", code, body)
	}
	var page metaPage
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatalf("search.json: %v\n%s", err, body)
	}
	return page
}

func TestMetasearchAndOps(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{
		esEngine(d.URL()),
		{Name: "searx", URL: d.URL(), Adapter: engine.Config{Kind: "searxng", Path: "/searxng/search"}},
	}, Budget: 3 * time.Second})
	page := searchJSON(t, base, "benchmark")
	if len(page.Engines) != 2 || page.Engines[0].Error != "" || page.Engines[1].Error != "" {
		t.Errorf("engines: %+v, want two that answered", page.Engines)
	}
	if len(page.Groups) == 0 || len(page.Groups[0].Duplicates) < 2 || len(page.Groups[0].Result.Engines) != 2 {
		t.Errorf("first group: %+v; want the Benchmarking page from both engines with its releases as duplicates", page.Groups)
	}
	code, html := get(t, base+"/?q=benchmark", "Accept", "text/html")
	if code != 200 || !strings.Contains(html, "similar result") {
		t.Errorf("search page: %d, no grouped results", code)
	}
	for path, want := range map[string]string{
		"/healthz": "ok",
		"/readyz":  "ready",
		"/metrics": `winnow_requests_total{code="2xx",route="search"}`,
	} {
		if code, body := get(t, base+path); code != 200 || !strings.Contains(body, want) {
			t.Errorf("GET %s = %d, want 200 containing %q:\n%s", path, code, want, body)
		}
	}
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{"winnow_cache_hits_total", "winnow_fetches_total", "winnow_clusters_total", "winnow_engine_requests_total{engine=\"es\"", "winnow_request_duration_seconds_bucket", `winnow_answer_cache_total{outcome="miss"}`, "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestLimits(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, MaxRequestBytes: 4096, MaxHeaderBytes: 4096})
	resp, err := http.Post(base+"/llvm/_search", "application/json", strings.NewReader(`{"query":{"match_all":{}},"pad":"`+strings.Repeat("x", 10000)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", base+"/llvm/_search?q=x", nil)
	req.Header.Set("X-Big", strings.Repeat("y", 8000))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("oversized header: %d, want an error status", resp.StatusCode)
		}
	}
	code, body := get(t, base+"/llvm/_search?q=x&winnow_mode=sideways")
	if code != 400 || !strings.Contains(body, "winnow_mode") {
		t.Errorf("bad winnow_mode: %d %s, want 400 naming the parameter", code, body)
	}
}

func TestClientDisconnectAndNoLeaks(t *testing.T) {
	srv := slowPages(t, 20, func(int) time.Duration { return 100 * time.Millisecond })
	o := Options{Engines: []Engine{esEngine(srv.URL)}, Budget: 500 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	o.Fetch.Allow = loopback
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	base := "http://" + ln.Addr().String()

	// A client that gives up mid-request.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/llvm/_search?q=x&size=20", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	cancel()
	// The proxy still answers the next client.
	if code, _ := get(t, base+"/llvm/_search?q=x&size=20"); code != 200 {
		t.Errorf("after a client disconnect: %d", code)
	}
	http.DefaultClient.CloseIdleConnections()
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := s.Shutdown(sctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	<-done
	// No goroutine of the proxy (handlers, fetches, revalidations) is
	// left; fasthttp's own idle-connection cleaners may linger and are
	// not ours.
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		leaked := strings.Contains(stacks, "winnow/proxy.(*refiner)") || strings.Contains(stacks, "winnow/proxy.(*Server)")
		if !leaked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines of the proxy left after Shutdown:\n%s", stacks)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"run the <em>benchmark</em> twice", "run the benchmark twice"},
		{"a &amp; b &lt;tag&gt;", "a & b <tag>"},
		{"<EM class=\"hlt\">LLVM</EM> <mark>code</mark> <b>review</b> <strong>x</strong>", "LLVM code review x"},
		// Titles and fields are the text indexed: a "<" that is not
		// highlighting is the text's own.
		{"std::vector<int> & a < b", "std::vector<int> & a < b"},
		{"Zorblax <script>alert(1)</script>", "Zorblax <script>alert(1)</script>"},
		{"broken <em", "broken <em"},
		// An Atom text construct, as the feed adapter escapes it: its
		// "<b>" is the text's own.
		{"std::vector&lt;int> &amp; a &lt;b> tag", "std::vector<int> & a <b> tag"},
	}
	for _, tt := range tests {
		if got := plainText(tt.in); got != tt.want {
			t.Errorf("plainText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompressedAnswer(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 3 * time.Second})
	req, _ := http.NewRequest("GET", base+"/llvm/_search?q=benchmark&size=3&winnow_mode=annotate", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip for a client that accepts it", resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	// Annotate shows 3 distinct results with their clusters whole.
	if a := decodeES(t, string(b)); len(a.Hits.Hits) < 3 || a.Hits.Hits[0].Winnow == nil {
		t.Errorf("%d hits after decompression, want at least 3, annotated", len(a.Hits.Hits))
	}
}

// TestBackendIgnoresIdentity runs winnow in front of a backend that
// compresses its answers although winnow asks for identity: winnow cannot
// parse them, so the client gets the answer as the backend gave it, with
// its Content-Encoding, and can read it.
func TestBackendIgnoresIdentity(t *testing.T) {
	d := startDemo(t, demo.Options{})
	gz := behindDemo(t, d, func(w http.ResponseWriter, resp *http.Response) {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.Copy(zw, resp.Body)
		zw.Close()
	})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(gz.URL)}, Budget: time.Second})
	req, _ := http.NewRequest("GET", base+"/llvm/_search?q=benchmark&size=3", nil)
	req.Header.Set("Accept-Encoding", "identity")     // winnow adds no gzip of its own
	resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("status %d, Content-Encoding %q; want 200 and the backend's gzip", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatalf("the answer is not the backend's gzip: %v", err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if a := decodeES(t, string(b)); len(a.Hits.Hits) != 3 {
		t.Errorf("%d hits, want the backend's 3", len(a.Hits.Hits))
	}
}

// TestShutdownRacesServe checks that Shutdown ends a Serve however the two
// interleave, also when Serve has not yet handed its listener to fasthttp
// (the race that once left a test's Serve accepting for ever), and when
// Shutdown comes first.
func TestShutdownRacesServe(t *testing.T) {
	d := startDemo(t, demo.Options{})
	for i := range 40 {
		s, ln := newProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
		done := make(chan error, 1)
		serve := func() { done <- s.Serve(ln) }
		if i%2 == 0 {
			go serve()
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if i%2 == 1 {
			go serve()
		}
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Serve still running 10 s after Shutdown", i)
		}
	}
}

// TestMetasearchEngineRefusals checks that an engine's refusal says why
// on the search page: Elasticsearch's reason from its error document
// (its root cause's type and reason: a 429 as a busy cluster writes it),
// the status's name for an error page in HTML (a proxy in front of the
// engine); that an answer of part of the results says so (a failed shard,
// as Elasticsearch 8.19 wrote it); the demo engine's results still come.
func TestMetasearchEngineRefusals(t *testing.T) {
	d := startDemo(t, demo.Options{})
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"root_cause":[{"type":"es_rejected_execution_exception","reason":"rejected execution of coordinating operation"}],"type":"es_rejected_execution_exception","reason":"rejected execution of coordinating operation"},"status":429}`)
	}))
	t.Cleanup(busy.Close)
	gateway := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>")
	}))
	t.Cleanup(gateway.Close)
	shard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"took":4,"timed_out":false,"_shards":{"total":2,"successful":1,"skipped":0,"failed":1,"failures":[{"shard":0,"index":"num","reason":{"type":"query_shard_exception","reason":"failed to create query: For input string: \"benchmark\""}}]},"hits":{"total":{"value":1,"relation":"eq"},"hits":[{"_id":"a","_score":1,"_source":{"url":"http://example.org/a","title":"a"}}]}}`)
	}))
	t.Cleanup(shard.Close)
	_, base := startProxy(t, Options{Engines: []Engine{
		esEngine(d.URL()),
		{Name: "busy", URL: busy.URL, Adapter: engine.Config{Kind: "elasticsearch"}},
		{Name: "gateway", URL: gateway.URL, Adapter: engine.Config{Kind: "solr"}},
		{Name: "shard", URL: shard.URL, Adapter: engine.Config{Kind: "elasticsearch"}},
	}, Budget: 3 * time.Second})
	page := searchJSON(t, base, "benchmark")
	want := map[string]string{
		"es":      "",
		"busy":    "HTTP 429: es_rejected_execution_exception: rejected execution of coordinating operation",
		"gateway": "HTTP 502 Bad Gateway",
	}
	for _, e := range page.Engines {
		if e.Error != want[e.Name] {
			t.Errorf("%s: error %q, want %q", e.Name, e.Error, want[e.Name])
		}
		if p := `1 of 2 shards failed: query_shard_exception: failed to create query: For input string: "benchmark"`; (e.Name == "shard") != (e.Partial == p) {
			t.Errorf("%s: partial %q; want %q for shard only", e.Name, e.Partial, p)
		}
	}
	if len(page.Groups) == 0 {
		t.Error("no results; want the demo engine's")
	}
	if code, html := get(t, base+"/_winnow/search?q=benchmark"); code != 200 || !strings.Contains(html, "1 result in") || !strings.Contains(html, ", partial: 1 of 2 shards failed") {
		t.Errorf("search page: %d, does not say shard's answer is partial", code)
	}
}

func TestHighlightParts(t *testing.T) {
	got := highlightParts("a <em>vector</em><int> & <EM>b</EM> < c")
	want := []ui.Part{{Text: "a "}, {Text: "vector", Hit: true}, {Text: "<int> & "}, {Text: "b", Hit: true}, {Text: " < c"}}
	if !slices.Equal(got, want) {
		t.Errorf("highlightParts = %+v, want %+v", got, want)
	}
	for _, s := range []string{"std::vector<int>", "Use a &lt;b> tag for bold &amp; &lt;strong>vector&lt;/strong>"} {
		if got := highlightParts(s); got != nil {
			t.Errorf("highlightParts(%q) without highlighting = %+v, want nil", s, got)
		}
	}
}

// TestMetasearchNoticePastTopK checks what the search page says of the
// results past the top K, never signed whatever the time: that they rank
// past the results checked, not that they could not be checked in time
// (the pages were all fetched well within the budget).
func TestMetasearchNoticePastTopK(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, TopK: 3, Budget: 5 * time.Second})
	code, body := get(t, base+"/_winnow/search.json?q=llvm")
	var p struct {
		Notice string
		Groups []json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil {
		t.Fatalf("search.json: %d %v\n%s", code, err, body)
	}
	if !strings.Contains(p.Notice, "rank past the first 3, the results checked for duplicates (serve.top_k)") || strings.Contains(p.Notice, "in time") {
		t.Errorf("notice %q; want the results past the top 3 named as such, none late", p.Notice)
	}
}

// TestMetasearchHitsWithoutURL: an engine whose hits lack the configured
// URL field (named otherwise in its index) gives results of their own,
// each shown, not one result fused from all under the empty URL, and the
// page says why they are unmarked.
func TestMetasearchHitsWithoutURL(t *testing.T) {
	d := startDemo(t, demo.Options{})
	e := esEngine(d.URL())
	e.Adapter.Fields.URL = "link"
	_, base := startProxy(t, Options{Engines: []Engine{e}, Budget: 5 * time.Second})
	code, body := get(t, base+"/_winnow/search.json?q=benchmark")
	var p struct {
		Notice  string
		Engines []struct{ Results int }
		Groups  []json.RawMessage
	}
	if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil || len(p.Engines) != 1 {
		t.Fatalf("search.json: %d %v\n%s", code, err, body)
	}
	if n := p.Engines[0].Results; n < 2 || len(p.Groups) != n {
		t.Errorf("%d results shown of the engine's %d; want each", len(p.Groups), n)
	}
	if !strings.Contains(p.Notice, "results have no URL (is the engine's url_field right?)") || strings.Contains(p.Notice, "in time") {
		t.Errorf("notice %q; want the results without a URL named", p.Notice)
	}
}

// TestMetasearchFusionCountsEngineOnce: reciprocal rank fusion sums over
// engines; an engine that lists one page twice (its URL with and without
// a tracking parameter, one canonical URL) counts once, at its best rank.
// Engine a ranks B, A, A'; engine b ranks A, B: A and B tie, and B, read
// first, leads. Counting a's second A put A first.
func TestMetasearchFusionCountsEngineOnce(t *testing.T) {
	answer := func(urls ...string) *httptest.Server {
		var hits []string
		for i, u := range urls {
			text := "Benchmarking tips: run each benchmark several times and turn frequency scaling off."
			if strings.HasSuffix(u, "/b") {
				text = "Code reviews happen on pull requests; a patch lands once a reviewer approves it."
			}
			hits = append(hits, fmt.Sprintf(`{"_id":"%d","_score":1,"_source":{"url":%q,"title":"t","body":%q}}`, i, u, text))
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"took":1,"timed_out":false,"hits":{"total":{"value":%d,"relation":"eq"},"hits":[%s]}}`, len(hits), strings.Join(hits, ","))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	const a, b = "http://example.org/a", "http://example.org/b"
	e1, e2 := answer(b, a, a+"?utm_source=feed"), answer(a, b)
	_, base := startProxy(t, Options{Engines: []Engine{
		// The hits carry their text: no page is fetched.
		{Name: "a", URL: e1.URL, Adapter: engine.Config{Kind: "elasticsearch", TextField: "body"}},
		{Name: "b", URL: e2.URL, Adapter: engine.Config{Kind: "elasticsearch", TextField: "body"}},
	}, Budget: 100 * time.Millisecond})
	page := searchJSON(t, base, "x")
	var got []string
	for _, g := range page.Groups {
		got = append(got, g.Result.URL)
	}
	if want := []string{b, a}; !slices.Equal(got, want) {
		t.Errorf("fused order %q, want %q", got, want)
	}
}

// TestSearchPageLinksKeepSettings: the next page's link keeps what the
// request set (winnow_ parameters, format), so page 2 is the same
// search's.
func TestSearchPageLinksKeepSettings(t *testing.T) {
	d := startDemo(t, demo.Options{})
	_, base := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}, Budget: 5 * time.Second})
	code, body := get(t, base+"/_winnow/search?q=llvm&size=2&format=json&winnow_method=jaccard&winnow_threshold=0.5")
	var p struct{ Next string }
	if err := json.Unmarshal([]byte(body), &p); code != 200 || err != nil {
		t.Fatalf("search?format=json: %d %v\n%s", code, err, body)
	}
	next, err := url.ParseQuery(strings.TrimPrefix(p.Next, "?"))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"q": "llvm", "page": "2", "size": "2", "format": "json", "winnow_method": "jaccard", "winnow_threshold": "0.5"} {
		if got := next.Get(k); got != want {
			t.Errorf("next %q: %s=%q, want %q", p.Next, k, got, want)
		}
	}
}

package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/internal/toxiproxy"
	"github.com/winnow-search/winnow/proxy/engine"
)

// faultIndex is the index the network fault tests load.
const faultIndex = "winnow_netfaults"

// faultAnswer is what a client got: the status, how long it took, and
// whether the body arrived whole (its Content-Length, or its chunked
// encoding's end) and, for a 200, parses as JSON.
type faultAnswer struct {
	status  int
	took    time.Duration
	whole   bool
	json    bool
	refined string
	body    string
}

func (a faultAnswer) String() string {
	return fmt.Sprintf("%d in %v, whole %v, JSON %v, refined %q: %.120s", a.status, a.took.Round(time.Millisecond), a.whole, a.json, a.refined, a.body)
}

// faultGet asks u on a connection of its own, accepting gzip or not (Go
// then decompresses the body itself). A connection closed before the
// answer's head is status 0.
func faultGet(t *testing.T, u string, gzip bool) faultAnswer {
	t.Helper()
	start := time.Now()
	c := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: !gzip}}
	resp, err := c.Get(u)
	if err != nil {
		return faultAnswer{took: time.Since(start), body: err.Error()}
	}
	defer resp.Body.Close()
	b, rerr := io.ReadAll(resp.Body)
	a := faultAnswer{status: resp.StatusCode, took: time.Since(start), whole: rerr == nil, refined: resp.Header.Get(refinedHeader), body: string(b)}
	a.json = json.Valid(b)
	return a
}

// metricValue reads one series of the proxy's /metrics (0 when absent).
func metricValue(t *testing.T, base, series string) float64 {
	t.Helper()
	_, body := get(t, base+"/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// countGoroutines counts the process's goroutines but fasthttp's own
// housekeeping: the stackless workers its compression starts once per
// level and keeps, and the cleaners of a client's idle connections and
// of a server's workers, which sleep 10 s before they see that nothing
// is left and end (the descriptors are counted apart).
func countGoroutines() int {
	buf := make([]byte, 4<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	n := 0
	for _, g := range strings.Split(stacks, "\n\n") {
		if !strings.Contains(g, "fasthttp/stackless.funcWorker") && !strings.Contains(g, "fasthttp.(*HostClient).connsCleaner") &&
			!strings.Contains(g, "fasthttp.(*workerPool).Start") {
			n++
		}
	}
	return n
}

// openFDs counts the process's open file descriptors (-1 where /proc is
// not there).
func openFDs() int {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(es)
}

// TestEngineNetworkFaults puts Toxiproxy between winnow and real
// OpenSearch (answers with a Content-Length) and Elasticsearch (chunked
// answers) and injects the faults SREs test with: latency with jitter, a
// slow link, a slow close, a connection that stops passing data, a reset
// when the answer comes, an answer dripped in small slices, an answer cut
// after some bytes. For each, a refined search, the same search with
// winnow_mode=off (passed through) and the metasearch, at once: the
// engine's answer whole (refined or passed with the reason), or winnow's
// 502/504 when the engine failed, within one engine timeout (never two);
// never a 200 whose body looks whole but is not; the metasearch always
// answers, naming the engine's error. Afterwards the proxy answers
// refined again and holds no more goroutines or descriptors than before.
func TestEngineNetworkFaults(t *testing.T) {
	tp := toxiproxy.Start(t)
	d := startDemo(t, demo.Options{})
	docs, err := realengine.Sample(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 2 * time.Second
	// Well under what one more engine timeout would cost, on a loaded
	// machine: the client gets at most one timeout.
	const oneTimeout = timeout + timeout*3/4
	type want struct {
		// codes the refined and the passed-through search may get; 200
		// means whole and JSON.
		refined, off []int
		cutOK        bool // a 200 visibly cut, or a connection closed before the head (the engine cut its answer), is right
		metaErr      bool // the metasearch names the engine's error
		offSlow      bool // the passed-through answer may take longer than a timeout (the engine keeps sending)
	}
	cases := []struct {
		name  string
		toxic toxiproxy.Toxic
		want  want
		kinds []string // nil: every kind
	}{
		{"latency", toxiproxy.Toxic{Type: "latency", Attributes: map[string]any{"latency": 150, "jitter": 100}},
			want{refined: []int{200}, off: []int{200}}, []string{"opensearch"}},
		{"bandwidth", toxiproxy.Toxic{Type: "bandwidth", Attributes: map[string]any{"rate": 400}},
			want{refined: []int{200}, off: []int{200}}, []string{"opensearch"}},
		{"slow_close", toxiproxy.Toxic{Type: "slow_close", Attributes: map[string]any{"delay": 3000}},
			want{refined: []int{200}, off: []int{200}}, []string{"opensearch"}},
		{"timeout", toxiproxy.Toxic{Type: "timeout", Attributes: map[string]any{"timeout": 0}},
			want{refined: []int{504}, off: []int{504}, metaErr: true}, []string{"opensearch"}},
		{"reset_peer", toxiproxy.Toxic{Type: "reset_peer", Attributes: map[string]any{"timeout": 0}},
			want{refined: []int{502}, off: []int{502}, metaErr: true}, nil},
		// About 40 KB/s: the 113 KB answer takes longer than the
		// timeout to arrive whole, so it cannot be refined (504), while
		// passed through it streams whole, each slice within the timeout.
		{"slicer", toxiproxy.Toxic{Type: "slicer", Attributes: map[string]any{"average_size": 100, "size_variation": 50, "delay": 2500}},
			want{refined: []int{504}, off: []int{200}, metaErr: true, offSlow: true}, []string{"opensearch"}},
		{"limit_data", toxiproxy.Toxic{Type: "limit_data", Attributes: map[string]any{"bytes": 50000}},
			want{refined: []int{502}, off: nil, cutOK: true, metaErr: true}, nil},
	}
	for _, kind := range []string{"opensearch", "elasticsearch"} {
		t.Run(kind, func(t *testing.T) {
			base := realengine.Start(t, kind)
			realengine.Load(t, kind, base, faultIndex, docs)
			u, _ := url.Parse(base)
			// A proxy and a winnow of their own for each fault: removing
			// a toxic from live connections can hang Toxiproxy's API.
			start := func(t *testing.T, name string) (*toxiproxy.Proxy, string) {
				p := tp.Proxy(t, "winnow-"+kind+"-"+name, u.Host)
				s, proxyURL := startProxy(t, Options{Engines: []Engine{{Name: kind, URL: p.URL(),
					Adapter: engine.Config{Kind: kind, TextField: "body"}, Timeout: timeout}}, AnswerCacheBytes: -1})
				t.Cleanup(func() {
					for _, b := range s.engines {
						b.client.CloseIdleConnections()
					}
				})
				return p, proxyURL
			}
			goroutines, fds := countGoroutines(), openFDs()
			for _, c := range cases {
				if c.kinds != nil && c.kinds[0] != kind {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					p, proxyURL := start(t, c.name)
					search := proxyURL + "/" + faultIndex + "/_search?q=benchmark&size=5"
					if a := faultGet(t, search, false); a.status != 200 || !a.json || a.refined != "yes" {
						t.Fatalf("without faults: %v", a)
					}
					c.toxic.Name = c.name
					p.Add(t, c.toxic)
					var refined, off faultAnswer
					var meta metaPage
					var metaTook time.Duration
					var wg sync.WaitGroup
					// One client asks for identity, the other accepts
					// gzip (as Go's, Python's and the official clients do),
					// which winnow then compresses the answer for.
					wg.Go(func() { refined = faultGet(t, search, false) })
					wg.Go(func() { off = faultGet(t, search+"&winnow_mode=off", true) })
					wg.Go(func() {
						start := time.Now()
						meta = searchJSON(t, proxyURL, "benchmark")
						metaTook = time.Since(start)
					})
					wg.Wait()
					check := func(what string, a faultAnswer, codes []int, slowOK bool) {
						t.Helper()
						switch {
						case a.status == 200 && !a.whole:
							if !c.want.cutOK {
								t.Errorf("%s: %v; the body was cut", what, a)
							}
						case a.status == 200 && !a.json:
							t.Errorf("%s: %v: a 200 that reads whole and is not the engine's JSON", what, a)
						case a.status == 0 && c.want.cutOK:
							// The connection closed before the head: a
							// compressed answer the engine cut early.
						case !slices.Contains(codes, a.status):
							t.Errorf("%s: %v; want a status in %v", what, a, codes)
						}
						if a.took > oneTimeout && !slowOK {
							t.Errorf("%s: %v; more than one engine timeout (%v)", what, a, timeout)
						}
					}
					check("refined search", refined, c.want.refined, false)
					check("winnow_mode=off", off, c.want.off, c.want.offSlow)
					if c.want.refined[0] == 200 && refined.status == 200 && refined.whole && refined.refined != "yes" {
						t.Errorf("refined search: %v; a working engine's answer not refined", refined)
					}
					if metaTook > oneTimeout+time.Second {
						t.Errorf("metasearch took %v", metaTook)
					}
					if len(meta.Engines) != 1 || (meta.Engines[0].Error != "") != c.want.metaErr {
						t.Errorf("metasearch engines %+v; want the engine's error: %v", meta.Engines, c.want.metaErr)
					}
					if n := cutCount(refined, off); n > 0 {
						// The client saw a cut body: so must the operator.
						cut := metricValue(t, proxyURL, fmt.Sprintf(`winnow_engine_answers_cut_total{engine=%q}`, kind))
						if cut < 1 {
							t.Errorf("%d answers passed through cut, winnow_engine_answers_cut_total %v", n, cut)
						}
					}
					t.Logf("refined %v; off %v; metasearch %v %+v", refined, off, metaTook.Round(time.Millisecond), meta.Engines)
				})
			}
			// What the faults held is let go: the connections they broke
			// are closed, their goroutines ended.
			settle := time.Now()
			deadline := settle.Add(10 * time.Second)
			for {
				g, f := countGoroutines(), openFDs()
				if g <= goroutines+5 && f <= fds+5 {
					t.Logf("%d goroutines (%d before), %d descriptors (%d before) after %v", g, goroutines, f, fds, time.Since(settle).Round(time.Millisecond))
					break
				}
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("after the faults %d goroutines (%d before), %d open descriptors (%d before):\n%s", g, goroutines, f, fds, buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
}

func cutCount(as ...faultAnswer) int {
	n := 0
	for _, a := range as {
		if a.status == 200 && !a.whole {
			n++
		}
	}
	return n
}

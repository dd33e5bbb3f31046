package proxy

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/corpus/sample"
	"github.com/winnow-search/winnow/fetch"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestHostileResults runs a query whose results point at pages that try
// to break the proxy: internal addresses (SSRF), a decompression bomb, a
// 1 GB page, a page that drips one byte at a time, non-HTML content and a
// page with a wrong charset. The answer must come within the budget, keep
// every hit, refine only the good pages, and never touch the internal
// server.
func TestHostileResults(t *testing.T) {
	var internalHits atomic.Int64
	internal := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		internalHits.Add(1)
		io.WriteString(w, "<p>secret metadata</p>")
	})}
	iln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	go internal.Serve(iln)
	defer internal.Close()
	_, iport, _ := net.SplitHostPort(iln.Addr().String())

	var good []byte
	for d, err := range sample.Docs() {
		if err != nil {
			t.Fatal(err)
		}
		good = d.Body
		break
	}
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	io.CopyN(zw, zeros{}, 200<<20) // 200 MiB of zeros in about 200 KiB
	zw.Close()

	var pages *httptest.Server
	pages = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if strings.HasSuffix(path, "/_search") {
			path = "/_search"
		}
		switch path {
		case "/_search":
			hosts := []string{
				pages.URL + "/good", pages.URL + "/good-copy",
				"http://127.0.0.2:" + iport + "/admin", // loopback outside the allowlist
				"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
				"http://2130706433:" + iport + "/", // 127.0.0.1 spelled as a number
				"http://0x7f.0.0.2:" + iport + "/", "file:///etc/passwd",
				pages.URL + "/bomb", pages.URL + "/huge", pages.URL + "/drip",
				pages.URL + "/image", pages.URL + "/charset",
			}
			var hits []string
			for i, h := range hosts {
				hits = append(hits, fmt.Sprintf(`{"_id":"%d","_source":{"url":%q,"title":"t%d"}}`, i, h, i))
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"hits":{"total":{"value":%d,"relation":"eq"},"hits":[%s]}}`, len(hits), strings.Join(hits, ","))
		case "/good", "/good-copy":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(good)
		case "/bomb":
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(bomb.Bytes())
		case "/huge":
			w.Header().Set("Content-Type", "text/html")
			io.CopyN(w, zeros{}, 1<<30)
		case "/drip":
			w.Header().Set("Content-Type", "text/html")
			f := w.(http.Flusher)
			for range 100 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(100 * time.Millisecond):
				}
				w.Write([]byte("<"))
				f.Flush()
			}
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
		case "/charset":
			// windows-1251 bytes declared as UTF-8: decoded with
			// replacement characters, never a failure.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<p>"+strings.Repeat("\xcf\xf0\xe8\xe2\xe5\xf2 \xec\xe8\xf0 ", 50)+"</p>")
		}
	}))
	defer pages.Close()

	// Only the test's own page server is allowed, not all of loopback.
	o := Options{Engines: []Engine{esEngine(pages.URL)}, Budget: 500 * time.Millisecond,
		Fetch: fetch.Options{MaxBodyBytes: 4 << 20, MaxDecodedBytes: 8 << 20, MaxConnsPerHost: 16}}
	s, base := startProxyAllow(t, o, []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})

	start := time.Now()
	code, body := get(t, base+"/llvm/_search?q=x&size=13", "X-Winnow-Mode", "annotate")
	took := time.Since(start)
	if code != 200 {
		t.Fatalf("status %d: %s", code, body)
	}
	if took > 2*time.Second {
		t.Errorf("answer took %v, want about the 500 ms budget", took)
	}
	a := decodeES(t, body)
	if len(a.Hits.Hits) != 13 {
		t.Fatalf("%d hits, want all 13 passed through", len(a.Hits.Hits))
	}
	for i, h := range a.Hits.Hits {
		marked := h.Winnow != nil && h.Winnow.Cluster != ""
		wantMarked := i == 0 || i == 1 || i == 12 // the two copies and the mis-declared charset
		if marked != wantMarked {
			t.Errorf("hit %d (%s): marked %v, want %v", i, h.ID, marked, wantMarked)
		}
	}
	if h := a.Hits.Hits[1]; h.Winnow == nil || h.Winnow.Relation != "duplicate" {
		t.Errorf("the copy of the good page is not marked a duplicate: %+v", h.Winnow)
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("the internal server was reached %d times", n)
	}
	// Outcomes are counted once the background fetches end.
	s.ref.wait()
	_, metrics := get(t, base+"/metrics")
	for _, want := range []string{`winnow_fetches_total{outcome="blocked"}`, `winnow_fetches_total{outcome="too_large"}`, `winnow_fetches_total{outcome="bad_type"}`, `winnow_fetches_total{outcome="timeout"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// startProxyAllow is startProxy with an explicit fetch allowlist.
func startProxyAllow(t *testing.T, o Options, allow []netip.Prefix) (*Server, string) {
	t.Helper()
	o.Fetch.Allow = allow
	saved := loopback
	loopback = nil
	defer func() { loopback = saved }()
	return startProxy(t, o)
}

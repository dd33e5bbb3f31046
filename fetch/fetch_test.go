package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	brotli "github.com/molecule-man/go-brrr"

	"github.com/winnow-search/winnow/canon"
)

var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// readTestdata reads one of canon's saved real pages (see
// canon/testdata/README.md for their sources and licences): fetch serves
// them on loopback rather than keeping copies of its own.
func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("../canon/testdata/pages/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func newServer(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// fetchGoroutines lists the stacks of goroutines running Client code.
func fetchGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "winnow/fetch.(*Client)") && !strings.Contains(g, "fetchGoroutines") {
			out = append(out, g)
		}
	}
	return out
}

// checkNoLeak fails when a goroutine of the package is still running after
// wait (the fetch goroutines end by their deadline at the latest).
func checkNoLeak(t *testing.T, wait time.Duration) {
	t.Helper()
	end := time.Now().Add(wait)
	for {
		g := fetchGoroutines()
		if len(g) == 0 {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%d fetch goroutines left after %v; first:\n%s", len(g), wait, g[0])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func encode(t testing.TB, enc string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	var err error
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "deflate-raw":
		w, err = flate.NewWriter(&buf, flate.DefaultCompression)
	case "br":
		w, err = brotli.NewWriter(&buf, 5)
	default:
		return b
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGetOK(t *testing.T) {
	pages := map[string]struct {
		body []byte
		ct   string
	}{
		"/bbc":  {readTestdata(t, "bbc.com.52241221.html"), "text/html; charset=utf-8"},
		"/auto": {readTestdata(t, "automobilwoche.de-VW-Betriebsversammlung.html"), "text/html; charset=windows-1252"},
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		p := pages[r.URL.Path]
		enc := r.URL.Query().Get("enc")
		w.Header().Set("Content-Type", p.ct)
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT")
		if enc != "" {
			w.Header().Set("Content-Encoding", strings.TrimSuffix(enc, "-raw"))
		}
		w.Write(encode(t, enc, p.body))
	})
	c := newTestClient(t, Options{Allow: loopback})
	for path, want := range pages {
		for _, enc := range []string{"", "gzip", "deflate", "deflate-raw", "br"} {
			t.Run(path+"/"+enc, func(t *testing.T) {
				u := srv.URL + path + "?enc=" + enc
				p, err := c.Get(context.Background(), u, Validators{})
				if err != nil {
					t.Fatalf("Get(%q): %v", u, err)
				}
				if !bytes.Equal(p.Body, want.body) {
					t.Errorf("Get(%q) body %d bytes, want %d", u, len(p.Body), len(want.body))
				}
				if p.ContentType != want.ct {
					t.Errorf("Get(%q) ContentType = %q, want %q", u, p.ContentType, want.ct)
				}
				if p.Status != 200 || p.URL != u || len(p.Chain) != 1 || p.Truncated || p.NotModified {
					t.Errorf("Get(%q) = status %d, URL %q, chain %v, truncated %v, not modified %v",
						u, p.Status, p.URL, p.Chain, p.Truncated, p.NotModified)
				}
				if p.ETag != `"v1"` || p.LastModified != "Mon, 02 Jan 2006 15:04:05 GMT" {
					t.Errorf("Get(%q) validators = %q, %q", u, p.ETag, p.LastModified)
				}
			})
		}
	}
	if s := c.Stats(); s.OK != 10 || s.InFlight != 0 {
		t.Errorf("Stats() = %+v, want OK 10, InFlight 0", s)
	}
}

func TestGetHeaders(t *testing.T) {
	var got http.Header
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("Link", "<https://cdn.example/s.css>; rel=preload; as=style")
		w.Header().Add("Link", `</c>; rel="canonical"`)
		io.WriteString(w, "ok")
	})
	c := newTestClient(t, Options{Allow: loopback})
	p, err := c.Get(context.Background(), srv.URL, Validators{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `<https://cdn.example/s.css>; rel=preload; as=style, </c>; rel="canonical"`; p.Link != want {
		t.Errorf("Page.Link = %q, want both Link lines, %q", p.Link, want)
	}
	for k, want := range map[string]string{
		"User-Agent":      DefaultUserAgent,
		"Accept":          "text/html, application/xhtml+xml, text/plain",
		"Accept-Encoding": "gzip, deflate, br",
	} {
		if g := got.Get(k); g != want {
			t.Errorf("request header %s = %q, want %q", k, g, want)
		}
	}
}

func TestRedirects(t *testing.T) {
	var srvURL string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, srvURL+"/c?x=1", http.StatusFound)
		case "/c":
			http.Redirect(w, r, "page", http.StatusPermanentRedirect)
		case "/page":
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>final</p>")
		case "/loop1":
			http.Redirect(w, r, "/loop2", http.StatusTemporaryRedirect)
		case "/loop2":
			http.Redirect(w, r, "/loop1", http.StatusSeeOther)
		case "/nolocation":
			w.WriteHeader(http.StatusFound)
		}
	})
	srvURL = srv.URL
	c := newTestClient(t, Options{Allow: loopback})

	p, err := c.Get(context.Background(), srv.URL+"/a", Validators{})
	if err != nil {
		t.Fatalf("Get(/a): %v", err)
	}
	want := []Hop{
		{srv.URL + "/a", 301, srv.URL + "/b"},
		{srv.URL + "/b", 302, srv.URL + "/c?x=1"},
		{srv.URL + "/c?x=1", 308, srv.URL + "/page"},
		{srv.URL + "/page", 200, ""},
	}
	if fmt.Sprint(p.Chain) != fmt.Sprint(want) {
		t.Errorf("Get(/a) Chain = %v, want %v", p.Chain, want)
	}
	if p.URL != srv.URL+"/page" || string(p.Body) != "<p>final</p>" {
		t.Errorf("Get(/a) = %q, %q, want final page", p.URL, p.Body)
	}
	if s := c.Stats(); s.Redirects != 3 {
		t.Errorf("Stats().Redirects = %d, want 3", s.Redirects)
	}

	if _, err := c.Get(context.Background(), srv.URL+"/loop1", Validators{}); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("Get(/loop1) error = %v, want ErrTooManyRedirects", err)
	}
	if _, err := c.Get(context.Background(), srv.URL+"/nolocation", Validators{}); !errors.Is(err, ErrStatus) {
		t.Errorf("Get(/nolocation) error = %v, want ErrStatus", err)
	}
	none := newTestClient(t, Options{Allow: loopback, MaxRedirects: -1})
	if _, err := none.Get(context.Background(), srv.URL+"/a", Validators{}); !errors.Is(err, ErrTooManyRedirects) {
		t.Errorf("Get(/a) with MaxRedirects -1 error = %v, want ErrTooManyRedirects", err)
	}
}

// listenPair listens on 127.0.0.1 and 127.0.0.2 on one port, so a name can
// resolve to either; it skips the test where 127.0.0.2 is not routed.
func listenPair(t *testing.T) (public, internal net.Listener, port string) {
	t.Helper()
	for range 10 {
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		_, port, _ = net.SplitHostPort(l1.Addr().String())
		l2, err := net.Listen("tcp", "127.0.0.2:"+port)
		if err == nil {
			return l1, l2, port
		}
		l1.Close()
	}
	t.Skip("cannot listen on 127.0.0.2")
	return nil, nil, ""
}

// serveOn serves h on l and counts requests.
func serveOn(t *testing.T, l net.Listener, body string) *atomic.Int64 {
	var hits atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		io.WriteString(w, body)
	}))
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return &hits
}

// TestRedirectRefused: a public page redirecting inward is refused at the
// hop, and the internal server never sees a connection.
// TestRedirectCookie serves a page as sites behind a cookie check do
// (load balancers, consent and bot walls): without the cookie, a redirect
// to the same URL that sets it. A browser follows it with the cookie and
// shows the page; fetch keeps the cookies a redirect sets for the rest of
// that one fetch, sent only to the host that set them, never to another
// host nor to a later fetch.
func TestRedirectCookie(t *testing.T) {
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<p>other host, cookies %q</p>", r.Header.Get("Cookie"))
	}))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2: %v", err)
	}
	other.Listener = ln
	other.Start()
	t.Cleanup(other.Close)
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
			http.SetCookie(w, &http.Cookie{Name: "b", Value: "2"})
			http.Redirect(w, r, "/clear", http.StatusFound)
			return
		case "/clear":
			http.SetCookie(w, &http.Cookie{Name: "a", MaxAge: -1})
			http.Redirect(w, r, "/show", http.StatusFound)
			return
		case "/show":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<p>cookies %q</p>", r.Header.Get("Cookie"))
			return
		}
		if r.URL.Path == "/away" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s1", Path: "/"})
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
			return
		}
		if c, err := r.Cookie("ts01"); err != nil || c.Value != "ok" {
			http.SetCookie(w, &http.Cookie{Name: "ts01", Value: "ok", Path: "/", HttpOnly: true})
			http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>behind the cookie check</p>")
	})
	c := newTestClient(t, Options{Allow: loopback})
	for range 2 { // the second fetch starts without the cookie again
		p, err := c.Get(context.Background(), srv.URL+"/page", Validators{})
		if err != nil {
			t.Fatalf("Get(cookie check) error: %v", err)
		}
		if string(p.Body) != "<p>behind the cookie check</p>" || len(p.Chain) != 2 {
			t.Errorf("Get(cookie check) = %q after %d hops, want the page after 2", p.Body, len(p.Chain))
		}
	}
	if p, err := c.Get(context.Background(), srv.URL+"/set", Validators{}); err != nil || string(p.Body) != `<p>cookies "b=2"</p>` {
		t.Errorf("Get(set two cookies, clear one) = %v, %v; want the other one sent", p, err)
	}
	p, err := c.Get(context.Background(), srv.URL+"/away", Validators{})
	if err != nil || string(p.Body) != `<p>other host, cookies ""</p>` {
		t.Errorf("Get(redirect to another host) = %v, %v; want the other host's page, no cookie sent", p, err)
	}
}

func TestRedirectRefused(t *testing.T) {
	pl, il, port := listenPair(t)
	serveOn(t, pl, "public")
	internalHits := serveOn(t, il, "internal")
	r := fakeResolver{"internal.test": addrs("127.0.0.2"), "meta.test": addrs("169.254.169.254")}
	c := newTestClient(t, Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Resolver: r})
	for _, to := range []string{
		"http://127.0.0.2:" + port + "/",
		"http://0x7f.0.0.2:" + port + "/",
		"http://2130706434:" + port + "/",
		"http://[::ffff:127.0.0.2]:" + port + "/",
		"http://internal.test:" + port + "/",
		"http://10.0.0.1/",
		"http://169.254.169.254/latest/meta-data/",
		"http://meta.test/latest/meta-data/",
		"http://[fd00:ec2::254]/",
		"file:///etc/passwd",
	} {
		t.Run(to, func(t *testing.T) {
			u := "http://127.0.0.1:" + port + "/?to=" + to
			p, err := c.Get(context.Background(), u, Validators{})
			if !errors.Is(err, ErrBlocked) {
				t.Errorf("Get(%q) = %v, %v, want ErrBlocked", u, p, err)
			}
		})
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("internal server hit %d times, want 0", n)
	}
	if s := c.Stats(); s.Blocked != 10 {
		t.Errorf("Stats().Blocked = %d, want 10", s.Blocked)
	}
}

// seqResolver returns answers[i] on call i (the last answer repeats) and
// counts calls: a rebinding DNS server.
type seqResolver struct {
	mu      sync.Mutex
	calls   int
	answers [][]netip.Addr
}

func (r *seqResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a, nil
}

// TestDNSRebinding proves the checked address is the dialed one: a name
// that resolves to the allowed server first and to a refused one later
// reaches the allowed server once, then is refused, and the refused
// server never receives a connection.
func TestDNSRebinding(t *testing.T) {
	pl, il, port := listenPair(t)
	publicHits := serveOn(t, pl, "public")
	internalHits := serveOn(t, il, "internal")
	allow := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	u := "http://rebind.test:" + port + "/"

	r := &seqResolver{answers: [][]netip.Addr{addrs("127.0.0.1"), addrs("127.0.0.2")}}
	c := newTestClient(t, Options{Allow: allow, Resolver: r})
	p, err := c.Get(context.Background(), u, Validators{})
	if err != nil || string(p.Body) != "public" {
		t.Fatalf("Get(%q) first = %v, want public page", u, err)
	}
	c.Close() // force a new connection, hence a new lookup
	if _, err := c.Get(context.Background(), u, Validators{}); !errors.Is(err, ErrBlocked) {
		t.Errorf("Get(%q) after rebinding error = %v, want ErrBlocked", u, err)
	}
	if r.calls != 2 {
		t.Errorf("resolver called %d times, want 2 (one per connection)", r.calls)
	}

	for name, answer := range map[string][]netip.Addr{
		"refused": addrs("127.0.0.2"),
		"mixed":   addrs("127.0.0.1", "127.0.0.2"),
		"mixed2":  addrs("127.0.0.2", "127.0.0.1"),
	} {
		t.Run(name, func(t *testing.T) {
			c := newTestClient(t, Options{Allow: allow, Resolver: &seqResolver{answers: [][]netip.Addr{answer}}})
			if _, err := c.Get(context.Background(), u, Validators{}); !errors.Is(err, ErrBlocked) {
				t.Errorf("Get(%q) resolving to %v error = %v, want ErrBlocked", u, answer, err)
			}
		})
	}
	if n := internalHits.Load(); n != 0 {
		t.Errorf("internal server hit %d times, want 0", n)
	}
	if n := publicHits.Load(); n != 1 {
		t.Errorf("public server hit %d times, want 1", n)
	}
}

// zeroReader yields zeros forever; the lazily generated huge pages and
// bombs read from it, so nothing big is ever materialized.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// countWriter counts the bytes a handler produced before the client left.
type countWriter struct {
	w io.Writer
	n atomic.Int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func TestDecompressionBomb(t *testing.T) {
	const bomb = 10 << 30 // 10 GB of zeros if anyone read it all
	for _, enc := range []string{"gzip", "br", "deflate"} {
		t.Run(enc, func(t *testing.T) {
			var produced atomic.Int64
			done := make(chan struct{}, 1)
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				defer func() { done <- struct{}{} }()
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", enc)
				cw := &countWriter{w: w}
				var zw io.WriteCloser
				switch enc {
				case "gzip":
					zw, _ = gzip.NewWriterLevel(cw, gzip.BestSpeed)
				case "br":
					zw, _ = brotli.NewWriter(cw, 1)
				case "deflate":
					zw, _ = zlib.NewWriterLevel(cw, zlib.BestSpeed)
				}
				n, _ := io.CopyN(zw, zeroReader{}, bomb)
				zw.Close()
				produced.Store(n)
			})
			c := newTestClient(t, Options{Allow: loopback})
			_, err := c.Get(context.Background(), srv.URL, Validators{})
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Get(bomb %s) error = %v, want ErrTooLarge", enc, err)
			}
			c.Close()
			<-done
			if n := produced.Load(); n > 1<<30 {
				t.Errorf("server compressed %d bytes before the client hung up, want far less than %d", n, int64(bomb))
			}
		})
	}
}

// TestGzipTrailingBytes serves a real page gzipped with bytes after the
// gzip member, as servers that append a newline or padding to their
// compressed output do: browsers (Chromium's GzipSourceStream, urllib3)
// show the page and ignore the bytes, and so must fetch. A second gzip
// member is a part of the page (RFC 1952) and is decoded.
func TestGzipTrailingBytes(t *testing.T) {
	page := readTestdata(t, "bbc.com.52241221.html")
	half := len(page) / 2
	bodies := map[string][]byte{
		"newline": append(encode(t, "gzip", page), '\n'),
		"crlf":    append(encode(t, "gzip", page), "\r\n"...),
		"zeros":   append(encode(t, "gzip", page), make([]byte, 16)...),
		"junk":    append(encode(t, "gzip", page), "<!-- trailing junk -->"...),
		"members": append(encode(t, "gzip", page[:half]), encode(t, "gzip", page[half:])...),
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(bodies[r.URL.Query().Get("b")])
	})
	c := newTestClient(t, Options{Allow: loopback})
	for name := range bodies {
		t.Run(name, func(t *testing.T) {
			p, err := c.Get(context.Background(), srv.URL+"?b="+name, Validators{})
			if err != nil {
				t.Fatalf("Get(gzip + %s) error: %v", name, err)
			}
			if !bytes.Equal(p.Body, page) {
				t.Errorf("Get(gzip + %s) body: %d bytes, want the page's %d", name, len(p.Body), len(page))
			}
		})
	}
}

func TestHugePage(t *testing.T) {
	const size = 1 << 30
	var served atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		if r.URL.Query().Has("length") {
			w.Header().Set("Content-Length", fmt.Sprint(size))
		}
		cw := &countWriter{w: w}
		io.CopyN(cw, zeroReader{}, size)
		served.Store(cw.n.Load())
	})
	c := newTestClient(t, Options{Allow: loopback})
	for _, q := range []string{"chunked", "length"} {
		t.Run(q, func(t *testing.T) {
			_, err := c.Get(context.Background(), srv.URL+"?"+q, Validators{})
			if !errors.Is(err, ErrTooLarge) {
				t.Errorf("Get(1 GB %s) error = %v, want ErrTooLarge", q, err)
			}
		})
	}
	tc := newTestClient(t, Options{Allow: loopback, Truncate: true, MaxBodyBytes: 1 << 20})
	p, err := tc.Get(context.Background(), srv.URL+"?chunked", Validators{})
	if err != nil || !p.Truncated || len(p.Body) != 1<<20 {
		t.Fatalf("Get(1 GB) with Truncate = %v, want 1 MiB truncated page", err)
	}
	tc.Close()
	srv.CloseClientConnections()
	srv.Close()
	if n := served.Load(); n >= size {
		t.Errorf("server wrote %d bytes, want the client to stop early", n)
	}
	if s := c.Stats(); s.TooLarge != 2 {
		t.Errorf("Stats().TooLarge = %d, want 2", s.TooLarge)
	}
}

func TestDecodedCap(t *testing.T) {
	page := bytes.Repeat([]byte("<p>same paragraph</p>\n"), 10000) // 220 KB
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(encode(t, "gzip", page))
	})
	c := newTestClient(t, Options{Allow: loopback, MaxDecodedBytes: 100 << 10})
	if _, err := c.Get(context.Background(), srv.URL, Validators{}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Get(220 KB decoded, cap 100 KB) error = %v, want ErrTooLarge", err)
	}
	tc := newTestClient(t, Options{Allow: loopback, MaxDecodedBytes: 100 << 10, Truncate: true})
	p, err := tc.Get(context.Background(), srv.URL, Validators{})
	if err != nil || !p.Truncated || !bytes.Equal(p.Body, page[:100<<10]) {
		t.Errorf("Get(220 KB decoded) with Truncate = %v, want first 100 KB", err)
	}
}

// dripServer sends headers, then one byte every interval until the client
// goes away.
func dripServer(t *testing.T, interval time.Duration) *httptest.Server {
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(200)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-tick.C:
			case <-r.Context().Done():
				return
			}
		}
	})
}

func TestDrip(t *testing.T) {
	srv := dripServer(t, 50*time.Millisecond)
	const budget = 300 * time.Millisecond
	t.Run("Timeout", func(t *testing.T) {
		c := newTestClient(t, Options{Allow: loopback, Timeout: budget})
		start := time.Now()
		_, err := c.Get(context.Background(), srv.URL, Validators{})
		el := time.Since(start)
		var te interface{ Timeout() bool }
		if !errors.Is(err, ErrTimeout) || !errors.As(err, &te) || !te.Timeout() {
			t.Errorf("Get(drip) error = %v, want a timeout", err)
		}
		if el > 3*budget {
			t.Errorf("Get(drip) took %v, want about %v", el, budget)
		}
		if s := c.Stats(); s.Timeout != 1 {
			t.Errorf("Stats().Timeout = %d, want 1", s.Timeout)
		}
	})
	t.Run("ContextDeadline", func(t *testing.T) {
		c := newTestClient(t, Options{Allow: loopback})
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		defer cancel()
		start := time.Now()
		_, err := c.Get(ctx, srv.URL, Validators{})
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrTimeout) {
			t.Errorf("Get(drip) error = %v, want deadline exceeded", err)
		}
		if el := time.Since(start); el > 3*budget {
			t.Errorf("Get(drip) took %v, want about %v", el, budget)
		}
	})
	checkNoLeak(t, 2*time.Second)
}

func TestContentType(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if ct := r.URL.Query().Get("ct"); ct != "none" {
			w.Header().Set("Content-Type", ct)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing
		}
		if enc := r.URL.Query().Get("enc"); enc != "" {
			w.Header().Set("Content-Encoding", enc)
		}
		io.WriteString(w, "body")
	})
	c := newTestClient(t, Options{Allow: loopback})
	tests := []struct {
		ct, enc string
		ok      bool
	}{
		{"text/html; charset=ISO-8859-1", "", true},
		{"TEXT/HTML", "", true},
		{"application/xhtml+xml; charset=utf-8", "", true},
		{"text/plain", "", true},
		// python3 -m http.server's listing; Tomcat; parameters that
		// mime.ParseMediaType refuses (browsers read the type).
		{"text/html; charset=utf-8", "", true},
		{"text/html;charset=UTF-8", "", true},
		{"text/html;charset=Shift_JIS;foo", "", true},
		{"text/html; charset=Shift_JIS; charset=utf-8", "", true},
		{"text/plain;;", "", true},
		{"text", "", false},
		{"text/html, text/html", "", false},
		{"text/javascript", "", false},
		{"image/png", "", false},
		{"application/pdf", "", false},
		{"application/octet-stream", "", false},
		{"none", "", false},
		{"text/html", "zstd", false},
	}
	for _, tt := range tests {
		t.Run(tt.ct+tt.enc, func(t *testing.T) {
			u := srv.URL + "?ct=" + url.QueryEscape(tt.ct) + "&enc=" + tt.enc
			p, err := c.Get(context.Background(), u, Validators{})
			if tt.ok && (err != nil || p.ContentType != tt.ct) {
				t.Errorf("Get(%q) = %v, want ContentType %q", tt.ct, err, tt.ct)
			}
			if !tt.ok && !errors.Is(err, ErrContentType) {
				t.Errorf("Get(%q, %q) error = %v, want ErrContentType", tt.ct, tt.enc, err)
			}
		})
	}
	html := newTestClient(t, Options{Allow: loopback, AllowedContentTypes: []string{"text/html"}})
	if _, err := html.Get(context.Background(), srv.URL+"?ct=text/plain", Validators{}); !errors.Is(err, ErrContentType) {
		t.Errorf("Get(text/plain) with only text/html allowed error = %v, want ErrContentType", err)
	}
}

func TestRevalidate(t *testing.T) {
	const etag, lastMod = `"abc"`, "Tue, 03 Mar 2026 10:00:00 GMT"
	var hits atomic.Int64
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("ETag", etag)
		w.Header().Set("Last-Modified", lastMod)
		if r.Header.Get("If-None-Match") == etag || r.Header.Get("If-Modified-Since") == lastMod {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>page</p>")
	})
	c := newTestClient(t, Options{Allow: loopback})
	p, err := c.Get(context.Background(), srv.URL, Validators{})
	if err != nil || p.NotModified || p.ETag != etag || p.LastModified != lastMod {
		t.Fatalf("Get() = %+v, %v, want a fresh page with validators", p, err)
	}
	for _, v := range []Validators{{ETag: p.ETag}, {LastModified: p.LastModified}, {p.ETag, p.LastModified}} {
		p, err := c.Get(context.Background(), srv.URL, v)
		if err != nil || !p.NotModified || p.Status != 304 || len(p.Body) != 0 {
			t.Errorf("Get(%+v) = %+v, %v, want NotModified", v, p, err)
		}
	}
	p, err = c.Get(context.Background(), srv.URL, Validators{ETag: `"old"`})
	if err != nil || p.NotModified || string(p.Body) != "<p>page</p>" {
		t.Errorf("Get(stale ETag) = %+v, %v, want the page", p, err)
	}
	if s := c.Stats(); s.NotModified != 3 || s.OK != 2 {
		t.Errorf("Stats() = %+v, want NotModified 3, OK 2", s)
	}
}

// TestNotModifiedUnasked serves 304 to every request, as a misconfigured
// cache does: a 304 is only an answer to a conditional request (RFC 9110
// §15.4.5), so to an unconditional one it is an unexpected status, not a
// page with an empty body that a caller would sign as the page.
func TestNotModifiedUnasked(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"abc"`)
		w.WriteHeader(http.StatusNotModified)
	})
	c := newTestClient(t, Options{Allow: loopback})
	if p, err := c.Get(context.Background(), srv.URL, Validators{}); !errors.Is(err, ErrStatus) {
		t.Errorf("Get(unconditional, 304) = %+v, %v, want ErrStatus", p, err)
	}
	if p, err := c.Get(context.Background(), srv.URL, Validators{ETag: `"abc"`}); err != nil || !p.NotModified {
		t.Errorf("Get(conditional, 304) = %+v, %v, want NotModified", p, err)
	}
	if s := c.Stats(); s.HTTPError != 1 || s.NotModified != 1 {
		t.Errorf("Stats() = %+v, want HTTPError 1, NotModified 1", s)
	}
}

func TestStatus(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscan(r.URL.Query().Get("code"), &code)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(code)
	})
	c := newTestClient(t, Options{Allow: loopback})
	for _, code := range []int{204, 300, 400, 404, 410, 500, 503} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			_, err := c.Get(context.Background(), fmt.Sprintf("%s?code=%d", srv.URL, code), Validators{})
			if ok := code == 204; ok != (err == nil) || !ok && !errors.Is(err, ErrStatus) {
				t.Errorf("Get(status %d) error = %v", code, err)
			}
		})
	}
}

func TestDialError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c := newTestClient(t, Options{Allow: loopback})
	if _, err := c.Get(context.Background(), "http://"+addr+"/", Validators{}); err == nil {
		t.Fatal("Get(closed port) succeeded")
	}
	nr := newTestClient(t, Options{Resolver: fakeResolver{}})
	if _, err := nr.Get(context.Background(), "http://nx.test/", Validators{}); err == nil {
		t.Fatal("Get(unresolvable) succeeded")
	} else if msg := err.Error(); strings.Count(msg, "fetch:") != 1 || !strings.Contains(msg, "resolving nx.test") {
		t.Errorf("Get(unresolvable) error %q, want one \"fetch:\" and the name", msg)
	}
	if s, ns := c.Stats(), nr.Stats(); s.DialError != 1 || ns.DialError != 1 {
		t.Errorf("Stats().DialError = %d, %d, want 1, 1", s.DialError, ns.DialError)
	}
}

func TestBadURL(t *testing.T) {
	c := newTestClient(t, Options{})
	for _, raw := range []string{"http://", "http://1.2.3.4.5/", "http://example.123/", "http://[::1/", "http://a.test:99999/", "http://08.0.0.1/", "::"} {
		if _, err := c.Get(context.Background(), raw, Validators{}); err == nil || errors.Is(err, ErrBlocked) {
			t.Errorf("Get(%q) error = %v, want a bad URL error", raw, err)
		}
	}
}

// TestURLWhiteSpace fetches result URLs as an index may store them: with
// the CR of a CRLF line, a newline, a tab from a copied cell, leading
// spaces. Browsers and canon.URL (the page's key) remove them as the URL
// Standard does before parsing; net/url refuses such a URL ("invalid
// control character"), which left the result unrefined.
func TestURLWhiteSpace(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>"+r.URL.Path+"</p>")
	})
	c := newTestClient(t, Options{Allow: loopback})
	for _, raw := range []string{srv.URL + "/page\r", srv.URL + "/page\r\n", "  " + srv.URL + "/page ", srv.URL + "/pa\tge", "\t" + srv.URL + "/p\nage\x00"} {
		p, err := c.Get(context.Background(), raw, Validators{})
		if err != nil {
			t.Errorf("Get(%q) error: %v", raw, err)
			continue
		}
		if p.URL != srv.URL+"/page" || string(p.Body) != "<p>/page</p>" {
			t.Errorf("Get(%q) = %s %q, want %s/page", raw, p.URL, p.Body, srv.URL)
		}
	}
}

func TestNewOptions(t *testing.T) {
	_, err := New(Options{Timeout: -1, MaxBodyBytes: -1, MaxConnsPerHost: -2, AllowedContentTypes: []string{"text"}})
	for _, field := range []string{"Timeout", "MaxBodyBytes", "MaxConnsPerHost", "AllowedContentTypes"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("New(bad options) error = %v, want it to name %s", err, field)
		}
	}
}

func TestSingleFlight(t *testing.T) {
	const n = 20
	var hits atomic.Int64
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		<-release
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>shared</p>")
	})
	c := newTestClient(t, Options{Allow: loopback})
	var wg sync.WaitGroup
	pages := make([]*Page, n)
	errs := make([]error, n)
	for i := range n {
		// Variants of one canonical URL: tracking parameters, fragment.
		u := srv.URL + "/p?b=2&a=1"
		switch i % 3 {
		case 1:
			u = srv.URL + "/p?a=1&b=2&utm_source=x"
		case 2:
			u = srv.URL + "/p?a=1&b=2#frag"
		}
		wg.Go(func() { pages[i], errs[i] = c.Get(context.Background(), u, Validators{}) })
	}
	for c.Stats().Shared < n-1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if h := hits.Load(); h != 1 {
		t.Errorf("server hit %d times by %d concurrent Gets, want 1", h, n)
	}
	for i := range n {
		if errs[i] != nil || string(pages[i].Body) != "<p>shared</p>" {
			t.Fatalf("Get %d = %v, want the shared page", i, errs[i])
		}
	}
	pages[0].Body[0] = 'X' // callers own their bodies
	for i := 1; i < n; i++ {
		if pages[i].Body[0] != '<' {
			t.Fatalf("page %d shares its body with page 0", i)
		}
	}
	if s := c.Stats(); s.OK != 1 || s.Shared != n-1 {
		t.Errorf("Stats() = %+v, want OK 1, Shared %d", s, n-1)
	}
}

// concurrency serves slowly and records the most requests in flight.
type concurrency struct {
	cur, max atomic.Int64
}

func (cc *concurrency) handler(w http.ResponseWriter, r *http.Request) {
	n := cc.cur.Add(1)
	for {
		m := cc.max.Load()
		if n <= m || cc.max.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(30 * time.Millisecond)
	cc.cur.Add(-1)
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "ok")
}

func TestHostLimit(t *testing.T) {
	var cc concurrency
	srv := newServer(t, cc.handler)
	c := newTestClient(t, Options{Allow: loopback, MaxConnsPerHost: 2})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			if _, err := c.Get(context.Background(), fmt.Sprintf("%s/%d", srv.URL, i), Validators{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if m := cc.max.Load(); m != 2 {
		t.Errorf("server saw %d concurrent requests with MaxConnsPerHost 2, want 2", m)
	}
}

func TestGlobalLimit(t *testing.T) {
	var cc concurrency
	srv := newServer(t, cc.handler)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r := fakeResolver{"a.test": addrs("127.0.0.1"), "b.test": addrs("127.0.0.1"), "c.test": addrs("127.0.0.1")}
	c := newTestClient(t, Options{Allow: loopback, Resolver: r, MaxConns: 2})
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Go(func() {
			u := fmt.Sprintf("http://%c.test:%s/%d", 'a'+i%3, port, i)
			if _, err := c.Get(context.Background(), u, Validators{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if m := cc.max.Load(); m != 2 {
		t.Errorf("server saw %d concurrent requests with MaxConns 2, want 2", m)
	}
}

func TestCancel(t *testing.T) {
	stall := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers
	})
	drip := dripServer(t, 20*time.Millisecond)
	c := newTestClient(t, Options{Allow: loopback, Timeout: time.Second})
	for name, u := range map[string]string{"headers": stall.URL, "body": drip.URL} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			_, err := c.Get(ctx, u, Validators{})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Get(cancelled) error = %v, want context.Canceled", err)
			}
			if el := time.Since(start); el > 500*time.Millisecond {
				t.Errorf("Get(cancelled after 50ms) returned after %v", el)
			}
		})
	}
	// Waiting for a slot respects ctx too.
	one := newTestClient(t, Options{Allow: loopback, MaxConns: 1, Timeout: time.Second})
	go one.Get(context.Background(), stall.URL+"/hold", Validators{})
	for one.Stats().InFlight == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := one.Get(ctx, stall.URL+"/other", Validators{}); !errors.Is(err, ErrTimeout) {
		t.Errorf("Get(waiting for a slot) error = %v, want ErrTimeout", err)
	}
	// The abandoned fetches end by their 1s deadline at the latest.
	checkNoLeak(t, 3*time.Second)
	if s := c.Stats(); s.InFlight != 0 || s.Canceled != 2 {
		t.Errorf("Stats() = %+v, want InFlight 0, Canceled 2", s)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>x</p>")
	})
	c := newTestClient(t, Options{Allow: loopback})
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%5)*time.Millisecond+time.Microsecond)
			defer cancel()
			c.Get(ctx, fmt.Sprintf("%s/%d", srv.URL, i%10), Validators{})
		})
	}
	wg.Wait()
	checkNoLeak(t, 3*time.Second)
	if s := c.Stats(); s.InFlight != 0 {
		t.Errorf("Stats().InFlight = %d, want 0", s.InFlight)
	}
}

func benchmarkGet(b *testing.B, enc string) {
	page := readTestdata(b, "bbc.com.52241221.html")
	wire := encode(b, enc, page)
	srv := newServer(b, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if enc != "" {
			w.Header().Set("Content-Encoding", enc)
		}
		w.Header().Set("Content-Length", fmt.Sprint(len(wire)))
		w.Write(wire)
	})
	c := newTestClient(b, Options{Allow: loopback})
	ctx := context.Background()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		p, err := c.Get(ctx, srv.URL, Validators{})
		if err != nil || len(p.Body) != len(page) {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet(b *testing.B)     { benchmarkGet(b, "") }
func BenchmarkGetGzip(b *testing.B) { benchmarkGet(b, "gzip") }

func TestHTTPS(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>tls</p>")
	}))
	t.Cleanup(srv.Close)
	c := newTestClient(t, Options{Allow: loopback})
	// Trust the test server's certificate; everything else is the default.
	c.hc.TLSConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	p, err := c.Get(context.Background(), srv.URL, Validators{})
	if err != nil || string(p.Body) != "<p>tls</p>" {
		t.Fatalf("Get(%q) = %v, want the page", srv.URL, err)
	}
	strict := newTestClient(t, Options{Allow: loopback})
	if _, err := strict.Get(context.Background(), srv.URL, Validators{}); err == nil {
		t.Errorf("Get(%q) with an untrusted certificate succeeded", srv.URL)
	}
}

// TestIDNAHost fetches names that are not ASCII, among them names with
// an underscore label beside a non-ASCII one: browsers open them and
// canon.URL keys them (the URL Standard's domain to ASCII does not apply
// STD3's letters-digits-hyphen rule), and the guard still checks the
// address the name resolves to.
func TestIDNAHost(t *testing.T) {
	var host string
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		host = r.Host
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r := fakeResolver{}
	tests := []struct{ name, want string }{
		{"BÜCHER.test", "xn--bcher-kva.test"},
		{"my_host.bücher.example", "my_host.xn--bcher-kva.example"},
		{"_dmarc.BÜCHER.example", "_dmarc.xn--bcher-kva.example"},
	}
	for _, tt := range tests {
		r[tt.want] = addrs("127.0.0.1")
	}
	c := newTestClient(t, Options{Allow: loopback, Resolver: r})
	for _, tt := range tests {
		u := "http://" + tt.name + ":" + port + "/"
		if _, err := canon.URL(u); err != nil {
			t.Fatalf("canon.URL(%q): %v", u, err)
		}
		if _, err := c.Get(context.Background(), u, Validators{}); err != nil {
			t.Errorf("Get(%q): %v", u, err)
			continue
		}
		if want := tt.want + ":" + port; host != want {
			t.Errorf("Get(%q) sent Host %q, want %q", u, host, want)
		}
	}
	u := "http://a／b.bücher.example:" + port + "/" // full-width solidus: "/" once mapped
	if _, err := c.Get(context.Background(), u, Validators{}); err == nil || !strings.Contains(err.Error(), "bad host name") {
		t.Errorf("Get(%q) = %v, want a bad host name", u, err)
	}
	strict := newTestClient(t, Options{Resolver: r})
	u = "http://my_host.bücher.example:" + port + "/"
	if _, err := strict.Get(context.Background(), u, Validators{}); !errors.Is(err, ErrBlocked) {
		t.Errorf("Get(%q) resolving to loopback, guard on: %v, want ErrBlocked", u, err)
	}
}

package proxy

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/internal/demo"
)

// engineHeads are answer heads of engines as fasthttp's client reads
// them, names as sent (winnow's client keeps them): the demo engine
// (net/http), Elasticsearch 8 (lower case) and Solr (Jetty).
var engineHeads = map[string]string{
	"demo":          "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\nX-Elastic-Product: Elasticsearch\r\nDate: Sun, 29 Nov 2026 06:00:00 GMT\r\nContent-Length: 26431\r\n\r\n",
	"elasticsearch": "HTTP/1.1 200 OK\r\nX-elastic-product: Elasticsearch\r\ncontent-type: application/vnd.elasticsearch+json;compatible-with=8\r\ncontent-length: 26431\r\n\r\n",
	"solr":          "HTTP/1.1 200 OK\r\nContent-Security-Policy: default-src 'none'; base-uri 'none'; connect-src 'self'; form-action 'self'; font-src 'self'; frame-ancestors 'none'; img-src 'self' data:; media-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self'; worker-src 'self';\r\nX-Content-Type-Options: nosniff\r\nX-Frame-Options: SAMEORIGIN\r\nX-XSS-Protection: 1; mode=block\r\nContent-Type: text/plain;charset=utf-8\r\nVary: Accept-Encoding, User-Agent\r\nContent-Length: 26431\r\n\r\n",
}

// engineHead returns the head of kind parsed as winnow's engine client
// parses it.
func engineHead(tb testing.TB, kind string) *fasthttp.ResponseHeader {
	var h fasthttp.ResponseHeader
	h.DisableNormalizing()
	if err := h.Read(bufio.NewReader(strings.NewReader(engineHeads[kind]))); err != nil {
		tb.Fatal(err)
	}
	return &h
}

// BenchmarkCopyAnswerHeader copies an engine answer's head to a client
// response, as every refined answer and answer from the answer cache
// does.
func BenchmarkCopyAnswerHeader(b *testing.B) {
	for _, kind := range []string{"demo", "elasticsearch", "solr"} {
		b.Run(kind, func(b *testing.B) {
			src := engineHead(b, kind)
			var dst fasthttp.ResponseHeader
			b.ReportAllocs()
			for b.Loop() {
				dst.Reset()
				copyAnswerHeader(&dst, src)
			}
		})
	}
}

// BenchmarkAnswerFromCache serves the demo engine's answer to a search of
// 50 results from the answer cache, as the proxy does when the engine
// answers as before: the cache hit's own work (the comparison with the
// remembered answer, the signatures' check, the metrics, the headers),
// without the exchange with the engine and the client around it.
func BenchmarkAnswerFromCache(b *testing.B) {
	d := startDemo(b, demo.Options{})
	s, base := startProxy(b, Options{Engines: []Engine{esEngine(d.URL())}})
	const path = "/llvm/_search?q=the&size=50"
	for range 3 { // signatures cached, the answer seen twice
		if code, body := get(b, base+path); code != http.StatusOK {
			b.Fatalf("warm-up GET = %d %s", code, body)
		}
		s.ref.wait()
	}
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(path)
	r := &search{ctx: &ctx, b: s.transp, orig: clientRequest(&ctx)}
	var err error
	if r.p, err = s.params(&ctx); err != nil {
		b.Fatal(err)
	}
	breq, win, err := s.rewrite(r.b, r.orig)
	if err != nil {
		b.Fatal(err)
	}
	r.win = win
	resp, err := r.b.do(time.Time{}, breq, nil)
	if err != nil {
		b.Fatal(err)
	}
	held, err := s.inflight.readAnswer(waitBound{}, resp)
	if err != nil {
		b.Fatal(err)
	}
	defer s.inflight.give(held)
	defer s.inflight.releaseResponse(resp)
	key := answerKey(r.orig.Method, r.orig.Path, r.orig.Body, r.p.mode, r.p.explain, r.win)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		if !s.answerFromCache(r, key, resp) {
			b.Fatal("the engine's answer was not served from the answer cache")
		}
	}
}

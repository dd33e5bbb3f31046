package proxy

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
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

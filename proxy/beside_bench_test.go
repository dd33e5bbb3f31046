package proxy

import (
	"net/http"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/loadgen"
)

// BenchmarkBesidePassthrough sends the same search of 50 results, one
// request at a time, through a fasthttp pass-through and through the
// proxy's three paths, in front of one demo engine, all in this process:
// "gateway" relays the answer (winnow_mode=off), "cached" serves it from
// the answer cache, "refined" parses, refines and renders every answer
// (answer cache off). Its times carry the VM's noise; its instruction
// counts do not: under callgrind with one P (no idle P spins), a path's
// instructions a request less the pass-through's are what winnow's own
// code adds, the engine's and the client's work being the same (but for
// the over-fetch and the larger group answer, which count for winnow):
//
//	go test -c -o beside.test ./proxy && cd proxy
//	GOMAXPROCS=1 GOGC=off valgrind --tool=callgrind ./beside.test -test.run '^$' -test.bench 'BesidePassthrough/cached$' -test.benchtime 300x
//
// once at 300x and once at 900x: the difference of the two totals over
// 600 is a request's instructions, set-up cancelled out.
func BenchmarkBesidePassthrough(b *testing.B) {
	d := startDemo(b, demo.Options{})
	const path = "/llvm/_search?q=the&size=50"
	pt, err := loadgen.StartPassthrough(strings.TrimPrefix(d.URL(), "http://"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pt.Close() })
	sc, cached := startProxy(b, Options{Engines: []Engine{esEngine(d.URL())}})
	sr, refined := startProxy(b, Options{Engines: []Engine{esEngine(d.URL())}, AnswerCacheBytes: -1})
	for range 3 { // signatures cached, the answer seen twice
		for _, base := range []string{cached, refined} {
			if code, body := get(b, base+path); code != http.StatusOK {
				b.Fatalf("warm-up GET = %d %s", code, body)
			}
		}
		sc.ref.wait()
		sr.ref.wait()
	}
	for _, c := range []struct{ name, url string }{
		{"passthrough", pt.URL() + path},
		{"gateway", cached + path + "&winnow_mode=off"},
		{"cached", cached + path},
		{"refined", refined + path},
	} {
		b.Run(c.name, func(b *testing.B) {
			client := &fasthttp.Client{}
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			req.SetRequestURI(c.url)
			for b.Loop() {
				if err := client.Do(req, resp); err != nil || resp.StatusCode() != http.StatusOK {
					b.Fatalf("GET %s: %d %v", c.url, resp.StatusCode(), err)
				}
			}
			b.SetBytes(int64(len(resp.Body())))
		})
	}
}

package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/proxy/engine"
)

// warmRefine starts the demo engine and a proxy in front of it, sends one
// search for 50 results through the proxy so every page's signature is
// cached, and returns the server, the backend's answer to the rewritten
// request (what the proxy parses: 53 hits for a size of 50 and factor 3)
// and the client's window.
func warmRefine(b testing.TB) (*Server, []byte, engine.Window) {
	b.Helper()
	d := startDemo(b, demo.Options{})
	s, base := startProxy(b, Options{Engines: []Engine{esEngine(d.URL())}})
	const path = "/llvm/_search?q=the&size=50"
	warm := func() {
		if code, body := get(b, base+path); code != http.StatusOK {
			b.Fatalf("warm-up GET = %d %s", code, body)
		}
		s.ref.wait()
	}
	warm()
	breq, win, err := s.transp.adapter.Rewrite(engine.Request{Method: "GET", Path: path}, s.o.Factor)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.Get(d.URL() + breq.Path)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	p, err := s.transp.adapter.Parse(body, "application/json")
	if err != nil {
		b.Fatal(err)
	}
	// On a loaded machine a page may miss the fetch client's deadline and
	// stay uncached; the next search fetches it again, as in service.
	ref := s.ref.refine(context.Background(), p.Results, s.refineOptions())
	for try := 0; ref.cached < 50 && try < 3; try++ {
		warm()
		ref = s.ref.refine(context.Background(), p.Results, s.refineOptions())
	}
	if ref.cached < 50 {
		b.Fatalf("warm cache: %d of %d results cached after four searches, want 50; fetches %+v",
			ref.cached, len(p.Results), s.fetcher.Stats())
	}
	return s, body, win
}

func (s *Server) refineOptions() refineOptions {
	return refineOptions{topK: s.o.TopK, budget: s.o.Budget, decision: s.o.Decision, defaultDecision: true}
}

// BenchmarkRefineCached50 measures the refinement of one query's 50 top
// results with every signature cached (look-up, clustering, marks) and
// the rendering of the Elasticsearch answer in group mode: the CPU that
// winnow adds to a warm query, short of HTTP and JSON parsing.
func BenchmarkRefineCached50(b *testing.B) {
	s, body, win := warmRefine(b)
	a := s.transp.light
	p, err := a.Parse(body, "application/json")
	if err != nil {
		b.Fatal(err)
	}
	o := s.refineOptions()
	ctx := context.Background()
	for _, c := range groupRequests {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				ref := s.ref.refine(ctx, p.Results, o)
				if _, err := a.Render(nil, p, c.p.marks(ref.marks), c.p.render(), win); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// groupRequests are the group-mode requests the refinement benchmarks
// render for, as the handler renders them: a default one (each
// duplicate's verdict without its explanation) and one with
// winnow_explain.
var groupRequests = []struct {
	name string
	p    params
}{{"compact", params{mode: engine.Group}}, {"explain", params{mode: engine.Group, explain: true}}}

// BenchmarkTransparentCached50 adds the parse of the backend's answer to
// [BenchmarkRefineCached50]: everything the transparent path does to a
// warm answer of 50 results besides the HTTP exchanges.
func BenchmarkTransparentCached50(b *testing.B) {
	s, body, win := warmRefine(b)
	a := s.transp.light
	o := s.refineOptions()
	ctx := context.Background()
	for _, c := range groupRequests {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				p, err := a.Parse(body, "application/json")
				if err != nil {
					b.Fatal(err)
				}
				ref := s.ref.refine(ctx, p.Results, o)
				if _, err := a.Render(nil, p, c.p.marks(ref.marks), c.p.render(), win); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAnswerCacheHit50 is what the transparent path does instead
// when the backend's answer of 50 results is the one remembered, in the
// two cases: byte for byte the same (the rendering is sent as it is), and
// the same but for Elasticsearch's "took" (the new head and the remembered
// rest are copied into the response buffer). The comparison of the
// answers and the check that every signature is still cached are in both.
func BenchmarkAnswerCacheHit50(b *testing.B) {
	s, body, win := warmRefine(b)
	p, err := s.transp.light.Parse(body, "application/json")
	if err != nil {
		b.Fatal(err)
	}
	ref := s.ref.refine(context.Background(), p.Results, s.refineOptions())
	out, err := s.transp.light.Render(nil, p, ref.marks, engine.Group, win)
	if err != nil || ref.hot == nil {
		b.Fatalf("render: %v; remembered list %v", err, ref.hot != nil)
	}
	a := &answer{body: body, extent: p.Extent(), out: out, hot: ref.hot, cached: ref.cached}
	took := bytes.Replace(body, []byte(`{"took":`), []byte(`{"took":1234`), 1)
	for _, c := range []struct {
		name string
		body []byte
		raw  bool
	}{{"same", bytes.Clone(body), true}, {"took", took, false}} { // a copy: bytes.Equal of one slice with itself returns at once
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, 2*len(out))
			b.SetBytes(int64(len(c.body)))
			b.ReportAllocs()
			for b.Loop() {
				r, raw, ok := a.render(dst[:0], c.body, s.cache, time.Now())
				if !ok || raw != c.raw || len(r) < len(out) {
					b.Fatalf("render: ok %v raw %v, %d bytes", ok, raw, len(r))
				}
			}
		})
	}
}

// BenchmarkRefineTagged50 is [BenchmarkRefineCached50] on a list whose
// every result carries winnow index's tags (the groups the cached
// refinement found): the path in front of a tagged index, where nothing
// is looked up, fetched or signed.
func BenchmarkRefineTagged50(b *testing.B) {
	s, body, win := warmRefine(b)
	a := s.transp.light
	p, err := a.Parse(body, "application/json")
	if err != nil {
		b.Fatal(err)
	}
	o := s.refineOptions()
	ctx := context.Background()
	ref := s.ref.refine(ctx, p.Results, o)
	for i := range p.Results[:o.topK] {
		m := ref.marks[i]
		p.Results[i].Group, p.Results[i].GroupWinner = m.Cluster, m.Winner == i
		// Another address of the same page: the list is not the warm
		// one the proxy remembers (hotLists), as a tagged index's is not.
		p.Results[i].URL += "#tagged"
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		ref := s.ref.refine(ctx, p.Results, o)
		if ref.service < o.topK {
			b.Fatalf("%d of %d results grouped by their tags", ref.service, o.topK)
		}
		if _, err := a.Render(nil, p, ref.marks, engine.Group, win); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRefineKnownList measures [Server.refine] alone on the demo
// answer's 53 results when every page is signed and the list was seen
// before: the path of a popular query with the answer cache off. Each
// iteration refines a list parsed anew (its URLs fresh strings, as the
// parse of each answer gives them), taken in turn from a few copies.
func BenchmarkRefineKnownList(b *testing.B) {
	s, body, _ := warmRefine(b)
	lists := make([][]engine.Result, 8)
	for i := range lists {
		p, err := s.transp.light.Parse(bytes.Clone(body), "application/json")
		if err != nil {
			b.Fatal(err)
		}
		lists[i] = p.Results
	}
	ctx := context.Background()
	p := params{mode: engine.Group, decision: s.o.Decision}
	if ref := s.refine(ctx, lists[0], p); ref.hot == nil || ref.cached < 50 {
		b.Fatalf("known list: remembered %v, %d results cached", ref.hot != nil, ref.cached)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		ref := s.refine(ctx, lists[i%len(lists)], p)
		if ref.cached < 50 {
			b.Fatalf("%d results cached", ref.cached)
		}
		i++
	}
}

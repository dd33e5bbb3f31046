package proxy

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/internal/demo"
)

// TestRouteRemembered checks that a remembered route is the gate's own
// for the request it was made for: the same route and path for a search
// asked again, winnow's parameters stripped, a refusal refused again,
// and a request with a body checked every time.
func TestRouteRemembered(t *testing.T) {
	d := startDemo(t, demo.Options{})
	s, _ := startProxy(t, Options{Engines: []Engine{esEngine(d.URL())}})
	b := s.transp
	request := func(method, uri, body string) *fasthttp.RequestCtx {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.SetRequestURI(uri)
		if body != "" {
			ctx.Request.Header.SetContentType("application/json")
			ctx.Request.SetBodyString(body)
		}
		return &ctx
	}
	for _, c := range []struct {
		method, uri, body string
		refused           bool
	}{
		{"GET", "/llvm/_search?q=the&size=5", "", false},
		{"GET", "/llvm/_search?size=5&q=the&winnow_mode=remove", "", false},
		{"GET", "/ll%76m/_search?q=a+b", "", false},
		{"GET", "/llvm/_search?scroll=1m&q=x", "", false},
		{"POST", "/llvm/_search", `{"size":3}`, false},
		{"DELETE", "/llvm", "", true},
		{"PUT", "/llvm/_doc/scroll", "", true},
		{"GET", "/llvm/_search/../_doc/1", "", true},
		{"GET", "/llvm/_search?size=5&q=" + strings.Repeat("long+", 300), "", false},
	} {
		want := clientRequest(request(c.method, c.uri, c.body))
		wantRt, wantErr := b.route(request(c.method, c.uri, c.body), &want)
		if (wantErr != nil) != c.refused {
			t.Fatalf("%s %s: the gate says %v, want refused %v", c.method, c.uri, wantErr, c.refused)
		}
		for i := range 2 {
			ctx := request(c.method, c.uri, c.body)
			got := clientRequest(ctx)
			rt, err := s.route(b, ctx, &got)
			if (err != nil) != c.refused || got.Path != want.Path || rt.Kind != wantRt.Kind || rt.Cursor != wantRt.Cursor || rt.Path != wantRt.Path {
				t.Errorf("%s %s, ask %d: route %+v, path %q, %v; want %+v, %q, refused %v", c.method, c.uri, i+1, rt, got.Path, err, wantRt, want.Path, c.refused)
			}
		}
	}
	s.memo.routes.mu.Lock()
	n := len(s.memo.routes.cur)
	s.memo.routes.mu.Unlock()
	if n != 4 {
		t.Errorf("%d routes remembered, want the 4 searches without a body and of a short URI", n)
	}
	// A remembered route is found without allocating.
	ctx := request("GET", "/llvm/_search?q=the&size=5", "")
	orig := clientRequest(ctx)
	if allocs := testing.AllocsPerRun(50, func() { s.route(b, ctx, &orig) }); allocs != 0 {
		t.Errorf("a remembered route: %v allocations, want 0", allocs)
	}
}

// TestTwoGenBytes: getBytes finds a key of bytes in either generation,
// moving one of the previous generation back, and misses an absent one.
func TestTwoGenBytes(t *testing.T) {
	g := newTwoGen[string, int](2)
	g.put("a", 1)
	g.put("b", 2)
	g.put("c", 3) // a and b become the previous generation
	for _, c := range []struct {
		key  string
		want int
		ok   bool
	}{{"c", 3, true}, {"a", 1, true}, {"x", 0, false}} {
		if v, ok := getBytes(g, []byte(c.key)); v != c.want || ok != c.ok {
			t.Errorf("getBytes(%q) = %d, %v; want %d, %v", c.key, v, ok, c.want, c.ok)
		}
	}
	g.mu.Lock()
	_, moved := g.cur["a"]
	g.mu.Unlock()
	if !moved {
		t.Error("a key found in the previous generation was not moved to the current one")
	}
}

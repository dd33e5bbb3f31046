package proxy

import (
	"bytes"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/valyala/fasthttp"
)

// handle routes a request. fasthttp does not recover handler panics: a
// panic is logged and answered with 500 so the process lives on.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	route := "proxy"
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler_panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			ctx.ResetBody()
			ctx.Error("winnow: internal error", fasthttp.StatusInternalServerError)
		}
		s.m.request(route, ctx.Response.StatusCode(), time.Since(start))
	}()
	p := string(ctx.Path())
	switch {
	case p == "/healthz":
		route = "healthz"
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.WriteString("ok\n")
	case p == "/readyz":
		route = "readyz"
		ctx.SetContentType("text/plain; charset=utf-8")
		if !s.ready.Load() {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.WriteString("not ready\n")
			return
		}
		ctx.WriteString("ready\n")
	case p == "/metrics":
		route = "metrics"
		ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
		if err := s.m.write(ctx); err != nil {
			s.log.Warn("metrics_write_failed", "err", err)
		}
	case p == "/_winnow/search" || p == "/_winnow/search.json" || (p == "/" && s.wantsPage(ctx)):
		route = "search"
		s.searchPage(ctx)
	case s.transp != nil:
		s.transparent(ctx)
	default:
		route = "notfound"
		ctx.Error("winnow: no transparent backend; the search page is at /_winnow/search", fasthttp.StatusNotFound)
	}
}

// wantsPage reports whether a request for "/" comes from a browser (or has
// no transparent backend to go to) and so gets the search page.
func (s *Server) wantsPage(ctx *fasthttp.RequestCtx) bool {
	return s.transp == nil || (ctx.IsGet() && bytes.Contains(ctx.Request.Header.Peek("Accept"), []byte("text/html")))
}

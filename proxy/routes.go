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
	rt := routeProxy
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler_panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			ctx.ResetBody()
			ctx.Error("winnow: internal error", fasthttp.StatusInternalServerError)
		}
		s.m.request(rt, ctx.Response.StatusCode(), time.Since(start))
	}()
	p := string(ctx.Path())
	switch {
	case p == "/healthz":
		rt = routeHealthz
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.WriteString("ok\n")
	case p == "/readyz":
		rt = routeReadyz
		ctx.SetContentType("text/plain; charset=utf-8")
		if !s.ready.Load() {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.WriteString("not ready: not listening, or shutting down\n")
			return
		}
		ok, report := s.checkReadiness()
		if !ok {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.WriteString("not ready\n" + report)
			return
		}
		ctx.WriteString("ready\n" + report)
	case p == "/metrics":
		rt = routeMetrics
		ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
		if err := s.m.write(ctx); err != nil {
			s.log.Warn("metrics_write_failed", "err", err)
		}
	case p == FeedbackPath:
		rt = routeFeedback
		s.feedback(ctx)
	case p == "/_winnow/search" || p == "/_winnow/search.json" || (p == "/" && s.wantsPage(ctx)):
		rt = routeSearch
		s.searchPage(ctx)
	case s.transp != nil:
		s.transparent(ctx)
	default:
		rt = routeNotFound
		ctx.Error("winnow: no transparent engine; the search page is at /_winnow/search", fasthttp.StatusNotFound)
	}
}

// wantsPage reports whether a request for "/" gets the search page: a
// GET from a browser, a bare GET / from a client that states no
// preference (curl sends "*/*"), or any request when there is no
// transparent engine. A request with a query string that does not ask for
// HTML (a search of an engine whose path is "/", such as Omega), and a
// client that asks for JSON (the Elasticsearch clients' GET / for the
// cluster's version), go to the engine.
func (s *Server) wantsPage(ctx *fasthttp.RequestCtx) bool {
	if s.transp == nil {
		return true
	}
	if !ctx.IsGet() && !ctx.IsHead() {
		return false
	}
	accept := ctx.Request.Header.Peek("Accept")
	if bytes.Contains(accept, []byte("text/html")) {
		return true
	}
	return len(ctx.URI().QueryString()) == 0 && (len(accept) == 0 || string(accept) == "*/*")
}

package proxy

import (
	"errors"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// route checks a client request against the engine's allow-list
// ([engine.Gate]): by default the proxy is a read-only search gateway,
// and a request that is not one of the engine's search routes is
// refused before any byte of it reaches the engine. A request that
// passes gets the path the gate checked (decoded, with winnow's own
// parameters removed), so the engine sees exactly the route allowed.
// Engine.AllowWrites opens every method and path: a request outside the
// allow-list then goes on as the client sent it, unrefined; one that
// presents a scroll or point in time ID winnow did not give is refused
// still ([engine.ErrCursorID]).
func (u *upstream) route(ctx *fasthttp.RequestCtx, orig *engine.Request) (engine.Route, error) {
	gr := gateRequest(ctx)
	gr.Method, gr.Body = orig.Method, orig.Body
	rt, err := u.gate.Check(gr)
	if err != nil {
		if u.AllowWrites && !errors.Is(err, engine.ErrCursorID) {
			return engine.Route{}, nil
		}
		return rt, err
	}
	orig.Path = rt.Path
	if rt.Body != nil {
		orig.Body = rt.Body
	}
	for k := range rt.Query {
		if strings.HasPrefix(k, "winnow_") {
			delete(rt.Query, k)
		}
	}
	if len(rt.Query) > 0 {
		orig.Path += "?" + rt.Query.Encode()
	}
	return rt, nil
}

// routed is a request route let through: its route and the path (with
// the checked query) the engine is sent.
type routed struct {
	rt   engine.Route // without its Query, which route consumed
	path string
}

// route is the transparent engine's route, remembered for requests
// without a body: what the gate decides and the path it hands on depend
// on the method, the content type and the URI alone, so a popular
// search is split, decoded, checked and encoded once, not on every
// request. A refused request, and one whose URI is longer than
// memoMaxURI, is checked every time.
func (s *Server) route(b *upstream, ctx *fasthttp.RequestCtx, orig *engine.Request) (engine.Route, error) {
	uri := ctx.Request.Header.RequestURI()
	if len(orig.Body) > 0 || len(uri) > memoMaxURI {
		return b.route(ctx, orig)
	}
	var room [256]byte // the key of a search, without allocating
	key := append(append(append(append(append(room[:0], orig.Method...), ' '), ctx.Request.Header.ContentType()...), ' '), uri...)
	if r, ok := getBytes(s.memo.routes, key); ok {
		orig.Path = r.path
		return r.rt, nil
	}
	rt, err := b.route(ctx, orig)
	if err == nil {
		kept := rt
		kept.Query = nil
		s.memo.routes.put(string(key), routed{kept, orig.Path})
	}
	return rt, err
}

// engineError answers status with reason in the shape of the engine's own
// errors ([engine.Kind.ErrorBody]), so a client library reports it as it
// reports its engine's. typ is the Elasticsearch error type.
func (u *upstream) engineError(ctx *fasthttp.RequestCtx, status int, typ, reason string) {
	b, ct, hdr := u.kind.ErrorBody(nil, status, typ, reason, gateRequest(ctx))
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	for _, h := range hdr {
		ctx.Response.Header.Set(h[0], h[1])
	}
	ctx.SetContentType(ct)
	ctx.SetBody(b)
}

// gateRequest is the client's request as the gate looks at it.
func gateRequest(ctx *fasthttp.RequestCtx) engine.GateRequest {
	return engine.GateRequest{
		Method:      string(ctx.Method()),
		URI:         string(ctx.Request.Header.RequestURI()),
		ContentType: string(ctx.Request.Header.ContentType()),
		Body:        ctx.PostBody(),
	}
}

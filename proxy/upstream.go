package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// upstream is one configured search engine with its adapters and its
// HTTP client: everything winnow sends to an engine goes through it.
type upstream struct {
	Engine
	// kind is the engine's kind: its routes, defaults and error shape.
	kind    *engine.Kind
	adapter engine.Adapter
	// light speaks the same API but parses only URLs and texts: the
	// transparent path needs no titles or snippets.
	light engine.Adapter
	base  *url.URL
	// origin is base's scheme, user and host as url.URL.String writes
	// them, and basePath its path without a trailing slash; plainBase
	// says base has nothing else that String would write (an escaped
	// path, a bare '?', a fragment) and a path String keeps as it is,
	// so appendURI can write a request's URI without url.URL.
	origin, basePath string
	plainBase        bool
	// client holds the connections to the engine's one host: a
	// HostClient, not a Client, which would look the host up in a
	// locked map on every request.
	client *fasthttp.HostClient
	// gate is the read-only gateway's allow-list of search routes.
	gate *engine.Gate
	// metrics are the engine's labelled metrics ([metrics.engine]).
	metrics engineChildren
	// cut is told of an answer relayed to a client that the engine's
	// connection ended short (set by the server; nil: not told).
	cut func(err error, relayed int64)
}

func newUpstream(e Engine) (*upstream, error) {
	if e.Name == "" {
		return nil, errors.New("name is empty")
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q is not an http(s) URL", e.URL)
	}
	a, err := engine.New(e.Adapter)
	if err != nil {
		return nil, err
	}
	lightCfg := e.Adapter
	lightCfg.URLOnly = true
	light, err := engine.New(lightCfg)
	if err != nil {
		return nil, err
	}
	kind, err := engine.LookupKind(e.Adapter.Kind)
	if err != nil {
		return nil, err
	}
	up := &upstream{
		Engine:  e,
		kind:    kind,
		adapter: a,
		light:   light,
		base:    u,
		gate:    engine.NewGate(e.Adapter),
		client: &fasthttp.HostClient{
			Addr:  fasthttp.AddMissingPort(u.Host, u.Scheme == "https"),
			IsTLS: u.Scheme == "https",
			Name:  "winnow",
			// ReadTimeout caps the deadline of a request's head;
			// dialEngine's connections keep it for a body winnow keeps
			// and bound a relayed body by the engine's silence.
			DialTimeout:  dialEngine(e.Timeout),
			ReadTimeout:  e.Timeout,
			WriteTimeout: e.Timeout,
			MaxConns:     1024,
			// Bodies are streamed, not read before Do returns, so no
			// answer is in memory before the budget of bytes in flight
			// admits it (readAnswer) or it streams to the client (relay).
			StreamResponseBody:            true,
			DisablePathNormalizing:        true,
			DisableHeaderNamesNormalizing: true,
			NoDefaultUserAgentHeader:      true,
		},
	}
	up.client.RetryIfErr = up.retry
	up.origin = (&url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host}).String()
	up.basePath = strings.TrimSuffix(u.Path, "/")
	up.plainBase = u.RawPath == "" && !u.ForceQuery && u.Fragment == "" && pathKept(up.basePath) &&
		(up.basePath == "" || up.basePath[0] == '/')
	return up, nil
}

// appendURI appends the URI of request path p (a path and its query) on
// the engine to dst: the base URL with p's path appended to its path and
// p's query, as url.URL.String writes it. Under a plain base URL, a path
// whose every byte String keeps as it is (a search's always) is appended
// as it is: through url.URL the URI cost 1.1 k instructions and an
// allocation a request.
func (u *upstream) appendURI(dst []byte, p string) []byte {
	pth, rawQuery, _ := strings.Cut(p, "?")
	if u.plainBase && pathKept(pth) && (u.basePath != "" || pth == "" || pth[0] == '/') {
		dst = append(append(append(dst, u.origin...), u.basePath...), pth...)
		if rawQuery != "" {
			dst = append(append(dst, '?'), rawQuery...)
		}
		return dst
	}
	target := *u.base
	target.Path = u.basePath + pth
	target.RawQuery = rawQuery
	return append(dst, target.String()...)
}

// pathKeeps says, for each byte, whether url.URL.EscapedPath keeps it as
// it is in a path (it escapes a path byte by byte): asked of net/url,
// so appendURI writes what it writes.
var pathKeeps = func() (keeps [256]bool) {
	for c := range keeps {
		p := "/" + string([]byte{byte(c)})
		keeps[c] = (&url.URL{Path: p}).EscapedPath() == p
	}
	return keeps
}()

// pathKept reports whether url.URL.EscapedPath keeps path p as it is.
func pathKept(p string) bool {
	for i := range len(p) {
		if !pathKeeps[p[i]] {
			return false
		}
	}
	return true
}

// retry tells fasthttp whether a request that failed on a connection
// the engine had closed (an idle keep-alive connection, before any byte
// of an answer) is sent again: a read that a second run does not change
// is, POST searches included, which fasthttp would not retry by itself.
// A request that opens, moves or closes a cursor (a scroll, a point in
// time) is not, nor one the gateway would refuse (a write on an engine
// with AllowWrites).
func (u *upstream) retry(req *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	uri := string(req.URI().RequestURI())
	uri = strings.TrimPrefix(uri, strings.TrimSuffix(u.base.Path, "/"))
	rt, gerr := u.gate.Check(engine.GateRequest{
		Method:      string(req.Header.Method()),
		URI:         uri,
		ContentType: string(req.Header.ContentType()),
		Body:        req.Body(),
	})
	if gerr != nil {
		return false, false
	}
	// The engine may have run the request before the connection failed:
	// one that opens, moves or closes a cursor is not sent twice. A
	// second scroll or point in time opened would stay open on the
	// engine until its keep-alive ends, and a scroll continuation sent
	// again skips a page.
	switch rt.Kind {
	case engine.RouteScroll, engine.RouteClearScroll, engine.RoutePIT:
		return false, false
	case engine.RouteSearch, engine.RouteMsearch:
		if _, query, _ := strings.Cut(uri, "?"); query != "" {
			if q, err := url.ParseQuery(query); err != nil || q.Has("scroll") {
				return false, false
			}
		}
	}
	return false, true
}

// hopHeaders are not forwarded in either direction (RFC 9110 §7.6.1);
// Accept-Encoding is dropped so answers come back uncompressed to parse.
// In lower case, by length, so isHop compares a name only with those of
// its length.
var hopHeaders = byLength("connection", "keep-alive", "proxy-connection", "proxy-authenticate",
	"proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade",
	"host", "accept-encoding", "content-length")

// byLength returns names by length: [n] holds those of n bytes.
func byLength(names ...string) [][]string {
	var by [][]string
	for _, n := range names {
		for len(by) <= len(n) {
			by = append(by, nil)
		}
		by[len(n)] = append(by[len(n)], n)
	}
	return by
}

// isHop reports whether header k is in hopHeaders, in any case, without
// allocating or hashing: it runs for every header of every request and
// answer.
func isHop(k []byte) bool {
	if len(k) >= len(hopHeaders) {
		return false
	}
	for _, h := range hopHeaders[len(k)] {
		if equalLower(k, h) {
			return true
		}
	}
	return false
}

// equalLower reports whether k is lower, a lower-case ASCII name, in
// any case.
func equalLower(k []byte, lower string) bool {
	if len(k) != len(lower) {
		return false
	}
	for i, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// headerSetter is a fasthttp request or response header.
type headerSetter interface {
	SetCanonical(key, value []byte)
	SetBytesKV(key, value []byte)
}

// setHeader sets header k to v in h as h.SetBytesKV does. SetBytesKV
// normalizes k (upper case first and after each '-', lower case
// elsewhere) in a copy, byte by byte; a name already in that form, as
// most engines and clients send them, goes to SetCanonical as it is:
// copying an engine's head to the client cost 4.2 k instructions,
// mostly this (BenchmarkCopyAnswerHeader/demo under callgrind).
func setHeader[H headerSetter](h H, k, v []byte) {
	if canonicalName(k) {
		h.SetCanonical(k, v)
	} else {
		h.SetBytesKV(k, v)
	}
}

// canonicalName reports whether fasthttp's normalization leaves header
// name k as it is: no CR or LF (made spaces), and upper case exactly at
// the start and after each '-' (a name with a byte no header name may
// have is left as it is, and so is one of this form).
func canonicalName(k []byte) bool {
	upper := true
	for _, c := range k {
		switch {
		case 'a' <= c && c <= 'z':
			if upper {
				return false
			}
		case 'A' <= c && c <= 'Z':
			if !upper {
				return false
			}
		case c == '\r' || c == '\n':
			return false
		}
		upper = c == '-'
	}
	return true
}

// ownHeader starts winnow's own request headers (X-Winnow-Mode, ...),
// never forwarded.
const ownHeader = "x-winnow-"

// forwardable reports whether a client's request header goes on to the
// backend: not hop-by-hop, not one of winnow's own X-Winnow-*.
func forwardable(k []byte) bool {
	if len(k) >= len(ownHeader) && equalLower(k[:len(ownHeader)], ownHeader) {
		return false
	}
	return !isHop(k)
}

// do sends r to the backend. One deadline bounds connecting, sending
// the request and reading the answer's head: the engine's timeout from
// now, or deadline (zero: none), whichever comes first. The body, not read yet,
// stays under that deadline on the connection (dialEngine) for a caller
// that keeps it whole (readAnswer); relay lifts it, so a body streamed
// to the client is bounded only by the engine's silence.
// The headers are the client's (client not nil) minus hop-by-hop and
// X-Winnow-* ones, else r.Header. The answer's body is
// resp.BodyStream(), to read within the budget (readAnswer) or stream
// to the client (relay). The caller owns resp: it releases it with
// fasthttp.ReleaseResponse, or relay does.
func (u *upstream) do(deadline time.Time, r engine.Request, client *fasthttp.RequestHeader) (*fasthttp.Response, error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	var uri [256]byte
	req.SetRequestURIBytes(u.appendURI(uri[:0], r.Path))
	req.Header.SetMethod(cmp.Or(r.Method, "GET"))
	if client != nil {
		for k, v := range client.All() {
			if forwardable(k) {
				setHeader(&req.Header, k, v)
			}
		}
	} else {
		for k, v := range r.Header {
			req.Header.Set(k, v)
		}
	}
	req.Header.Del("Accept-Encoding")
	if len(r.Body) > 0 {
		req.SetBodyRaw(r.Body)
	}
	if d := time.Now().Add(u.Timeout); deadline.IsZero() || d.Before(deadline) {
		deadline = d
	}
	resp := fasthttp.AcquireResponse()
	if err := u.client.DoDeadline(req, resp, deadline); err != nil {
		fasthttp.ReleaseResponse(resp)
		return nil, err
	}
	return resp, nil
}

// engineDeadlineKey is the context key of [withEngineDeadline].
type engineDeadlineKey struct{}

// withEngineDeadline returns ctx carrying d as the deadline of every
// request [upstream.call] sends under it, while ctx's own deadline may be
// later (the refinement's budget comes after the engine's answer).
func withEngineDeadline(ctx context.Context, d time.Time) context.Context {
	return context.WithValue(ctx, engineDeadlineKey{}, d)
}

// engineDeadline is the deadline of an engine request sent under ctx:
// ctx's own, or the engine deadline it carries ([withEngineDeadline]),
// whichever comes first; zero for none.
func engineDeadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	if e, ok := ctx.Value(engineDeadlineKey{}).(time.Time); ok && (d.IsZero() || e.Before(d)) {
		d = e
	}
	return d
}

// reply is an engine's answer read into memory.
type reply struct {
	status      int
	contentType string
	body        []byte
	header      [][2]string // end-to-end headers but Content-Encoding
	// held is what body holds of the budget of bytes in flight, given
	// back by whoever is done with it.
	held int64
}

// call is [upstream.do] for callers that keep the answer: its body is
// read within budget, so a caller gives back rep.held when done with
// rep.body. An answer over the budget is errOverBound. Unlike a relayed
// answer, bounded only by the engine's silence, reading is bounded by
// ctx too: these callers (the metasearch, SearXNG's pages) wait for the
// whole answer, so an engine that trickles past their deadline is cut.
func (u *upstream) call(ctx context.Context, r engine.Request, budget *byteBudget) (rep reply, err error) {
	resp, err := u.do(engineDeadline(ctx), r, nil)
	if err != nil {
		return rep, err
	}
	defer fasthttp.ReleaseResponse(resp)
	if st, ok := resp.BodyStream().(fasthttp.ReadCloserWithError); ok {
		// fasthttp's stream may be closed while read, and more than
		// once: the read fails, and the connection is dropped.
		stop := context.AfterFunc(ctx, func() { st.CloseWithError(context.DeadlineExceeded) })
		defer stop()
	}
	if rep.held, err = budget.readAnswer(ctxBound(ctx), resp); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("answer not read by the deadline: %w", ctx.Err())
		}
		return rep, err
	}
	for k, v := range resp.Header.All() {
		if !isHop(k) && !equalLower(k, "content-encoding") {
			rep.header = append(rep.header, [2]string{string(k), string(v)})
		}
	}
	rep.status = resp.StatusCode()
	rep.contentType = string(resp.Header.ContentType())
	// The body moves out of the pooled response, with its place in the
	// budget.
	rep.body = resp.SwapBody(nil)
	return rep, nil
}

// callPages fetches several pages of the engine in parallel (SearXNG).
// The first page decides the status; a later page that fails ends the
// list there. The held bytes of the replies returned are the caller's
// to give back, even on error.
func (u *upstream) callPages(ctx context.Context, reqs []engine.Request, budget *byteBudget) ([]reply, error) {
	replies := make([]reply, len(reqs))
	errs := make([]error, len(reqs))
	done := make(chan struct{}, len(reqs))
	for i, r := range reqs {
		go func() {
			defer func() { done <- struct{}{} }()
			replies[i], errs[i] = u.call(ctx, r, budget)
		}()
	}
	for range reqs {
		<-done
	}
	keep := len(replies)
	for i := range replies {
		if errs[i] != nil || replies[i].status/100 != 2 {
			keep = max(i, 1)
			break
		}
	}
	for _, r := range replies[keep:] {
		budget.give(r.held)
	}
	return replies[:keep], errs[0]
}

// relay writes a backend answer to the client as the backend gave it
// (its Content-Encoding included), minus hop-by-hop headers, and takes
// resp over. A body not read yet, bounded from here by the engine's
// silence only (relaxDeadline), streams from the engine to the client
// as fasthttp writes the response, never held whole; one read already
// moves to the client's response instead of being copied.
func relay(ctx *fasthttp.RequestCtx, b *upstream, resp *fasthttp.Response) {
	relayRest(ctx, b, resp, nil)
}

// relayRest is relay of an answer whose first bytes, head, were read
// from its stream already (readAnswer before the bound): head, then
// the rest of the stream. A body the engine's connection ends short
// (cut, or silent past the engine's timeout) is told to b.cut: the
// client sees it cut too (fasthttp drops the connection), and the
// operator sees it in the metrics and the log.
func relayRest(ctx *fasthttp.RequestCtx, b *upstream, resp *fasthttp.Response, head []byte) {
	relaxDeadline(resp)
	ctx.Response.Reset()
	for k, v := range resp.Header.All() {
		if !isHop(k) {
			setHeader(&ctx.Response.Header, k, v)
		}
	}
	ctx.SetStatusCode(resp.StatusCode())
	if resp.BodyStream() != nil {
		// -1 (chunked) for an answer of unknown length.
		eb := &engineBody{head: head, resp: resp, cut: b.cut}
		if h := &ctx.Request.Header; h.HasAcceptEncoding("gzip") || h.HasAcceptEncoding("deflate") || h.HasAcceptEncoding("zstd") {
			// The encodings the server's CompressHandler applies.
			eb.client = ctx.Conn()
		}
		ctx.SetBodyStream(eb, max(resp.Header.ContentLength(), -1))
		return
	}
	body := resp.SwapBody(nil)
	resp.SwapBody(ctx.Response.SwapBody(body))
	fasthttp.ReleaseResponse(resp)
}

// copyAnswerHeader copies a backend answer's end-to-end headers but
// Content-Encoding (winnow parsed and rewrote an identity body) and Date
// (which fasthttp would drop: it writes its own).
func copyAnswerHeader(dst, src *fasthttp.ResponseHeader) {
	for k, v := range src.All() {
		if !isHop(k) && !equalLower(k, "content-encoding") && !equalLower(k, "date") {
			setHeader(dst, k, v)
		}
	}
}

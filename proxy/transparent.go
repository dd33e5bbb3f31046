package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// transparent forwards a request in the backend's own API and refines
// the answer. Whatever goes wrong on winnow's side, the client gets the
// backend's answer as the backend gave it.
func (s *Server) transparent(ctx *fasthttp.RequestCtx) {
	b := s.transp
	reqCtx, cancel := context.WithTimeout(context.Background(), b.Timeout+s.o.Budget)
	defer cancel()
	// The rewritten request and any fallback share the engine's deadline.
	reqCtx = withEngineDeadline(reqCtx, time.Now().Add(b.Timeout))
	if err := inflateRequest(&ctx.Request, s.o.MaxRequestBytes); err != nil {
		status := fasthttp.StatusBadRequest
		if errors.Is(err, errInflatedTooLarge) {
			status = fasthttp.StatusRequestEntityTooLarge
		}
		b.engineError(ctx, status, "parse_exception", "winnow: "+err.Error())
		return
	}
	orig := clientRequest(ctx)
	rt, err := b.route(ctx, &orig)
	if err != nil {
		s.m.refused()
		b.engineError(ctx, fasthttp.StatusForbidden, "security_exception",
			"winnow: "+orig.Method+" "+pathOnly(orig.Path)+" is refused: "+err.Error()+"; this gateway is read-only (serve.engines[].allow_writes opens it)")
		return
	}
	p, perr := s.params(ctx)
	if perr != nil {
		// Never a silent pass-through: the client asked for something
		// winnow cannot do.
		b.engineError(ctx, fasthttp.StatusBadRequest, "illegal_argument_exception", perr.Error())
		return
	}
	refinable := rt.Kind == engine.RouteSearch || rt.Kind == engine.RouteScroll
	switch {
	case p.off && (refinable || rt.Kind == engine.RouteMsearch):
		s.forward(ctx, reqCtx, b, orig)
		setRefined(ctx, "no; reason=off")
		return
	case rt.Kind == engine.RouteMsearch:
		// Each sub-search's answer passes as the engine gave it; the
		// header says so, and so does the metric.
		s.forward(ctx, reqCtx, b, orig)
		s.m.unrefined("msearch")
		setRefined(ctx, "no; reason=msearch")
		return
	case !refinable:
		s.forward(ctx, reqCtx, b, orig)
		return
	}
	start := time.Now()
	if pg, ok := b.light.(engine.Pager); ok {
		s.transparentPages(ctx, reqCtx, b, pg, orig, p, start)
		return
	}
	p.cursor = rt.Cursor || rt.Kind == engine.RouteScroll
	s.transparentSearch(ctx, reqCtx, b, orig, p, start)
}

// refinedHeader tells the client whether winnow refined the answer:
// "yes", or "no; reason=..." when the answer is the engine's own,
// unrefined.
const refinedHeader = "X-Winnow-Refined"

func setRefined(ctx *fasthttp.RequestCtx, v string) {
	ctx.Response.Header.Set(refinedHeader, v)
}

// notRefined marks an answer of a search that passes unrefined for
// reason: the header, the metric, and a WARN log at most once a
// second (with the number of such answers since the last).
func (s *Server) notRefined(ctx *fasthttp.RequestCtx, b *upstream, reason string, err error) {
	setRefined(ctx, "no; reason="+reason)
	s.m.unrefined(reason)
	n := s.unrefinedSince.Add(1)
	now := time.Now().UnixNano()
	last := s.unrefinedLogged.Load()
	if now-last >= int64(time.Second) && s.unrefinedLogged.CompareAndSwap(last, now) {
		s.unrefinedSince.Add(-n)
		s.log.Warn("answer_not_refined", "engine", b.Name, "reason", reason, "err", err, "answers_since_last_log", n)
	}
}

// transparentSearch is the transparent path of a search: the rewritten
// request, the answer from the answer cache or refined, or the client's
// own request passed through, marked unrefined, when winnow cannot
// refine. A cursor search (a scroll, a point in time, search_after) is
// not rewritten: it is refined within the page the engine gives, so
// every result of the engine comes back exactly once across the pages,
// and it is sent once, its answer relayed unrefined when it cannot be
// refined.
func (s *Server) transparentSearch(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *upstream, orig engine.Request, p params, start time.Time) {
	cursor := p.cursor
	breq, win := orig, engine.Window{}
	if !cursor {
		var err error
		if breq, win, err = s.rewrite(b, orig); err != nil {
			s.fallback(ctx, reqCtx, b, orig, start, "rewrite", err)
			return
		}
	}
	resp, err := b.do(reqCtx, breq, &ctx.Request.Header)
	if err != nil {
		if cursor {
			// Never twice: the engine may have moved its cursor.
			s.m.engine(b.Name, "down", time.Since(start))
			s.engineDown(ctx, b, err)
			s.notRefined(ctx, b, "engine_unreachable", err)
			return
		}
		s.fallback(ctx, reqCtx, b, orig, start, "engine_request", err)
		return
	}
	if resp.StatusCode()/100 != 2 {
		// A backend error is passed on as the backend gave it, to the
		// client's own request: an error about the rewritten one (a
		// parse error's column) would not be the engine's answer to it.
		s.m.engine(b.Name, "http_error", time.Since(start))
		if cursor {
			relay(ctx, resp)
		} else {
			fasthttp.ReleaseResponse(resp)
			s.forward(ctx, reqCtx, b, orig)
		}
		setRefined(ctx, "no; reason=engine_error")
		return
	}
	if len(resp.Header.ContentEncoding()) != 0 {
		err := errors.New("answer compressed although identity was asked for")
		if cursor {
			relay(ctx, resp)
			s.notRefined(ctx, b, "compressed", err)
			return
		}
		fasthttp.ReleaseResponse(resp)
		s.fallback(ctx, reqCtx, b, orig, start, "compressed", err)
		return
	}
	// The answer is read only once the bytes in flight have room for it
	// and its rendering. Past the bound it is dropped unread, and the
	// client's own request passes through unrefined (the over-fetched
	// answer is not the one the client asked for).
	held, err := s.inflight.readAnswer(reqCtx, resp)
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		if cursor {
			s.m.engine(b.Name, "down", time.Since(start))
			s.engineDown(ctx, b, err)
			s.notRefined(ctx, b, unrefinedReason(err, "read"), err)
			return
		}
		s.fallback(ctx, reqCtx, b, orig, start, unrefinedReason(err, "read"), err)
		return
	}
	defer func() { s.inflight.give(held) }()
	defer s.inflight.releaseResponse(resp)
	var key uint64
	// The answer cache holds the server's own decisions in the plain
	// modes; explain is a view of its own.
	// A cursor's pages seldom repeat.
	cacheable := s.memo.answers != nil && !p.custom && !p.explain && !cursor
	if cacheable {
		key = answerKey(orig.Method, orig.Path, orig.Body, p.mode, win)
		if s.answerFromCache(ctx, key, orig, p, win, resp, b, start) {
			return
		}
	}
	// The body is parsed in place: it lives in resp until the answer is
	// rendered.
	parsed, err := b.light.Parse(resp.Body(), string(resp.Header.ContentType()))
	if err == nil {
		ref, out, ok := s.refineInto(ctx, reqCtx, b, parsed, p, win, start, &held)
		if ok {
			if cacheable && ref.hot != nil {
				s.rememberAnswer(key, orig, p, win, parsed, ref, out)
			}
			copyAnswerHeader(&ctx.Response.Header, &resp.Header)
			ctx.SetStatusCode(resp.StatusCode())
			markRefined(ctx, ref, p.mode)
			return
		}
		err = errors.New("render failed")
	}
	if cursor {
		// The engine's answer to the client's own request, as it came.
		copyAnswerHeader(&ctx.Response.Header, &resp.Header)
		ctx.SetStatusCode(resp.StatusCode())
		ctx.Response.SetBody(resp.Body())
		s.notRefined(ctx, b, "parse", err)
		return
	}
	// An answer winnow cannot parse or render: ask again with the
	// client's request as it was (a search, so asking twice is safe).
	s.fallback(ctx, reqCtx, b, orig, start, "parse", err)
}

// markRefined sets the headers of a refined answer.
func markRefined(ctx *fasthttp.RequestCtx, ref *refined, mode engine.Mode) {
	_, dups := ref.clusterCounts()
	setDuplicates(ctx, dups, removedCount(ref.marks, mode), mode)
}

// setDuplicates sets the headers of a refined answer: X-Winnow-Refined
// "yes", X-Winnow-Duplicates the duplicates found among the engine's
// results winnow refined, and in remove mode X-Winnow-Removed those of
// them dropped from the answer (a kept, annotated one is not). The
// engine's total (hits.total, numFound) is never changed: these say what
// winnow took out.
func setDuplicates(ctx *fasthttp.RequestCtx, dups, removed int, mode engine.Mode) {
	setRefined(ctx, "yes")
	ctx.Response.Header.Set("X-Winnow-Duplicates", strconv.Itoa(dups))
	if mode == engine.Remove {
		ctx.Response.Header.Set("X-Winnow-Removed", strconv.Itoa(removed))
	}
}

// removedCount is the number of results remove mode drops: duplicates
// of another result not marked Keep.
func removedCount(marks []engine.Mark, mode engine.Mode) int {
	if mode != engine.Remove {
		return 0
	}
	n := 0
	for i, m := range marks {
		if m.Winner >= 0 && m.Winner != i && !m.Keep {
			n++
		}
	}
	return n
}

// unrefinedReason is the reason an answer read failed: "budget" past the
// bound on bytes in flight, else def.
func unrefinedReason(err error, def string) string {
	if errors.Is(err, errOverBound) {
		return "budget"
	}
	return def
}

// pathOnly is p without its query string.
func pathOnly(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// answerFromCache answers from the answer cache when the backend's answer
// resp is one whose refinement it holds, and reports whether it did.
func (s *Server) answerFromCache(ctx *fasthttp.RequestCtx, key uint64, orig engine.Request, p params, win engine.Window, resp *fasthttp.Response, b *upstream, start time.Time) bool {
	a := s.memo.answers.get(key, orig.Method, orig.Path, orig.Body, p.mode, win)
	if a == nil {
		s.memo.answers.misses.Add(1)
		return false
	}
	buf := ctx.Response.SwapBody(nil)
	out, raw, ok := a.render(buf[:0], resp.Body(), s.cache, time.Now())
	switch {
	case !ok:
		ctx.Response.SwapBody(buf)
		s.memo.answers.misses.Add(1)
		return false
	case raw:
		// The remembered rendering itself, written as it is.
		ctx.Response.SwapBody(buf)
		ctx.Response.SetBodyRaw(out)
	default:
		ctx.Response.SwapBody(out)
	}
	s.memo.answers.hits.Add(1)
	s.m.engine(b.Name, "ok", time.Since(start))
	s.m.refined(&refined{cached: a.cached, unrefined: a.unrefined})
	s.m.clustered(a.clusters, a.dups, p.mode.String())
	copyAnswerHeader(&ctx.Response.Header, &resp.Header)
	setDuplicates(ctx, a.dups, a.removed, p.mode)
	ctx.SetStatusCode(resp.StatusCode())
	return true
}

// rememberAnswer keeps a refined answer in the answer cache; out is its
// rendering. An answer is kept the second time its key is met, so a
// stream of queries that never repeat costs no copies.
func (s *Server) rememberAnswer(key uint64, orig engine.Request, p params, win engine.Window, parsed *engine.Parsed, ref *refined, out []byte) {
	if !s.memo.answers.secondSighting(key) {
		return
	}
	body := parsed.Body()
	ext := parsed.Extent()
	if ext > len(out) || !bytes.Equal(out[:ext], body[:ext]) {
		// Render changed the head it promised to copy: never reuse.
		s.log.Warn("answer_cache_extent", "extent", ext)
		return
	}
	clusters, dups := ref.clusterCounts()
	s.memo.answers.put(key, &answer{
		method: orig.Method, path: orig.Path, reqBody: bytes.Clone(orig.Body), mode: p.mode, win: win,
		body: bytes.Clone(body), extent: ext, out: bytes.Clone(out), hot: ref.hot,
		cached: ref.cached, unrefined: ref.unrefined, clusters: clusters, dups: dups,
		removed: removedCount(ref.marks, p.mode),
	})
}

// rewrite is the transparent backend's Rewrite with the server's
// factor, remembered for requests without a body: a popular query's URL
// is rewritten once, not parsed and encoded again on every request.
func (s *Server) rewrite(b *upstream, orig engine.Request) (engine.Request, engine.Window, error) {
	if len(orig.Body) > 0 {
		return b.light.Rewrite(orig, s.o.Factor)
	}
	if r, ok := s.memo.rewrites.get(orig.Path); ok {
		orig.Path = r.path
		return orig, r.win, nil
	}
	breq, win, err := b.light.Rewrite(orig, s.o.Factor)
	if err == nil && len(breq.Body) == 0 {
		s.memo.rewrites.put(orig.Path, rewritten{breq.Path, win})
	}
	return breq, win, err
}

// rewritten is a remembered Rewrite of a request without a body.
type rewritten struct {
	path string
	win  engine.Window
}

// fallback answers with the client's request as it was, marked
// unrefined for reason, when the backend's answer to the rewritten one
// could not be had, parsed or held within the bound on bytes in flight.
func (s *Server) fallback(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *upstream, orig engine.Request, start time.Time, reason string, err error) {
	if reason == "budget" {
		s.m.engine(b.Name, "over_memory_bound", time.Since(start))
	} else {
		s.m.engine(b.Name, "fallback", time.Since(start))
	}
	s.forward(ctx, reqCtx, b, orig)
	s.notRefined(ctx, b, reason, err)
}

// transparentPages is the transparent path of an adapter that asks for
// several backend pages (SearXNG).
func (s *Server) transparentPages(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *upstream, pg engine.Pager, orig engine.Request, p params, start time.Time) {
	reqs, win, err := pg.Pages(orig, s.o.Factor)
	var (
		parsed  *engine.Parsed
		replies []reply
		held    int64
	)
	if err == nil {
		replies, err = b.callPages(reqCtx, reqs, &s.inflight)
		for _, r := range replies {
			held += r.held
		}
		defer func() { s.inflight.give(held) }()
		if first := replies[0]; err == nil && first.status/100 != 2 {
			s.m.engine(b.Name, "http_error", time.Since(start))
			s.writeAnswer(ctx, first.status, first.contentType, first.body, first.header)
			return
		}
		if err == nil {
			bodies := make([][]byte, len(replies))
			for i, r := range replies {
				bodies[i] = r.body
			}
			parsed, err = pg.ParsePages(bodies, replies[0].contentType)
		}
	}
	if err != nil {
		s.fallback(ctx, reqCtx, b, orig, start, unrefinedReason(err, "engine_request"), err)
		return
	}
	ref, _, ok := s.refineInto(ctx, reqCtx, b, parsed, p, win, start, &held)
	if !ok {
		s.fallback(ctx, reqCtx, b, orig, start, "render", errors.New("render failed"))
		return
	}
	defer markRefined(ctx, ref, p.mode)
	for _, kv := range replies[0].header {
		ctx.Response.Header.Set(kv[0], kv[1])
	}
	ctx.SetStatusCode(replies[0].status)
	ctx.SetContentType(replies[0].contentType)
}

// refineInto refines a parsed answer and renders it, into a buffer of
// the budget of bytes in flight, as the client's response body, which it
// returns (valid until the handler returns). held is what the caller
// holds of that budget for the answer and its rendering (readAnswer):
// for a rendering over answerChunk, its half, and any bytes the
// rendering takes beyond it, move to the body, given back once the
// client has received it (heldBody); a smaller one is copied into the
// response's own buffer. It reports false, leaving the response and held as they
// were, when rendering fails.
func (s *Server) refineInto(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *upstream, parsed *engine.Parsed, p params, win engine.Window, start time.Time, held *int64) (*refined, []byte, bool) {
	s.m.engine(b.Name, "ok", time.Since(start))
	ref := s.refine(reqCtx, parsed.Results, p)
	if p.cursor {
		lastStays(ref.marks, p.mode)
	}
	// The rendering is about the answer's size plus its marks: one buffer
	// of that size with room for them, not a growth by a quarter when the
	// marks overflow it, keeps it within what the budget counts.
	buf := s.inflight.buffer(renderRoom(len(parsed.Body())))
	out, err := b.light.Render(buf, parsed, ref.marks, p.render(), win)
	if err != nil {
		s.inflight.recycle(buf)
		s.log.Warn("render_failed", "engine", b.Name, "err", err)
		return ref, nil, false
	}
	if len(out) <= answerChunk {
		// Small: the response's own buffer, given back at once.
		ctx.Response.SetBody(out)
		s.inflight.recycle(out)
		return ref, ctx.Response.Body(), true
	}
	share := *held / 2
	*held -= share
	if extra := int64(cap(out)) - share; extra > 0 {
		s.inflight.force(extra)
		share += extra
	}
	ctx.SetBodyStream(&heldBody{b: &s.inflight, buf: out, held: share}, len(out))
	return ref, out, true
}

// renderRoom is the buffer a rendering of an answer of n bytes starts
// with: n, and for a large answer room for the marks (1/64 of n); a
// small rendering that outgrows n doubles cheaply.
func renderRoom(n int) int {
	if n <= maxPooledBuffer {
		return n
	}
	return n + n/64
}

// lastStays keeps the last result of a cursor's page a hit of its own
// when it duplicates an earlier one: a client pages on with the sort
// values of the last hit it sees (search_after), so that hit must be the
// engine's last, or the next page would bring back what this one
// grouped or removed. Remove mode keeps it annotated; group mode shows
// it unmarked, in place.
func lastStays(marks []engine.Mark, mode engine.Mode) {
	last := len(marks) - 1
	if last < 0 || marks[last].Winner < 0 || marks[last].Winner == last {
		return
	}
	switch mode {
	case engine.Remove:
		marks[last].Keep = true
	case engine.Group:
		marks[last] = engine.Mark{Winner: -1}
	}
}

// forward sends the client's request unchanged and relays the answer,
// streamed: it is never held whole. A backend that cannot be reached
// gets 502, one that does not answer in time 504: the only errors winnow
// itself writes.
func (s *Server) forward(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *upstream, r engine.Request) {
	start := time.Now()
	resp, err := b.do(reqCtx, r, &ctx.Request.Header)
	if err != nil {
		s.m.engine(b.Name, "down", time.Since(start))
		s.engineDown(ctx, b, err)
		return
	}
	s.m.engine(b.Name, "passthrough", time.Since(start))
	relay(ctx, resp)
}

// engineDown answers a request the engine did not answer: 504 when it
// did not in time, else 502.
func (s *Server) engineDown(ctx *fasthttp.RequestCtx, b *upstream, err error) {
	s.log.Warn("backend_unreachable", "engine", b.Name, "err", err)
	code := fasthttp.StatusBadGateway
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		code = fasthttp.StatusGatewayTimeout
	}
	ctx.Error(fmt.Sprintf("winnow: engine %s: %v", b.Name, err), code)
}

func (s *Server) writeAnswer(ctx *fasthttp.RequestCtx, status int, ct string, body []byte, hdr [][2]string) {
	for _, kv := range hdr {
		ctx.Response.Header.Set(kv[0], kv[1])
	}
	ctx.SetStatusCode(status)
	if ct != "" {
		ctx.SetContentType(ct)
	}
	ctx.SetBody(body)
}

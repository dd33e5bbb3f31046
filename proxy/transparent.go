package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/resultlist"
)

// search is one transparent search on its way through the proxy: what
// each step of it needs travels in this one value, as
// net/http/httputil.ProxyRequest does for a reverse proxy's rewrite.
// It belongs to one request's handler and is not safe for concurrent
// use.
type search struct {
	ctx  *fasthttp.RequestCtx // the client's request and response
	b    *upstream            // the engine
	orig engine.Request       // the request as the client sent it, route checked
	p    params               // winnow's settings for it
	win  engine.Window        // the client's window in the rewritten answer
	// deadline ends the search: the engine's timeout, then the
	// refinement's budget.
	deadline time.Time
	// engineDeadline bounds every request to the engine: the rewritten
	// one and any fallback share it, so a hanging engine costs the
	// client one timeout, not one per attempt.
	engineDeadline time.Time
	start          time.Time // when the engine was first asked
	// held is what the answer and its rendering hold of the budget of
	// bytes in flight; the search's handler gives it back.
	held int64
	// reqCtx is the search's context ([search.context]), nil until asked
	// for; cancel ends it.
	reqCtx context.Context
	cancel context.CancelFunc
}

// context returns the search's context: its deadline, carrying the
// engine deadline (withEngineDeadline) for the engine requests sent
// under it. It is made when first asked for, by a refinement, a
// multi-search or SearXNG's pages: an answer from the answer cache or
// passed through needs only the deadlines, and a context's timer cost
// it about 3,900 instructions.
func (r *search) context() context.Context {
	if r.reqCtx == nil {
		ctx, cancel := context.WithDeadline(context.Background(), r.deadline)
		r.reqCtx, r.cancel = withEngineDeadline(ctx, r.engineDeadline), cancel
	}
	return r.reqCtx
}

// bound is the bound of the search's waits for room in the budget of
// bytes in flight: its deadline, as its context's would end them.
func (r *search) bound() waitBound { return waitBound{deadline: r.deadline} }

// transparent forwards a request in the engine's own API and refines
// the answer. Whatever goes wrong on winnow's side, the client gets the
// engine's answer as the engine gave it.
func (s *Server) transparent(ctx *fasthttp.RequestCtx) {
	b := s.transp
	now := time.Now()
	r := &search{ctx: ctx, b: b, deadline: now.Add(b.Timeout + s.o.Budget), engineDeadline: now.Add(b.Timeout)}
	defer func() {
		if r.cancel != nil {
			r.cancel()
		}
	}()
	if err := inflateRequest(&ctx.Request, s.o.MaxRequestBytes); err != nil {
		status := fasthttp.StatusBadRequest
		if errors.Is(err, errInflatedTooLarge) {
			status = fasthttp.StatusRequestEntityTooLarge
		}
		b.engineError(ctx, status, "parse_exception", "winnow: "+err.Error())
		return
	}
	r.orig = clientRequest(ctx)
	rt, err := s.route(b, ctx, &r.orig)
	if err != nil {
		s.m.refused()
		why := "; this gateway is read-only (serve.engines[].allow_writes opens it)"
		if errors.Is(err, engine.ErrCursorID) {
			why = "; start the scroll or point in time again through this gateway"
		}
		b.engineError(ctx, fasthttp.StatusForbidden, "security_exception",
			"winnow: "+r.orig.Method+" "+pathOnly(r.orig.Path)+" is refused: "+err.Error()+why)
		return
	}
	if rt.Strict != nil && s.noIndices(r, *rt.Strict) {
		return
	}
	if rt.CursorIDs {
		// Deferred: every way the answer leaves is sealed.
		defer s.sealCursors(ctx)
	}
	p, perr := s.params(ctx)
	if perr != nil {
		// Never a silent pass-through: the client asked for something
		// winnow cannot do.
		b.engineError(ctx, fasthttp.StatusBadRequest, "illegal_argument_exception", perr.Error())
		return
	}
	r.p, r.start = p, time.Now()
	refinable := rt.Kind == engine.RouteSearch || rt.Kind == engine.RouteScroll
	switch {
	case p.off && (refinable || rt.Kind == engine.RouteMsearch):
		s.forward(r)
		setRefined(ctx, "no; reason=off")
		return
	case rt.Kind == engine.RouteMsearch:
		s.transparentMsearch(r)
		return
	case !refinable:
		s.forward(r)
		return
	}
	if pg, ok := b.light.(engine.Pager); ok {
		s.transparentPages(r, pg)
		return
	}
	r.p.cursor = rt.Cursor || rt.Kind == engine.RouteScroll
	s.transparentSearch(r)
}

// refinedHeader tells the client whether winnow refined the answer:
// "yes", or "no; reason=..." when the answer is the engine's own,
// unrefined.
const refinedHeader = "X-Winnow-Refined"

// The names of winnow's answer headers, in fasthttp's canonical form:
// set with SetCanonical, a name is neither copied nor rewritten (Set
// does both, about 400 instructions a header).
var (
	refinedName    = []byte(refinedHeader)
	duplicatesName = []byte("X-Winnow-Duplicates")
	removedName    = []byte("X-Winnow-Removed")
	signedName     = []byte("X-Winnow-Signed")
)

func setRefined(ctx *fasthttp.RequestCtx, v string) {
	ctx.Response.Header.SetCanonical(refinedName, []byte(v))
}

// notRefined marks the answer of search r, passed unrefined for
// reason: the header, the metric, and a WARN log at most once a
// second (with the number of such answers since the last).
func (s *Server) notRefined(r *search, reason string, err error) {
	setRefined(r.ctx, "no; reason="+reason)
	s.m.unrefined(reason)
	s.warnUnrefined(r, reason, err)
}

// warnUnrefined logs an answer (or part of one) passed unrefined at
// WARN, at most once a second, with the number of such answers since
// the last line.
func (s *Server) warnUnrefined(r *search, reason string, err error) {
	n := s.unrefinedSince.Add(1)
	now := time.Now().UnixNano()
	last := s.unrefinedLogged.Load()
	if now-last >= int64(time.Second) && s.unrefinedLogged.CompareAndSwap(last, now) {
		s.unrefinedSince.Add(-n)
		s.log.Warn("answer_not_refined", "engine", r.b.Name, "reason", reason, "err", err, "answers_since_last_log", n)
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
func (s *Server) transparentSearch(r *search) {
	cursor := r.p.cursor
	breq := r.orig
	if !cursor {
		var err error
		if breq, r.win, err = s.rewrite(r.b, r.orig); err != nil {
			s.fallback(r, unrefinedReason(err, "rewrite"), err)
			return
		}
	}
	resp, err := r.b.do(r.engineDeadline, breq, &r.ctx.Request.Header)
	if err != nil {
		if cursor {
			// Never twice: the engine may have moved its cursor.
			s.m.engine(r.b, outcomeDown, time.Since(r.start))
			s.engineDown(r.ctx, r.b, err)
			s.notRefined(r, "engine_unreachable", err)
			return
		}
		s.fallback(r, "engine_request", err)
		return
	}
	if resp.StatusCode()/100 != 2 {
		// An engine error is passed on as the engine gave it, to the
		// client's own request: an error about the rewritten one (a
		// parse error's column) would not be the engine's answer to it.
		s.m.engine(r.b, outcomeHTTPError, time.Since(r.start))
		if cursor {
			relay(r.ctx, r.b, resp)
		} else {
			fasthttp.ReleaseResponse(resp)
			s.forward(r)
		}
		setRefined(r.ctx, "no; reason=engine_error")
		return
	}
	if len(resp.Header.ContentEncoding()) != 0 {
		err := errors.New("answer compressed although identity was asked for")
		if cursor {
			relay(r.ctx, r.b, resp)
			s.notRefined(r, "compressed", err)
			return
		}
		fasthttp.ReleaseResponse(resp)
		s.fallback(r, "compressed", err)
		return
	}
	// The answer is read only once the bytes in flight have room for it
	// and its rendering. Past the bound it is dropped unread, and the
	// client's own request passes through unrefined (the over-fetched
	// answer is not the one the client asked for).
	r.held, err = s.inflight.readAnswer(r.bound(), resp)
	if err != nil {
		// over is declared here, where it is needed: errors.As takes its
		// address, so the variable lives on the heap.
		var over *overBoundError
		if cursor && errors.As(err, &over) {
			// A cursor's page is never asked for twice, and a working
			// engine is never made an error: the page passes unrefined,
			// the bytes read so far and then the rest of the engine's
			// stream.
			s.m.engine(r.b, outcomeOverBound, time.Since(r.start))
			relayRest(r.ctx, r.b, resp, over.head)
			s.notRefined(r, "budget", err)
			return
		}
		fasthttp.ReleaseResponse(resp)
		if cursor {
			s.m.engine(r.b, outcomeDown, time.Since(r.start))
			s.engineDown(r.ctx, r.b, err)
			s.notRefined(r, unrefinedReason(err, "read"), err)
			return
		}
		s.fallback(r, unrefinedReason(err, "read"), err)
		return
	}
	defer func() { s.inflight.give(r.held) }()
	defer s.inflight.releaseResponse(resp)
	var key uint64
	// The answer cache holds the server's own decisions (not a
	// request's own settings), explained or not: an explanation depends
	// only on the signatures, which the cache checks. A cursor's pages
	// seldom repeat.
	cacheable := s.memo.answers != nil && !r.p.custom && !cursor
	if cacheable {
		key = answerKey(r.orig.Method, r.orig.Path, r.orig.Body, r.p.mode, r.p.explain, r.win)
		if s.answerFromCache(r, key, resp) {
			return
		}
	}
	// The body is parsed in place: it lives in resp until the answer is
	// rendered.
	parsed, err := r.b.light.Parse(resp.Body(), string(resp.Header.ContentType()))
	if err == nil {
		ref, out, ok := s.refineInto(r, parsed)
		if ok {
			if cacheable && (ref.hot != nil || ref.tagsOnly) {
				s.rememberAnswer(r, key, parsed, ref, out)
			}
			copyAnswerHeader(&r.ctx.Response.Header, &resp.Header)
			r.ctx.SetStatusCode(resp.StatusCode())
			s.markRefined(r, ref)
			return
		}
		err = errors.New("render failed")
	}
	if cursor {
		// The engine's answer to the client's own request, as it came.
		copyAnswerHeader(&r.ctx.Response.Header, &resp.Header)
		r.ctx.SetStatusCode(resp.StatusCode())
		r.ctx.Response.SetBody(resp.Body())
		s.notRefined(r, unrefinedReason(err, "parse"), err)
		return
	}
	// An answer winnow cannot parse or render: ask again with the
	// client's request as it was (a search, so asking twice is safe).
	s.fallback(r, "parse", err)
}

// markRefined sets the headers of a refined answer, and X-Winnow-Signed:
// how many of the results winnow compared had a signature ("3/10"). An
// answer of two or more results none of which could be signed (no text
// field and no page fetched in time, or every page refused by the SSRF
// guard) is the engine's as it came: it says "no; reason=unsigned", is
// counted and logged, instead of claiming a refinement that found
// nothing because it compared nothing.
func (s *Server) markRefined(r *search, ref *refined) {
	_, dups := ref.clusterCounts()
	setDuplicates(r.ctx, dups, removedCount(ref.marks, r.p.mode, r.win), r.p.mode)
	v, unsigned := signedValue(ref.sources)
	s.markSigned(r, v, unsigned)
}

// signedValue is the X-Winnow-Signed of a refinement whose results'
// signatures came from sources: how many had one, of how many ("3/10");
// unsigned when none of two or more had one.
func signedValue(sources []sigSource) (v string, unsigned bool) {
	signed := 0
	for _, src := range sources {
		if src != srcNone {
			signed++
		}
	}
	return strconv.Itoa(signed) + "/" + strconv.Itoa(len(sources)), signed == 0 && len(sources) >= 2
}

// markSigned sets X-Winnow-Signed to v, and marks an unsigned answer
// unrefined (markRefined).
func (s *Server) markSigned(r *search, v string, unsigned bool) {
	r.ctx.Response.Header.SetCanonical(signedName, []byte(v))
	if unsigned {
		s.notRefined(r, "unsigned", errors.New("no result could be signed: set the engine's text_field, or let the pages be fetched (serve.budget, serve.fetch.allow)"))
	}
}

// setDuplicates sets the headers of a refined answer: X-Winnow-Refined
// "yes", X-Winnow-Duplicates the duplicates found among the engine's
// results winnow refined, and in remove mode X-Winnow-Removed those of
// them dropped from the answer (a kept, annotated one is not). The
// engine's total (hits.total, numFound) is never changed: these say what
// winnow took out.
func setDuplicates(ctx *fasthttp.RequestCtx, dups, removed int, mode engine.Mode) {
	setRefined(ctx, "yes")
	var n [20]byte
	ctx.Response.Header.SetCanonical(duplicatesName, strconv.AppendInt(n[:0], int64(dups), 10))
	if mode == engine.Remove {
		ctx.Response.Header.SetCanonical(removedName, strconv.AppendInt(n[:0], int64(removed), 10))
	}
}

// removedCount is the number of results mode drops (remove mode: the
// duplicates not marked Keep) that belong to the page of window w: those
// ranked after the previous page's last shown result and before this
// page's last. A refilled page reads past its last result, and what it
// drops there belongs to the next page, which counts it; counting it
// here too would count it twice across pages (search_after without a
// point in time pages this way).
func removedCount(marks []engine.Mark, mode engine.Mode, w engine.Window) int {
	if mode != engine.Remove {
		return 0 // only remove mode drops; no windows to compute per answer
	}
	facts := func(i int) resultlist.Facts { return resultlist.Facts{Winner: marks[i].Winner, Keep: marks[i].Keep} }
	lo, hi := -1, len(marks) // count the dropped results i, lo < i < hi
	if w.Size > 0 {
		skip := max(w.From-w.Base, 0)
		if page := resultlist.Window(mode, len(marks), facts, skip, w.Size); len(page) == w.Size {
			hi = page[len(page)-1]
		}
		if skip > 0 {
			if prev := resultlist.Window(mode, len(marks), facts, skip-1, 1); len(prev) == 1 {
				lo = prev[0]
			}
		}
	}
	n := 0
	for i := lo + 1; i < hi; i++ {
		if resultlist.Place(mode, i, facts(i)) == resultlist.Dropped {
			n++
		}
	}
	return n
}

// unrefinedReason is the reason an answer could not be refined:
// "budget" past the bound on bytes in flight, "format" for a search that
// asks for an answer format winnow does not refine (Solr's javabin or
// XML), else def.
func unrefinedReason(err error, def string) string {
	switch {
	case errors.Is(err, errOverBound):
		return "budget"
	case errors.Is(err, engine.ErrFormat):
		return "format"
	}
	return def
}

// pathOnly is p without its query string.
func pathOnly(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// answerFromCache answers from the answer cache when the engine's answer
// resp is one whose refinement it holds, and reports whether it did.
func (s *Server) answerFromCache(r *search, key uint64, resp *fasthttp.Response) bool {
	a := s.memo.answers.get(key, r.orig.Method, r.orig.Path, r.orig.Body, r.p.mode, r.p.explain, r.win)
	if a == nil {
		s.memo.answers.misses.Add(1)
		return false
	}
	buf := r.ctx.Response.SwapBody(nil)
	out, raw, ok := a.render(buf[:0], resp.Body(), s.cache, time.Now())
	switch {
	case !ok:
		r.ctx.Response.SwapBody(buf)
		s.memo.answers.misses.Add(1)
		return false
	case raw:
		// The remembered rendering itself, written as it is.
		r.ctx.Response.SwapBody(buf)
		r.ctx.Response.SetBodyRaw(out)
	default:
		r.ctx.Response.SwapBody(out)
	}
	s.memo.answers.hits.Add(1)
	s.m.engine(r.b, outcomeOK, time.Since(r.start))
	s.m.refined(&refined{cached: a.cached, service: a.service, unrefined: a.unrefined})
	s.m.clustered(a.clusters, a.dups, r.p.mode)
	copyAnswerHeader(&r.ctx.Response.Header, &resp.Header)
	setDuplicates(r.ctx, a.dups, a.removed, r.p.mode)
	s.markSigned(r, a.signed, a.unsigned)
	r.ctx.SetStatusCode(resp.StatusCode())
	return true
}

// rememberAnswer keeps a refined answer in the answer cache; out is its
// rendering. An answer is kept the second time its key is met, so a
// stream of queries that never repeat costs no copies.
func (s *Server) rememberAnswer(r *search, key uint64, parsed *engine.Parsed, ref *refined, out []byte) {
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
	signed, unsigned := signedValue(ref.sources)
	s.memo.answers.put(key, &answer{
		method: r.orig.Method, path: r.orig.Path, reqBody: bytes.Clone(r.orig.Body), mode: r.p.mode, explain: r.p.explain, win: r.win,
		body: bytes.Clone(body), extent: ext, out: bytes.Clone(out), hot: ref.hot,
		cached: ref.cached, service: ref.service, unrefined: ref.unrefined, clusters: clusters, dups: dups,
		removed: removedCount(ref.marks, r.p.mode, r.win), signed: signed, unsigned: unsigned,
	})
}

// rewrite is the transparent engine's Rewrite with the server's
// factor, remembered for requests without a body: a popular query's URL
// is rewritten once, not parsed and encoded again on every request.
func (s *Server) rewrite(b *upstream, orig engine.Request) (engine.Request, engine.Window, error) {
	if len(orig.Body) > 0 || len(orig.Path) > memoMaxURI {
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
// unrefined for reason, when the engine's answer to the rewritten one
// could not be had, parsed or held within the bound on bytes in flight.
func (s *Server) fallback(r *search, reason string, err error) {
	if reason == "budget" {
		s.m.engine(r.b, outcomeOverBound, time.Since(r.start))
	} else {
		s.m.engine(r.b, outcomeFallback, time.Since(r.start))
	}
	s.forward(r)
	s.notRefined(r, reason, err)
}

// transparentPages is the transparent path of an adapter that asks for
// several engine pages (SearXNG).
func (s *Server) transparentPages(r *search, pg engine.Pager) {
	reqs, win, err := pg.Pages(r.orig, s.o.Factor)
	r.win = win
	var (
		parsed  *engine.Parsed
		replies []reply
	)
	if err == nil {
		replies, err = r.b.callPages(r.context(), reqs, &s.inflight)
		for _, rep := range replies {
			r.held += rep.held
		}
		defer func() { s.inflight.give(r.held) }()
		if first := replies[0]; err == nil && first.status/100 != 2 {
			s.m.engine(r.b, outcomeHTTPError, time.Since(r.start))
			s.writeAnswer(r.ctx, first.status, first.contentType, first.body, first.header)
			return
		}
		if err == nil {
			bodies := make([][]byte, len(replies))
			for i, rep := range replies {
				bodies[i] = rep.body
			}
			parsed, err = pg.ParsePages(bodies, replies[0].contentType)
		}
	}
	if err != nil {
		s.fallback(r, unrefinedReason(err, "engine_request"), err)
		return
	}
	ref, _, ok := s.refineInto(r, parsed)
	if !ok {
		s.fallback(r, "render", errors.New("render failed"))
		return
	}
	defer s.markRefined(r, ref)
	for _, kv := range replies[0].header {
		r.ctx.Response.Header.Set(kv[0], kv[1])
	}
	r.ctx.SetStatusCode(replies[0].status)
	r.ctx.SetContentType(replies[0].contentType)
}

// refineInto refines a parsed answer and renders it, into a buffer of
// the budget of bytes in flight, as the client's response body, which it
// returns (valid until the handler returns). r.held is what r holds of
// that budget for the answer and its rendering (readAnswer): for a
// rendering over answerChunk, its half, and any bytes the rendering
// takes beyond it, move to the body, given back once the client has
// received it (heldBody); a smaller one becomes the response's own
// buffer. It reports false, leaving the response and r.held as they
// were, when rendering fails.
func (s *Server) refineInto(r *search, parsed *engine.Parsed) (*refined, []byte, bool) {
	s.m.engine(r.b, outcomeOK, time.Since(r.start))
	ref := s.refine(r.context(), parsed.Results, r.p)
	if r.p.cursor {
		lastStays(ref.marks, r.p.mode)
	}
	// The rendering is about the answer's size plus its marks: one buffer
	// of that size with room for them, not a growth by a quarter when the
	// marks overflow it, keeps it within what the budget counts.
	buf := s.inflight.buffer(renderRoom(len(parsed.Body())))
	out, err := r.b.light.Render(buf, parsed, r.p.marks(ref.marks), r.p.render(), r.win)
	if err != nil {
		s.inflight.recycle(buf)
		s.log.Warn("render_failed", "engine", r.b.Name, "err", err)
		return ref, nil, false
	}
	return ref, s.setRendered(r.ctx, out, &r.held), true
}

// setRendered makes out, a rendering in a buffer of the budget of bytes
// in flight, the client's response body, and returns the body (valid
// until the handler returns). A rendering over answerChunk takes half
// of held, and what its buffer holds beyond that, along to the body,
// given back once the client has received it (heldBody); a smaller one
// becomes the response's own buffer (SwapBody), whose buffer goes to the
// budget's instead.
func (s *Server) setRendered(ctx *fasthttp.RequestCtx, out []byte, held *int64) []byte {
	if len(out) <= answerChunk {
		// Small: out becomes the response's own buffer, not copied into
		// it, and the response's buffer takes its turn with the budget's.
		s.inflight.recycle(ctx.Response.SwapBody(out))
		return out
	}
	share := *held / 2
	*held -= share
	if extra := int64(cap(out)) - share; extra > 0 {
		s.inflight.force(extra)
		share += extra
	}
	ctx.SetBodyStream(&heldBody{b: &s.inflight, buf: out, held: share}, len(out))
	return out
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

// forward sends r's request as the client sent it and relays the answer,
// streamed: it is never held whole. An engine that cannot be reached
// gets 502, one that does not answer in time 504: the only errors winnow
// itself writes.
func (s *Server) forward(r *search) {
	start := time.Now()
	resp, err := r.b.do(r.engineDeadline, r.orig, &r.ctx.Request.Header)
	if err != nil {
		s.m.engine(r.b, outcomeDown, time.Since(start))
		s.engineDown(r.ctx, r.b, err)
		return
	}
	s.m.engine(r.b, outcomePassthrough, time.Since(start))
	relay(r.ctx, r.b, resp)
}

// noIndices asks the engine whether each wildcard of a request sent
// allow_no_indices=true in place of the client's false ([engine.Route.Strict])
// matches an index, and answers 404 index_not_found_exception, as the
// engine answers the client's request, for the first that matches none.
// It reports whether it answered. A probe that fails leaves the answer
// to the request itself.
func (s *Server) noIndices(r *search, ws []engine.StrictWildcard) bool {
	var h fasthttp.RequestHeader
	r.ctx.Request.Header.CopyTo(&h)
	h.Del("Content-Length")
	h.Del("Content-Type")
	for _, w := range ws {
		resp, err := r.b.do(r.engineDeadline, engine.Request{Method: "GET", Path: w.Probe}, &h)
		if err != nil {
			return false
		}
		var a struct {
			Shards struct {
				Total *int `json:"total"`
			} `json:"_shards"`
		}
		var body []byte
		if st := resp.BodyStream(); st != nil {
			body, err = io.ReadAll(io.LimitReader(st, 4096))
		} else {
			body = resp.Body()
		}
		ok := err == nil && resp.StatusCode() == fasthttp.StatusOK && json.Unmarshal(body, &a) == nil && a.Shards.Total != nil
		fasthttp.ReleaseResponse(resp)
		if !ok {
			return false
		}
		if *a.Shards.Total == 0 {
			r.b.engineError(r.ctx, fasthttp.StatusNotFound, "index_not_found_exception", w.Missing)
			return true
		}
	}
	return false
}

// engineDown answers a request the engine did not answer: 504 when it
// did not in time, else 502.
func (s *Server) engineDown(ctx *fasthttp.RequestCtx, b *upstream, err error) {
	s.log.Warn("engine_unreachable", "engine", b.Name, "err", err)
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

package proxy

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// transparentMsearch is the transparent path of a multi-search
// (_msearch): each sub-search is rewritten as a single search would be
// (a cursor's, with a point in time or search_after, is sent as it is
// and refined within its page), the rewritten multi-search is sent
// once, and each sub-answer of "responses" is refined as that single
// search's answer would be. A sub-answer that cannot be refined passes
// as the engine gave it with a "winnow" member saying why
// ({"refined":"no","reason":R}); one that is the engine's error passes
// untouched. X-Winnow-Refined is "yes" when every sub-answer that is
// not an error was refined, "partial" when some were, else "no;
// reason=R". A body or answer winnow cannot split passes through whole,
// unrefined, as a search's would.
func (s *Server) transparentMsearch(r *search) {
	subs, err := engine.SplitMsearch(r.orig.Body)
	if err != nil {
		s.fallback(r, "rewrite", err)
		return
	}
	wins := make([]engine.Window, len(subs))
	why := make([]string, len(subs)) // "" while the sub-search can be refined
	for i, sub := range subs {
		if sub.Cursor {
			continue
		}
		sr, w, err := r.b.light.Rewrite(engine.Request{Method: "POST", Path: "/_search", Body: sub.Body}, s.o.Factor)
		if err != nil || pathOnly(sr.Path) != sr.Path {
			// Its answer is still the engine's to the client's own
			// sub-search, passed as it comes.
			why[i] = "rewrite"
			continue
		}
		subs[i].Body, wins[i] = sr.Body, w
	}
	breq := r.orig
	breq.Body = engine.AppendMsearch(make([]byte, 0, len(r.orig.Body)+32*len(subs)), subs)
	resp, err := r.b.do(r.engineDeadline, breq, &r.ctx.Request.Header)
	if err != nil {
		s.fallback(r, "engine_request", err)
		return
	}
	if resp.StatusCode()/100 != 2 || len(resp.Header.ContentEncoding()) != 0 {
		// The engine's error about the rewritten request would not be
		// its answer to the client's: ask again with the client's own.
		s.m.engine(r.b, outcomeHTTPError, time.Since(r.start))
		fasthttp.ReleaseResponse(resp)
		s.forward(r)
		setRefined(r.ctx, "no; reason=engine_error")
		return
	}
	r.held, err = s.inflight.readAnswer(r.bound(), resp)
	if err != nil {
		fasthttp.ReleaseResponse(resp)
		s.fallback(r, unrefinedReason(err, "read"), err)
		return
	}
	defer func() { s.inflight.give(r.held) }()
	defer s.inflight.releaseResponse(resp)
	body := resp.Body()
	spans, err := engine.MsearchResponses(body)
	if err == nil && len(spans) != len(subs) {
		err = errors.New("msearch: " + strconv.Itoa(len(spans)) + " responses to " + strconv.Itoa(len(subs)) + " searches")
	}
	if err != nil {
		s.fallback(r, "parse", err)
		return
	}
	s.m.engine(r.b, outcomeOK, time.Since(r.start))
	refs := s.refineSubs(r, body, spans, subs, why)
	out := s.inflight.buffer(renderRoom(len(body)))
	out = append(out, body[:spans[0][0]]...)
	refinedN, unrefinedN, dups, removed := 0, 0, 0, 0
	for i, sp := range spans {
		if i > 0 {
			out = append(out, body[spans[i-1][1]:sp[0]]...)
		}
		sub := body[sp[0]:sp[1]]
		if engine.MsearchFailed(sub) {
			out = append(out, sub...)
			continue
		}
		if why[i] == "" {
			var ok bool
			if out, ok = s.renderSub(r.b, out, refs[i], wins[i], &dups, &removed); ok {
				refinedN++
				continue
			}
			why[i] = "parse"
		}
		unrefinedN++
		s.m.unrefined(why[i])
		s.warnUnrefined(r, "msearch_"+why[i], fmt.Errorf("msearch: sub-search %d of %d", i+1, len(subs)))
		out = engine.AppendUnrefined(out, sub, why[i])
	}
	out = append(out, body[spans[len(spans)-1][1]:]...)
	copyAnswerHeader(&r.ctx.Response.Header, &resp.Header)
	r.ctx.SetStatusCode(resp.StatusCode())
	s.setRendered(r.ctx, out, &r.held)
	switch {
	case refinedN > 0:
		setDuplicates(r.ctx, dups, removed, r.p.mode)
		if unrefinedN > 0 {
			setRefined(r.ctx, "partial")
		}
	case unrefinedN > 0:
		// Each sub-answer was counted and logged by its own reason.
		setRefined(r.ctx, "no; reason=msearch")
	default:
		setRefined(r.ctx, "no; reason=engine_error")
	}
}

// msearchParallel bounds the sub-answers of one multi-search refined at
// once.
const msearchParallel = 8

// subRefined is a sub-answer of a multi-search, parsed and refined; parsed
// is nil when it could not be parsed.
type subRefined struct {
	parsed *engine.Parsed
	ref    *refined
	p      params
}

// refineSubs parses and refines the sub-answers still refinable (why[i]
// empty, not the engine's error), up to msearchParallel at once: each
// refinement may wait up to the budget for pages to be fetched, so one
// after another a multi-search of n sub-searches could wait n budgets.
// A sub-answer whose refinement panics is left unparsed (logged): the
// engine's own then passes, as for one winnow cannot parse.
func (s *Server) refineSubs(r *search, body []byte, spans [][2]int, subs []engine.SubSearch, why []string) []subRefined {
	refs := make([]subRefined, len(spans))
	ctx := r.context() // made here: r is not for the goroutines to change
	sem := make(chan struct{}, msearchParallel)
	var wg sync.WaitGroup
	for i, sp := range spans {
		sub := body[sp[0]:sp[1]]
		if why[i] != "" || engine.MsearchFailed(sub) {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					refs[i] = subRefined{}
					s.log.Error("msearch_panic", "sub_search", i+1, "panic", fmt.Sprint(p))
				}
				<-sem
			}()
			parsed, err := r.b.light.Parse(sub, "application/json")
			if err != nil {
				return
			}
			p := r.p
			p.cursor = subs[i].Cursor
			ref := s.refine(ctx, parsed.Results, p)
			if p.cursor {
				lastStays(ref.marks, p.mode)
			}
			refs[i] = subRefined{parsed: parsed, ref: ref, p: p}
		})
	}
	wg.Wait()
	return refs
}

// renderSub appends the rendering of a refined sub-answer to out; false
// (out as it was) when it could not be parsed or rendered. dups and
// removed add up what the headers report.
func (s *Server) renderSub(b *upstream, out []byte, sr subRefined, win engine.Window, dups, removed *int) ([]byte, bool) {
	if sr.parsed == nil {
		return out, false
	}
	ref, p := sr.ref, sr.p
	n := len(out)
	rendered, err := b.light.Render(out, sr.parsed, p.marks(ref.marks), p.render(), win)
	if err != nil {
		s.log.Warn("render_failed", "engine", b.Name, "err", err)
		return out[:n], false
	}
	_, d := ref.clusterCounts()
	*dups += d
	*removed += removedCount(ref.marks, p.mode, win)
	return rendered, true
}

package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/proxy/engine"
)

// rrfK is the constant of reciprocal rank fusion (Cormack et al. 2009):
// a result's fused score is the sum over engines of 1/(rrfK + rank).
const rrfK = 60

// merged is one result of a metasearch after fusion.
type merged struct {
	engine.Result
	engines []string
	score   float64
	// tier is the fusion tier: the best rank any engine gave the result,
	// divided by the metasearch's step. order is where its first rank
	// within that tier was read: the tie-break.
	tier  int
	order rankAt
}

// rankAt is a rank one engine (its index) gave a result.
type rankAt struct{ engine, rank int }

// engineAnswer is what one engine returned for a metasearch query.
type engineAnswer struct {
	name    string
	results []engine.Result
	took    time.Duration
	err     error
	// partial says why the answer holds only part of the engine's
	// results ([engine.Parsed.Partial]).
	partial string
}

// metaOutcome is one metasearch: the fused list, its refinement and the
// engines' status.
type metaOutcome struct {
	query   string
	results []merged
	ref     *refined
	answers []engineAnswer
	took    time.Duration
	// more reports that an engine answered all it was asked for, so it
	// may have more: a deeper metasearch could find more results.
	more bool
}

// metasearch sends q to every engine with its own deadline, asking each
// for its first depth results, fuses the answers by canonical URL and
// refines the fused list. Engines that fail or time out are reported,
// not fatal.
//
// The fusion is reciprocal rank fusion in tiers of step ranks, so that
// the list of a deeper metasearch starts with the list of a shallower
// one (depths multiples of step): the search page asks deeper for later
// pages, and a plain fusion of the deeper lists moved results up past
// what an earlier page had shown (a result an engine ranked 40th gained
// a score only once the depth reached 40), so a page repeated results
// and skipped others. A result's tier is the best rank an engine gave
// it, divided by step; results are ordered by tier, then by their fused
// score over the ranks within their tier (the ranks a metasearch of that
// tier's depth sees too), then by where that was first read.
func (s *Server) metasearch(ctx context.Context, q string, depth, step int, p params) *metaOutcome {
	start := time.Now()
	out := &metaOutcome{query: q, answers: make([]engineAnswer, len(s.engines))}
	done := make(chan struct{}, len(s.engines))
	for i, b := range s.engines {
		go func() {
			defer func() {
				if r := recover(); r != nil {
					out.answers[i].err = fmt.Errorf("panic: %v", r)
					s.log.Error("engine_panic", "engine", b.Name, "panic", fmt.Sprint(r))
				}
				done <- struct{}{}
			}()
			out.answers[i] = s.askEngine(ctx, b, engine.Query{Q: q, From: 0, Size: depth})
		}()
	}
	for range s.engines {
		<-done
	}
	step = max(step, 1)
	byKey := map[string]int{}
	var ranks [][]rankAt // per merged result
	for e, a := range out.answers {
		out.more = out.more || a.err == nil && len(a.results) >= depth
		for rank, r := range a.results {
			key, err := canon.URL(r.URL)
			switch {
			case r.URL == "":
				// A hit without a URL (an engine whose URL field is
				// named otherwise than configured) is one result of its
				// own: under one key all of them fused into one.
				key = fmt.Sprintf("\x00%d/%d", e, rank)
			case err != nil:
				key = r.URL
			}
			i, ok := byKey[key]
			if !ok {
				i = len(out.results)
				byKey[key] = i
				out.results = append(out.results, merged{Result: r, tier: rank / step})
				ranks = append(ranks, nil)
			}
			m := &out.results[i]
			m.tier = min(m.tier, rank/step)
			// An engine counts once, at its best rank: one that lists
			// a page twice (under two spellings of its URL) does not
			// give it twice the score.
			if k := len(ranks[i]); k == 0 || ranks[i][k-1].engine != e {
				ranks[i] = append(ranks[i], rankAt{e, rank})
			}
			if !slices.Contains(m.engines, a.name) {
				m.engines = append(m.engines, a.name)
			}
			// The first engine's hit stands for the result; what it
			// lacks, another's gives (Omega's snippet beside an
			// Elasticsearch hit without one).
			m.Title = cmp.Or(m.Title, r.Title)
			m.Snippet = cmp.Or(m.Snippet, r.Snippet)
			m.Text = cmp.Or(m.Text, r.Text)
		}
	}
	for i := range out.results {
		m := &out.results[i]
		m.order.engine = -1
		for _, r := range ranks[i] {
			if r.rank >= (m.tier+1)*step {
				continue // not seen by a metasearch of this tier's depth
			}
			m.score += 1 / float64(rrfK+r.rank+1)
			if m.order.engine < 0 {
				m.order = r
			}
		}
	}
	slices.SortFunc(out.results, func(a, b merged) int {
		return cmp.Or(cmp.Compare(a.tier, b.tier), cmp.Compare(b.score, a.score),
			cmp.Compare(a.order.engine, b.order.engine), cmp.Compare(a.order.rank, b.order.rank))
	})
	list := make([]engine.Result, len(out.results))
	for i, m := range out.results {
		list[i] = m.Result
		list[i].Rank = i
	}
	out.ref = s.refine(ctx, list, p)
	out.took = time.Since(start)
	return out
}

// failed counts the engines that did not answer.
func (o *metaOutcome) failed() int {
	n := 0
	for _, a := range o.answers {
		if a.err != nil {
			n++
		}
	}
	return n
}

// askEngine runs one metasearch query on one engine.
func (s *Server) askEngine(ctx context.Context, b *upstream, q engine.Query) (a engineAnswer) {
	// The engine's own deadline: one slow engine does not hold the page
	// past it.
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	a.name = b.Name
	start := time.Now()
	defer func() { a.took = time.Since(start) }()
	req, err := b.adapter.Search(q)
	if err != nil {
		a.err = err
		return a
	}
	rep, err := b.call(ctx, req, &s.inflight)
	defer s.inflight.give(rep.held)
	switch {
	case errors.Is(err, errOverBound):
		a.err = err
		s.m.engine(b, outcomeOverBound, time.Since(start))
		s.m.unrefined("budget")
		return a
	case err != nil:
		a.err = err
		s.m.engine(b, outcomeDown, time.Since(start))
		return a
	case rep.status/100 != 2:
		a.err = statusError(b.adapter, rep)
		s.m.engine(b, outcomeHTTPError, time.Since(start))
		return a
	}
	p, err := b.adapter.Parse(rep.body, rep.contentType)
	if err != nil {
		a.err = err
		s.m.engine(b, outcomeBadAnswer, time.Since(start))
		return a
	}
	s.m.engine(b, outcomeOK, time.Since(start))
	a.results = p.Results
	a.partial = p.Partial()
	if pg, ok := b.adapter.(engine.Pager); ok && len(p.Results) > 0 && len(p.Results) < q.Size {
		a.results = s.morePages(ctx, b, pg, req, rep, p, q.Size)
	}
	return a
}

// maxMetaPages bounds the pages one metasearch asks a paged engine
// (SearXNG) for: each is a search of every engine behind it.
const maxMetaPages = 10

// morePages asks a paged engine (SearXNG, whose page size is its own)
// for the pages after first, the answer to req, until about depth
// results, the first page's size telling how many pages that takes, and
// returns the results of them all. A page that fails ends the list
// there; when the later pages cannot be read the first page's results
// stand.
func (s *Server) morePages(ctx context.Context, b *upstream, pg engine.Pager, req engine.Request, first reply, p *engine.Parsed, depth int) []engine.Result {
	n := min((depth+len(p.Results)-1)/len(p.Results), maxMetaPages)
	if n < 2 {
		return p.Results
	}
	reqs, _, err := pg.Pages(req, n)
	if err != nil {
		return p.Results
	}
	replies, err := b.callPages(ctx, reqs[1:], &s.inflight)
	defer func() {
		for _, r := range replies {
			s.inflight.give(r.held)
		}
	}()
	if err != nil || len(replies) == 0 {
		return p.Results
	}
	bodies := [][]byte{first.body}
	for _, r := range replies {
		bodies = append(bodies, r.body)
	}
	all, err := pg.ParsePages(bodies, first.contentType)
	if err != nil {
		return p.Results
	}
	return all.Results
}

// statusError says why an engine refused a metasearch query: its status
// and, when the answer is the engine's own error document, the reason it
// gives ("HTTP 400: too_long_http_line_exception: An HTTP line is larger
// than 4096 bytes."), else the status's name ("HTTP 414 Request URI Too
// Long" from Solr's Jetty, "HTTP 502 Bad Gateway" from a proxy's HTML
// page), so the page tells a reader more than a number.
func statusError(ad engine.Adapter, rep reply) error {
	var be *engine.BackendError
	if _, err := ad.Parse(rep.body, rep.contentType); errors.As(err, &be) && be.Reason != "" {
		reason := be.Reason
		if len(reason) > 300 { // Solr's may carry a stack trace
			reason = strings.ToValidUTF8(reason[:300], "") + "…"
		}
		return fmt.Errorf("HTTP %d: %s", rep.status, reason)
	}
	return fmt.Errorf("HTTP %d %s", rep.status, http.StatusText(rep.status))
}

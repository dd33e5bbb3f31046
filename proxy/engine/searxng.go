package engine

import (
	"net/url"
	"strconv"
)

// searxng is the SearXNG JSON adapter. SearXNG has no page size (each
// engine answers about one page), so over-fetching means asking for the
// next pages too: see [Pager].
type searxng struct{ jsonAdapter }

var _ Pager = (*searxng)(nil)

// Rewrite implements [Adapter]. SearXNG cannot be asked for more hits per
// page: Rewrite only forces format=json and asks for the client's page; the
// window holds the whole page. Use Pages to over-fetch.
func (s *searxng) Rewrite(r Request, factor int) (Request, Window, error) {
	reqs, w, err := s.Pages(r, 1)
	if err != nil {
		return r, Window{}, err
	}
	return reqs[0], w, nil
}

// Pages implements [Pager]: it returns requests for pageno N … N+factor-1,
// where N is the client's pageno (default 1). Window.Size is 0: Render
// fills as many results as the first page held.
func (s *searxng) Pages(r Request, factor int) ([]Request, Window, error) {
	u, err := url.Parse(r.Path)
	if err != nil {
		return nil, Window{}, s.errorf("%w: %v", ErrRequest, err)
	}
	q := u.Query()
	page := 1
	if p := q.Get("pageno"); p != "" {
		if page, err = strconv.Atoi(p); err != nil || page < 1 {
			return nil, Window{}, s.errorf("%w: pageno=%q", ErrRequest, p)
		}
	}
	q.Set("format", "json")
	factor = max(factor, 1)
	reqs := make([]Request, factor)
	for i := range reqs {
		q.Set("pageno", strconv.Itoa(page+i))
		u.RawQuery = q.Encode()
		reqs[i] = Request{Method: r.Method, Path: u.RequestURI(), Header: r.Header, Body: r.Body}
	}
	return reqs, Window{}, nil
}

// ParsePages implements [Pager]. Results repeated on a later page (SearXNG
// pages overlap when engines do) are kept; the proxy's clustering sees them
// as identical URLs.
func (s *searxng) ParsePages(bodies [][]byte, contentType string) (*Parsed, error) {
	if len(bodies) == 0 {
		return nil, s.errorf("%w: no pages", ErrMalformed)
	}
	first, err := s.Parse(bodies[0], contentType)
	if err != nil || len(bodies) == 1 {
		return first, err
	}
	// Build one document: the first page with all pages' results in its
	// array, then parse that so every span refers to it.
	merged := append([]byte(nil), bodies[0][:first.list.start]...)
	merged = append(merged, '[')
	n := 0
	for i, b := range bodies {
		p := first
		if i > 0 {
			if p, err = s.Parse(b, contentType); err != nil {
				return nil, s.errorf("page %d: %w", i+1, err)
			}
		}
		for _, e := range p.elems {
			if n > 0 {
				merged = append(merged, ',')
			}
			n++
			merged = append(merged, b[e.start:e.end]...)
		}
	}
	merged = append(merged, ']')
	merged = append(merged, bodies[0][first.list.end:]...)
	p, err := s.Parse(merged, contentType)
	if err != nil {
		return nil, err
	}
	p.first = len(first.Results)
	return p, nil
}

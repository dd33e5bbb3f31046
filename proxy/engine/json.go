package engine

import (
	"fmt"
	"slices"
	"strings"
)

type kind int

const (
	kindES kind = iota
	kindSolr
	kindSearx
	kindGeneric
)

// jsonAdapter serves every JSON backend; kind selects where the hits and
// their fields live. plan is built by newJSON and read-only afterwards.
type jsonAdapter struct {
	cfg  Config
	kind kind
	plan plan
}

// Capture slots of the root selector.
const (
	rError = iota
	rHits
	rStatus
	rTotal
	rStart
	rHL
	rSlots
)

// Capture slots of the hit selector.
const (
	hScore = iota
	hHL
	hID
	hURL
	hTitle
	hSnippet
	hText
	hGroup     // winnow_group, written by winnow index
	hWinner    // winnow_winner
	hRemovable // winnow_removable
	hInner     // Elasticsearch: inner_hits, which Group mode adds to
	hSlots
)

// plan is what Parse looks for in one pass over an answer.
type plan struct {
	root, hit   selector
	nroot, nhit int
	list        []string // path of the result list; nil: the root
	// listApart: the list path shares a member with another root path, so
	// the list is found with path and walked after the root.
	listApart  bool
	single     bool // field paths have no dot: the last member wins
	nstrings   int  // result fields read from the doc as strings (URL, Title, ..., Group)
	textIsSnip bool // single and Fields.Text == Fields.Snippet
}

// newJSON plans the single pass over an answer of kind k: the root
// fields, the result list and the fields of each hit.
func newJSON(cfg Config, k kind) *jsonAdapter {
	a := &jsonAdapter{cfg: cfg, kind: k}
	pl := &a.plan
	f := cfg.Fields
	pl.single = !strings.Contains(f.URL+f.Title+f.Snippet+f.Text, ".")
	pl.planRoot(k, f)
	pl.planList()
	pl.root.finish()
	pl.planHit(cfg, k)
	pl.hit.finish()
	return a
}

// planRoot adds the answer's own fields (error, totals, highlighting) and
// sets the path of the result list.
func (pl *plan) planRoot(k kind, f FieldPaths) {
	pl.nroot = rSlots
	addRoot := func(slot int, segs ...string) {
		pl.root.add(segs, make([]bool, len(segs)), slot, &pl.nroot)
	}
	switch k {
	case kindES:
		addRoot(rError, "error")
		addRoot(rHits, "hits")
		addRoot(rStatus, "status")
		addRoot(rTotal, "hits", "total")
		pl.list = []string{"hits", "hits"}
	case kindSolr:
		addRoot(rError, "error")
		addRoot(rTotal, "response", "numFound")
		addRoot(rStart, "response", "start")
		addRoot(rHL, "highlighting")
		pl.list = []string{"response", "docs"}
	case kindSearx:
		addRoot(rTotal, "number_of_results")
		pl.list = []string{"results"}
	case kindGeneric:
		if f.Total != "" {
			addRoot(rTotal, strings.Split(f.Total, ".")...)
		}
		if f.Results != "." {
			pl.list = strings.Split(f.Results, ".")
		}
	}
}

// planList marks the result list's edge in the root selector, or sets
// listApart when another path shares it.
func (pl *plan) planList() {
	if pl.list == nil {
		return
	}
	// The list edge must not be shared with another path.
	s := &pl.root
	for n, seg := range pl.list {
		e := s.edge(seg)
		if n == len(pl.list)-1 {
			if e.sub != nil || len(e.slots) > 0 {
				pl.listApart = true
				break
			}
			e.list = true
			break
		}
		if e.sub == nil {
			e.sub = &selector{}
			e.seen = pl.nroot
			pl.nroot++
		} else if e.list {
			pl.listApart = true
			break
		}
		s = e.sub
	}
	if pl.listApart {
		clearList(&pl.root)
	}
}

// planHit adds the fields read from each hit: its score, id and
// highlighting by kind, and the configured URL, title, snippet and text.
func (pl *plan) planHit(cfg Config, k kind) {
	f := cfg.Fields
	pl.nhit = hSlots
	addHit := func(slot int, segs []string, last ...bool) {
		pl.hit.add(segs, last, slot, &pl.nhit)
	}
	var prefix []string
	var prefixLast []bool
	switch k {
	case kindES:
		addHit(hScore, []string{"_score"}, true)
		addHit(hInner, []string{"inner_hits"}, false)
		if !cfg.URLOnly {
			addHit(hHL, []string{"highlight"}, true)
		}
		prefix, prefixLast = []string{"_source"}, []bool{true}
	case kindSolr:
		addHit(hScore, []string{"score"}, false)
		addHit(hID, []string{cfg.IDField}, false)
	case kindSearx:
		addHit(hScore, []string{"score"}, false)
	}
	doc := func(slot int, p string) {
		if slot != hWinner && slot != hRemovable {
			pl.nstrings++
		}
		segs := append(append([]string(nil), prefix...), strings.Split(p, ".")...)
		last := append(append([]bool(nil), prefixLast...), make([]bool, len(segs)-len(prefix))...)
		if pl.single {
			last[len(last)-1] = true
		}
		addHit(slot, segs, last...)
	}
	switch {
	case cfg.URLOnly:
		doc(hURL, f.URL)
		if f.Text != "" && f.Text != f.URL {
			doc(hText, f.Text)
		}
	case pl.single:
		// One member sets one field, as a switch over URL, Title,
		// Snippet, Text would.
		doc(hURL, f.URL)
		if f.Title != f.URL {
			doc(hTitle, f.Title)
		}
		if f.Snippet != f.URL && f.Snippet != f.Title {
			doc(hSnippet, f.Snippet)
		}
		if f.Text != "" && f.Text != f.URL && f.Text != f.Title {
			doc(hText, f.Text)
			pl.textIsSnip = f.Text == f.Snippet
		}
	default:
		doc(hURL, f.URL)
		doc(hTitle, f.Title)
		doc(hSnippet, f.Snippet)
		if f.Text != "" {
			doc(hText, f.Text)
		}
	}
	if k == kindES || k == kindSolr {
		// The tags winnow index writes, when the index carries them.
		doc(hGroup, "winnow_group")
		doc(hWinner, "winnow_winner")
		doc(hRemovable, "winnow_removable")
	}
}

func clearList(s *selector) {
	for i := range s.edges {
		s.edges[i].list = false
		if s.edges[i].sub != nil {
			clearList(s.edges[i].sub)
		}
	}
}

func (a *jsonAdapter) Name() string { return a.cfg.Kind }

func (a *jsonAdapter) errorf(format string, args ...any) error {
	return fmt.Errorf("engine %s: "+format, append([]any{a.cfg.Kind}, args...)...)
}

// Parse implements [Adapter]. It validates the answer and collects the
// spans of the result list, each hit's fields and the totals in one pass
// (see [selector]); Results' strings share one allocation.
func (a *jsonAdapter) Parse(body []byte, contentType string) (*Parsed, error) {
	pl := &a.plan
	w := walker{b: body, hit: &pl.hit, nhit: pl.nhit}
	var rootCaps [rSlots + 16]span
	caps := rootCaps[:]
	if pl.nroot > len(caps) {
		caps = make([]span, pl.nroot)
	}
	i := skipWS(body, 0)
	var end int
	var err error
	asList := a.kind == kindGeneric && pl.list == nil && i < len(body) && body[i] == '['
	if asList {
		end, err = w.walkDoc(nil, caps, i, true)
		w.found, w.list = true, span{i, end}
	} else {
		end, err = w.walkDoc(&pl.root, caps, i, false)
	}
	if err == nil {
		if j := skipWS(body, end); j != len(body) {
			err = serr(j, "data after top-level value")
		}
	}
	if err != nil {
		return nil, a.errorf("%w: %v", ErrMalformed, err)
	}
	root := span{i, len(body)}
	if !asList && body[i] != '{' {
		return nil, a.errorf("%w: top-level value is not an object", ErrMalformed)
	}
	if err := a.backendError(body, caps); err != nil {
		return nil, err
	}
	if pl.listApart {
		if l, ok := path(body, root, strings.Join(pl.list, ".")); ok {
			w.found = true
			w.list = l
			if _, err := w.walkList(l.start, 0); err != nil {
				return nil, a.errorf("%w: %v", ErrMalformed, err)
			}
		}
	}
	if !w.found || body[w.list.start] != '[' {
		return nil, a.errorf("%w: no result array", ErrMalformed)
	}
	return a.results(&w, caps), nil
}

func (a *jsonAdapter) backendError(b []byte, caps []span) error {
	e := caps[rError]
	if e.end == 0 || b[e.start] == 'n' || a.kind != kindES && a.kind != kindSolr {
		return nil
	}
	be := &BackendError{Engine: a.cfg.Kind}
	switch a.kind {
	case kindES:
		if caps[rHits].end != 0 {
			return nil
		}
		if s := caps[rStatus]; s.end != 0 {
			f, _ := number(b, s)
			be.Status = int(f)
		}
		if r, ok := field(b, e, "reason"); ok {
			be.Reason = text(b, r, false)
		} else {
			be.Reason = text(b, e, false)
		}
	case kindSolr:
		if s, ok := field(b, e, "code"); ok {
			f, _ := number(b, s)
			be.Status = int(f)
		}
		if m, ok := field(b, e, "msg"); ok {
			be.Reason = text(b, m, false)
		}
	}
	return be
}

// results builds the Parsed from a finished walk.
func (a *jsonAdapter) results(w *walker, caps []span) *Parsed {
	b := w.b
	el := w.elems
	p := &Parsed{body: b, list: w.list, elems: el, Total: -1, first: len(el)}
	p.Results = make([]Result, len(el))
	f := a.cfg.Fields
	pl := &a.plan
	ar := strArena{b: b, refs: make([]strRef, 0, pl.nstrings*len(el))}
	if a.kind == kindES {
		p.inner = make([]int, len(el))
		p.scores = make([]span, len(el))
	}
	if hl := caps[rHL]; hl.end != 0 && len(el) > 0 {
		solrHighlights(b, hl, p.Results, w, f.Snippet)
	}
	for i := range el {
		r := &p.Results[i]
		r.Rank = i
		hc := w.caps[i*w.nhit : (i+1)*w.nhit]
		if s := hc[hScore]; s.end != 0 {
			var ok bool
			if r.Score, ok = number(b, s); ok && p.scores != nil {
				p.scores[i] = s
			}
		}
		if p.inner != nil {
			p.inner[i] = innerHitsAt(b, hc[hInner])
		}
		if h := hc[hHL]; h.end != 0 {
			r.Snippet = highlight(b, h, f.Snippet)
		}
		snip := r.Snippet == ""
		ar.add(&r.URL, hc[hURL])
		ar.add(&r.Title, hc[hTitle])
		if snip {
			ar.add(&r.Snippet, hc[hSnippet])
		}
		if !pl.textIsSnip || !snip || hc[hSnippet].end == 0 {
			ar.add(&r.Text, hc[hText])
		}
		if hc[hGroup].end != 0 {
			ar.add(&r.Group, hc[hGroup])
			r.GroupWinner = string(b[hc[hWinner].start:hc[hWinner].end]) == "true"
			r.Removable = string(b[hc[hRemovable].start:hc[hRemovable].end]) == "true"
		}
	}
	ar.finish()
	a.totals(p, w, caps)
	if len(p.patch) > 1 {
		slices.SortFunc(p.patch, func(x, y patch) int { return x.at.start - y.at.start })
	}
	return p
}

// innerHitsAt returns where an Elasticsearch hit's inner_hits object
// (captured at s) starts, or -1 when the hit has none or it is not an
// object: the walk records it so Group mode need not scan the hit again.
func innerHitsAt(b []byte, s span) int {
	if s.end == 0 || b[s.start] != '{' {
		return -1
	}
	return s.start
}

// totals reads the answer's total and records the patches of the
// numbers Render rewrites (Solr's start); the total itself stays the
// engine's.
func (a *jsonAdapter) totals(p *Parsed, w *walker, caps []span) {
	b, el, f, pl := w.b, w.elems, a.cfg.Fields, &a.plan
	switch a.kind {
	case kindES:
		if t := caps[rTotal]; t.end != 0 {
			obj := b[t.start] == '{'
			v, ok := t, true
			if obj {
				v, ok = field(b, t, "value")
			}
			if n, ok2 := number(b, v); ok && ok2 {
				p.Total = int(n)
			}
		}
	case kindSolr:
		if t := caps[rTotal]; t.end != 0 {
			if n, ok := number(b, t); ok {
				p.Total = int(n)
			}
		}
		if s := caps[rStart]; s.end != 0 && isNumber(b, s) {
			p.patch = append(p.patch, patch{s, 'f'})
		}
		p.ids = make([]string, len(el))
		for i := range el {
			if id := w.caps[i*w.nhit+hID]; id.end != 0 {
				p.ids[i] = text(b, id, false)
			}
		}
	case kindSearx:
		if t := caps[rTotal]; t.end != 0 {
			if n, ok := number(b, t); ok && (n > 0 || len(el) == 0) {
				p.Total = int(n)
			}
		}
	case kindGeneric:
		if f.Total != "" {
			t, ok := caps[rTotal], caps[rTotal].end != 0
			if pl.listApart {
				t, ok = path(b, span{skipWS(b, 0), len(b)}, f.Total)
			}
			if ok {
				if n, ok := number(b, t); ok {
					p.Total = int(n)
				}
			}
		}
	}
}

// solrHighlights sets the snippet of each hit whose id names a member of
// the highlighting object hl (the first such member), in one pass over hl.
func solrHighlights(b []byte, hl span, rs []Result, w *walker, pref string) {
	ids := make([]string, len(rs))
	left := 0
	for i := range rs {
		if id := w.caps[i*w.nhit+hID]; id.end != 0 {
			ids[i] = text(b, id, false)
			left++
		}
	}
	done := make([]bool, len(rs))
	members(b, hl, func(k []byte, v span) bool {
		for i := range rs {
			if w.caps[i*w.nhit+hID].end != 0 && !done[i] && keyEq(k, ids[i]) {
				done[i] = true
				left--
				rs[i].Snippet = highlight(b, v, pref)
			}
		}
		return left > 0
	})
}

// strArena gathers the strings of a Parsed's results that are copied
// verbatim from the body, so they share one allocation.
type strArena struct {
	b    []byte
	refs []strRef
	n    int
}

type strRef struct {
	dst *string
	at  span
}

// add sets *dst to the text at s (see text), now or in finish.
func (ar *strArena) add(dst *string, s span) {
	if s.end == 0 {
		return
	}
	b := ar.b
	switch i := skipWS(b, s.start); b[i] {
	case '"':
		if raw := b[i+1 : s.end-1]; plainString(raw) {
			ar.refs = append(ar.refs, strRef{dst, span{i + 1, s.end - 1}})
			ar.n += len(raw)
			return
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		ar.refs = append(ar.refs, strRef{dst, span{i, s.end}})
		ar.n += s.end - i
		return
	}
	*dst = text(b, s, false)
}

func (ar *strArena) finish() {
	if ar.n == 0 {
		return
	}
	var sb strings.Builder
	sb.Grow(ar.n)
	for _, r := range ar.refs {
		sb.Write(ar.b[r.at.start:r.at.end])
	}
	all := sb.String()
	off := 0
	for _, r := range ar.refs {
		n := r.at.end - r.at.start
		*r.dst = all[off : off+n]
		off += n
	}
}

func isNumber(b []byte, s span) bool {
	_, ok := number(b, s)
	return ok
}

func get(b []byte, doc span, p string) string {
	if s, ok := path(b, doc, p); ok {
		return text(b, s, false)
	}
	return ""
}

// highlight returns the fragments of field pref in a highlight object, else
// those of its first field.
func highlight(b []byte, h span, pref string) string {
	if s, ok := field(b, h, pref); ok {
		return text(b, s, true)
	}
	i := skipWS(b, h.start)
	if i >= h.end || b[i] != '{' {
		return ""
	}
	i = skipWS(b, i+1)
	if i >= h.end || b[i] != '"' {
		return ""
	}
	ke, _ := skipString(b, i)
	vs := skipWS(b, skipWS(b, ke)+1)
	ve, _ := skipValue(b, vs)
	return text(b, span{vs, ve}, true)
}

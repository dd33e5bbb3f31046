package engine

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
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
	nfields    int  // result fields read from the doc (URL, Title, ...)
	textIsSnip bool // single and Fields.Text == Fields.Snippet
}

func newJSON(cfg Config, k kind) *jsonAdapter {
	a := &jsonAdapter{cfg: cfg, kind: k}
	pl := &a.plan
	f := cfg.Fields
	pl.single = !strings.Contains(f.URL+f.Title+f.Snippet+f.Text, ".")
	one := func(segs ...string) ([]string, []bool) { return segs, make([]bool, len(segs)) }
	pl.nroot = rSlots
	addRoot := func(slot int, segs ...string) {
		s, l := one(segs...)
		pl.root.add(s, l, slot, &pl.nroot)
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
	if pl.list != nil {
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
	pl.root.finish()

	pl.nhit = hSlots
	addHit := func(slot int, segs []string, last ...bool) {
		pl.hit.add(segs, last, slot, &pl.nhit)
	}
	var prefix []string
	var prefixLast []bool
	switch k {
	case kindES:
		addHit(hScore, []string{"_score"}, true)
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
		pl.nfields++
		segs := append(append([]string(nil), prefix...), strings.Split(p, ".")...)
		last := append(append([]bool(nil), prefixLast...), make([]bool, len(segs)-len(prefix))...)
		if pl.single {
			last[len(last)-1] = true
		}
		addHit(slot, segs, last...)
	}
	if cfg.URLOnly {
		doc(hURL, f.URL)
		if f.Text != "" && f.Text != f.URL {
			doc(hText, f.Text)
		}
	} else if pl.single {
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
	} else {
		doc(hURL, f.URL)
		doc(hTitle, f.Title)
		doc(hSnippet, f.Snippet)
		if f.Text != "" {
			doc(hText, f.Text)
		}
	}
	pl.hit.finish()
	return a
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
		end, err = w.walkList(i, 0)
		w.found, w.list = true, span{i, end}
	} else {
		end, err = w.walk(&pl.root, caps, i, 0)
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
	ar := strArena{b: b, refs: make([]strRef, 0, pl.nfields*len(el))}
	if hl := caps[rHL]; hl.end != 0 && len(el) > 0 {
		solrHighlights(b, hl, p.Results, w, f.Snippet)
	}
	for i := range el {
		r := &p.Results[i]
		r.Rank = i
		hc := w.caps[i*w.nhit : (i+1)*w.nhit]
		if s := hc[hScore]; s.end != 0 {
			r.Score, _ = number(b, s)
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
	}
	ar.finish()
	a.totals(p, w, caps)
	if len(p.patch) > 1 {
		slices.SortFunc(p.patch, func(x, y patch) int { return x.at.start - y.at.start })
	}
	return p
}

// totals reads the answer's total and records the patches of the
// numbers Render rewrites (the total, Solr's start).
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
				what := byte('n')
				if obj {
					what = 't'
				}
				p.patch = append(p.patch, patch{t, what})
			}
		}
	case kindSolr:
		if t := caps[rTotal]; t.end != 0 {
			if n, ok := number(b, t); ok {
				p.Total = int(n)
				p.patch = append(p.patch, patch{t, 'n'})
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

// Render implements [Adapter]. In Group mode an Elasticsearch winner
// carries its duplicates as inner_hits, as a collapse query returns them,
// and a Solr answer gets the expanded section of Collapse and Expand,
// keyed by the winner's id; other JSON kinds nest them in the winner's
// _winnow. _winnow itself holds winnow's explanation only, under keys no
// client reads as a hit's own.
func (a *jsonAdapter) Render(dst []byte, p *Parsed, marks []Mark, mode Mode, w Window) ([]byte, error) {
	if p == nil || p.xml {
		return nil, a.errorf("Render needs a JSON answer parsed by this adapter")
	}
	pick, err := choose(p, marks, mode, w)
	if err != nil {
		return nil, a.errorf("%w", err)
	}
	b := p.body
	tot := totalOf(p, marks, mode, w)
	out := slices.Grow(dst, renderSize(p, marks, pick, mode))
	pos := 0
	for _, pt := range p.patch {
		if pt.at.start < p.list.start {
			out = append(out, b[pos:pt.at.start]...)
			out = appendPatch(out, b, pt, w, tot)
			pos = pt.at.end
		}
	}
	out = append(out, b[pos:p.list.start]...)
	var expanded []int // Solr winners with duplicates
	out, expanded = a.renderList(out, p, marks, mode, pick)
	pos = p.list.end
	for _, pt := range p.patch {
		if pt.at.start > p.list.start {
			out = append(out, b[pos:pt.at.start]...)
			out = appendPatch(out, b, pt, w, tot)
			pos = pt.at.end
		}
	}
	if len(expanded) > 0 {
		end := rootClose(b)
		out = append(out, b[pos:end]...)
		out = solrExpanded(out, p, marks, expanded)
		pos = end
	}
	return append(out, b[pos:]...), nil
}

// renderList appends the result list of the picked results and returns
// the Solr winners whose duplicates go to the expanded section.
func (a *jsonAdapter) renderList(out []byte, p *Parsed, marks []Mark, mode Mode, pick []int) ([]byte, []int) {
	b := p.body
	out = append(out, '[')
	ind := indentOf(b, p.list)
	var dups dupLists
	var expanded []int
	for n, i := range pick {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, ind...)
		e := p.elems[i]
		m := markAt(marks, i)
		isObj := b[e.start] == '{'
		switch {
		case !isObj || m.Winner < 0:
			out = append(out, b[e.start:e.end]...)
		case mode == Group && m.Winner == i:
			if dups.first == nil {
				dups = duplicateLists(marks)
			}
			switch a.kind {
			case kindES:
				out = esWinner(out, p, marks, i, dups)
			case kindSolr:
				out = openMember(out, b, e, "_winnow")
				out = clusterJSON(out, m.Cluster)
				out = append(out, '}')
				if dups.first[i] >= 0 && p.ids[i] != "" {
					expanded = append(expanded, i)
				}
			default:
				out = openMember(out, b, e, "_winnow")
				out = groupJSON(out, p, marks, i, dups)
				out = append(out, '}')
			}
		case mode == Annotate || mode == Remove && m.Keep:
			out = openMember(out, b, e, "_winnow")
			out = annotationJSON(out, p, m)
			out = append(out, '}')
		default:
			out = append(out, b[e.start:e.end]...)
		}
	}
	if len(pick) > 0 {
		out = append(out, trailIndent(b, p.list)...)
	}
	return append(out, ']'), expanded
}

// total is what hits.total (numFound) says after refinement: value, and
// whether it is exact or a lower bound; keep leaves the backend's own.
type total struct {
	value       int
	exact, keep bool
}

// totalOf is the total of distinct results the client's pages can show.
// In Annotate mode, or when no fetched result is a duplicate, it is the
// backend's. When the fetched results are all the backend has, it is
// exact: the backend's total less the duplicates. Otherwise only the
// distinct results fetched are known to exist: a lower bound ("gte").
func totalOf(p *Parsed, marks []Mark, mode Mode, w Window) total {
	if mode == Annotate || marks == nil || p.Total < 0 {
		return total{keep: true}
	}
	losers := 0
	for i, m := range marks {
		if m.Winner >= 0 && m.Winner != i && !(mode == Remove && m.Keep) {
			losers++
		}
	}
	switch {
	case losers == 0:
		return total{keep: true}
	case p.Total < w.Base+len(p.Results):
		return total{keep: true} // a backend that undercounts: its word stays
	case w.Base == 0 && p.Total == len(p.Results):
		return total{value: max(p.Total-losers, 0), exact: true}
	}
	return total{value: min(w.Base+len(p.Results)-losers, p.Total)}
}

// appendPatch appends the value of patch pt.
func appendPatch(out, b []byte, pt patch, w Window, tot total) []byte {
	switch pt.what {
	case 't':
		if tot.keep {
			return append(out, b[pt.at.start:pt.at.end]...)
		}
		out = append(out, `{"value":`...)
		out = strconv.AppendInt(out, int64(tot.value), 10)
		if tot.exact {
			return append(out, `,"relation":"eq"}`...)
		}
		return append(out, `,"relation":"gte"}`...)
	case 'n':
		if tot.keep || !tot.exact {
			// A bare number cannot say "at least": the backend's stays.
			return append(out, b[pt.at.start:pt.at.end]...)
		}
		return strconv.AppendInt(out, int64(tot.value), 10)
	}
	return strconv.AppendInt(out, int64(patchValue(pt, w)), 10)
}

// rootClose returns the offset of the root object's closing brace.
func rootClose(b []byte) int {
	i := len(b) - 1
	for i > 0 && b[i] != '}' {
		i--
	}
	return i
}

// indentOf returns the white space before the first element of list, so
// rendered arrays keep the backend's layout.
func indentOf(b []byte, l span) []byte {
	i := l.start + 1
	return b[i:skipWS(b, i)]
}

func trailIndent(b []byte, l span) []byte {
	j := l.end - 1
	i := j
	for i > l.start && (b[i-1] == ' ' || b[i-1] == '\n' || b[i-1] == '\t' || b[i-1] == '\r') {
		i--
	}
	return b[i:j]
}

// renderSize is the size of Render's output but for patched numbers.
func renderSize(p *Parsed, marks []Mark, pick []int, mode Mode) int {
	n := len(p.body) + 64
	if marks == nil {
		return n
	}
	for _, i := range pick {
		m := marks[i]
		if m.Winner < 0 || mode == Remove && !m.Keep {
			continue
		}
		n += 64 + len(m.Cluster) + len(m.Relation) + len(m.Explain)
		if mode != Group {
			n += len(p.Results[m.Winner].URL)
		}
	}
	if mode == Group {
		// Each duplicate is copied into its winner: pick lists the
		// winners; their duplicates were not picked.
		for j, d := range marks {
			if d.Winner >= 0 && d.Winner != j {
				e := p.elems[j]
				n += e.end - e.start + 48 + len(d.Relation) + len(d.Explain)
			}
		}
	}
	return n
}

// groupJSON appends the "_winnow" value of winner win in Group mode for
// JSON kinds with no grouping format of their own (SearXNG, generic).
func groupJSON(out []byte, p *Parsed, marks []Mark, win int, dups dupLists) []byte {
	out = append(out, `{"cluster":`...)
	out = appendString(out, marks[win].Cluster)
	out = append(out, `,"duplicates":[`...)
	out = appendDuplicates(out, p, marks, win, dups)
	return append(out, "]}"...)
}

// esWinner appends an Elasticsearch winner in Group mode: the hit with
// _winnow naming its cluster and its duplicates as inner_hits named
// "winnow", in the shape a collapse query's inner_hits take, each
// duplicate with its own _winnow explanation. A hit that has inner_hits
// already gets "winnow" added to them.
func esWinner(out []byte, p *Parsed, marks []Mark, win int, dups dupLists) []byte {
	b := p.body
	e := p.elems[win]
	if dups.first[win] < 0 {
		// Most winners have no duplicates: their hit is not scanned for
		// inner_hits, a scan of every member that would cost about as
		// much as the rest of the rendering.
		out = openMember(out, b, e, "_winnow")
	} else if ih, has := field(b, e, "inner_hits"); has && b[ih.start] == '{' {
		out = append(out, b[e.start:ih.end-1]...)
		if skipWS(b, ih.start+1) < ih.end-1 {
			out = append(out, ',')
		}
		out = append(out, `"winnow":`...)
		out = innerHits(out, p, marks, win, dups)
		out = append(out, b[ih.end-1:e.end-1]...)
		out = append(out, `,"_winnow":`...)
	} else {
		out = append(out, b[e.start:e.end-1]...)
		if skipWS(b, e.start+1) != e.end-1 {
			out = append(out, ',')
		}
		out = append(out, `"inner_hits":{"winnow":`...)
		out = innerHits(out, p, marks, win, dups)
		out = append(out, `},"_winnow":`...)
	}
	out = clusterJSON(out, marks[win].Cluster)
	return append(out, '}')
}

// innerHits appends the inner_hits result of win's duplicates.
func innerHits(out []byte, p *Parsed, marks []Mark, win int, dups dupLists) []byte {
	n := 0
	best := 0.0
	for j := dups.first[win]; j >= 0; j = dups.next[j] {
		n++
		best = max(best, p.Results[j].Score)
	}
	out = append(out, `{"hits":{"total":{"value":`...)
	out = strconv.AppendInt(out, int64(n), 10)
	out = append(out, `,"relation":"eq"},"max_score":`...)
	if best > 0 {
		out = strconv.AppendFloat(out, best, 'g', -1, 64)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, `,"hits":[`...)
	out = appendDuplicates(out, p, marks, win, dups)
	return append(out, "]}}"...)
}

// appendDuplicates appends win's duplicates, as the backend wrote them,
// each with its _winnow explanation, separated by commas.
func appendDuplicates(out []byte, p *Parsed, marks []Mark, win int, dups dupLists) []byte {
	for j := dups.first[win]; j >= 0; j = dups.next[j] {
		if j != dups.first[win] {
			out = append(out, ',')
		}
		e := p.elems[j]
		if p.body[e.start] != '{' {
			out = append(out, p.body[e.start:e.end]...)
			continue
		}
		out = openMember(out, p.body, e, "_winnow")
		out = dupExplain(out, marks[j])
		out = append(out, '}')
	}
	return out
}

// dupExplain appends a duplicate's _winnow value.
func dupExplain(out []byte, d Mark) []byte {
	out = append(out, `{"cluster":`...)
	out = appendString(out, d.Cluster)
	out = append(out, `,"relation":`...)
	out = appendString(out, d.Relation)
	out = append(out, `,"explain":`...)
	out = appendString(out, d.Explain)
	return append(out, '}')
}

// clusterJSON appends a winner's _winnow value.
func clusterJSON(out []byte, cluster string) []byte {
	out = append(out, `{"cluster":`...)
	out = appendString(out, cluster)
	return append(out, '}')
}

// solrExpanded appends the expanded section of Solr's Collapse and
// Expand: for each winner (by its uniqueKey) its duplicates as a result
// list.
func solrExpanded(out []byte, p *Parsed, marks []Mark, winners []int) []byte {
	dups := duplicateLists(marks)
	out = append(out, `,"expanded":{`...)
	for k, w := range winners {
		if k > 0 {
			out = append(out, ',')
		}
		n := 0
		for j := dups.first[w]; j >= 0; j = dups.next[j] {
			n++
		}
		out = appendString(out, p.ids[w])
		out = append(out, `:{"numFound":`...)
		out = strconv.AppendInt(out, int64(n), 10)
		out = append(out, `,"start":0,"docs":[`...)
		out = appendDuplicates(out, p, marks, w, dups)
		out = append(out, "]}"...)
	}
	return append(out, '}')
}

// annotationJSON appends the "_winnow" value of a result in Annotate mode.
func annotationJSON(dst []byte, p *Parsed, m Mark) []byte {
	dst = append(dst, `{"cluster":`...)
	dst = appendString(dst, m.Cluster)
	dst = append(dst, `,"winner":`...)
	dst = appendString(dst, p.Results[m.Winner].URL)
	dst = append(dst, `,"relation":`...)
	dst = appendString(dst, m.Relation)
	dst = append(dst, `,"explain":`...)
	dst = appendString(dst, m.Explain)
	return append(dst, '}')
}

var unmarked = Mark{Winner: -1}

func markAt(marks []Mark, i int) Mark {
	if marks == nil {
		return unmarked
	}
	return marks[i]
}

// choose returns the indexes of the results shown in window w.
func choose(p *Parsed, marks []Mark, mode Mode, w Window) ([]int, error) {
	n := len(p.Results)
	if marks != nil && len(marks) != n {
		return nil, fmt.Errorf("%w: %d marks for %d results", ErrMarks, len(marks), n)
	}
	for i, m := range marks {
		if m.Winner < -1 || m.Winner >= n {
			return nil, fmt.Errorf("%w: result %d has winner %d", ErrMarks, i, m.Winner)
		}
	}
	if mode < Group || mode > Annotate {
		return nil, fmt.Errorf("engine: unknown mode %d", mode)
	}
	size := w.Size
	if size <= 0 {
		size = p.first
	}
	skip := max(w.From-w.Base, 0)
	pick := make([]int, 0, min(size, n))
	for i := 0; i < n && len(pick) < size; i++ {
		m := markAt(marks, i)
		if m.Winner >= 0 && m.Winner != i && !(mode == Remove && m.Keep) {
			continue // a duplicate: shown with its winner, if at all; in Remove mode a kept one takes its own place
		}
		if skip > 0 {
			skip--
			continue
		}
		pick = append(pick, i)
	}
	if mode == Annotate && marks != nil {
		pick = withDuplicates(pick, marks)
	}
	return pick, nil
}

// withDuplicates adds to the picked winners (ascending) their duplicates,
// keeping rank order: in Annotate mode a page counts distinct results as
// Remove and Group do and shows every member of their clusters, so a
// cluster is never split across pages.
func withDuplicates(pick []int, marks []Mark) []int {
	if len(pick) == 0 {
		return pick
	}
	on := make([]bool, len(marks))
	for _, i := range pick {
		on[i] = true
	}
	out := make([]int, 0, len(pick))
	for i, m := range marks {
		if on[i] || m.Winner >= 0 && m.Winner != i && on[m.Winner] {
			out = append(out, i)
		}
	}
	return out
}

// Rewrite implements [Adapter].
func (a *jsonAdapter) Rewrite(r Request, factor int) (Request, Window, error) {
	u, err := url.Parse(r.Path)
	if err != nil {
		return r, Window{}, a.errorf("%w: %v", ErrRequest, err)
	}
	q := u.Query()
	from, size := 0, 10
	var body span
	hasBody := false
	b := r.Body
	if len(strings.TrimSpace(string(b))) > 0 && a.kind == kindES {
		if err := checkDoc(b); err != nil {
			return r, Window{}, a.errorf("%w: body: %v", ErrRequest, err)
		}
		body = span{skipWS(b, 0), len(b)}
		if b[body.start] != '{' {
			return r, Window{}, a.errorf("%w: body is not a JSON object", ErrRequest)
		}
		hasBody = true
		if s, ok := field(b, body, "from"); ok {
			if from, err = intAt(b, s); err != nil {
				return r, Window{}, a.errorf("%w: from: %v", ErrRequest, err)
			}
		}
		if s, ok := field(b, body, "size"); ok {
			if size, err = intAt(b, s); err != nil {
				return r, Window{}, a.errorf("%w: size: %v", ErrRequest, err)
			}
		}
	}
	if a.kind == kindSolr {
		from, size = 0, 10
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{a.cfg.FromParam, &from}, {a.cfg.SizeParam, &size}} {
		if s := q.Get(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return r, Window{}, a.errorf("%w: %s=%q", ErrRequest, p.name, s)
			}
			*p.v = n
		}
	}
	if from < 0 || size < 0 {
		return r, Window{}, a.errorf("%w: negative from or size", ErrRequest)
	}
	bfrom, bsize, w := fetchRange(from, size, factor, a.cfg.MaxFetch, a.cfg.ResultWindow)
	out := Request{Method: r.Method, Header: r.Header, Body: r.Body}
	_, fromInURL := q[a.cfg.FromParam]
	_, sizeInURL := q[a.cfg.SizeParam]
	if hasBody {
		nb := setMember(b, body, "from", bfrom)
		nb = setMember(nb, span{skipWS(nb, 0), len(nb)}, "size", bsize)
		out.Body = nb
	}
	if !hasBody || fromInURL {
		q.Set(a.cfg.FromParam, strconv.Itoa(bfrom))
	}
	if !hasBody || sizeInURL {
		q.Set(a.cfg.SizeParam, strconv.Itoa(bsize))
	}
	if a.kind == kindSolr && q.Get("wt") == "" {
		q.Set("wt", "json")
	}
	u.RawQuery = q.Encode()
	out.Path = u.RequestURI()
	return out, w, nil
}

func intAt(b []byte, s span) (int, error) {
	f, ok := number(b, s)
	if !ok || f < 0 || f != float64(int(f)) {
		return 0, fmt.Errorf("%s is not a non-negative integer", b[s.start:s.end])
	}
	return int(f), nil
}

// setMember sets number member key of the object at s, replacing or adding.
func setMember(b []byte, s span, key string, v int) []byte {
	out := make([]byte, 0, len(b)+len(key)+16)
	if m, ok := field(b, s, key); ok {
		out = append(out, b[:m.start]...)
		out = strconv.AppendInt(out, int64(v), 10)
		return append(out, b[m.end:]...)
	}
	open := skipWS(b, s.start) + 1
	out = append(out, b[:open]...)
	out = appendString(out, key)
	out = append(out, ':')
	out = strconv.AppendInt(out, int64(v), 10)
	if skipWS(b, open) < len(b) && b[skipWS(b, open)] != '}' {
		out = append(out, ',')
	}
	return append(out, b[open:]...)
}

// Search implements [Adapter].
func (a *jsonAdapter) Search(q Query) (Request, error) {
	if q.From < 0 || q.Size < 0 {
		return Request{}, a.errorf("%w: negative from or size", ErrRequest)
	}
	v := url.Values{}
	if a.cfg.Extra != "" {
		var err error
		if v, err = url.ParseQuery(a.cfg.Extra); err != nil {
			return Request{}, a.errorf("Extra: %v", err)
		}
	}
	v.Set(a.cfg.QueryParam, q.Q)
	switch a.kind {
	case kindSearx:
		v.Set("format", "json")
		v.Set("pageno", strconv.Itoa(q.From/max(q.Size, 1)+1))
	default:
		v.Set(a.cfg.FromParam, strconv.Itoa(q.From))
		v.Set(a.cfg.SizeParam, strconv.Itoa(q.Size))
		if a.kind == kindSolr {
			v.Set("wt", "json")
		}
	}
	return Request{Method: "GET", Path: a.cfg.Path + "?" + v.Encode()}, nil
}

func patchValue(pt patch, w Window) int {
	if pt.what == 's' {
		return w.Size
	}
	return w.From
}

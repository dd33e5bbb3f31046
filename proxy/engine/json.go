package engine

import (
	"bytes"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
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
	single     bool  // field paths have no dot: the last member wins
	fields     uint8 // the string fields planned, as bits of fieldSlots
	textIsSnip bool  // single and Fields.Text == Fields.Snippet
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
		if k := slices.Index(fieldSlots[:], slot); k >= 0 {
			pl.fields |= 1 << k
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
	if a.kind == kindSolr && solrNotJSON(contentType) {
		// A cursorMark page is sent as the client asked: with SolrJ's
		// default wt=javabin it comes back in javabin.
		return nil, a.errorf("%w: Solr answer of type %q", ErrFormat, contentType)
	}
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
		// The first root cause names what failed ("all shards failed"
		// is the error's own reason when a query fails on every shard),
		// with its type, the part that tells "closed" from another
		// reason: "index_closed_exception: closed".
		cause := e
		if rc, ok := path(b, e, "root_cause.0"); ok {
			cause = rc
		}
		if be.Reason = esReason(b, cause); be.Reason == "" {
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

// results builds the Parsed from a finished walk. The per-result slices
// are two allocations (Results, and for Elasticsearch the spans Render
// reads), and the strings copied from the body share one more, sized
// exactly (see fillArena).
func (a *jsonAdapter) results(w *walker, caps []span) *Parsed {
	b := w.b
	el := w.elems
	p := &Parsed{body: b, list: w.list, elems: el, Total: -1, first: len(el), kind: a.kind}
	p.Results = make([]Result, len(el))
	f := a.cfg.Fields
	if a.kind == kindES {
		p.es = make([]esHit, len(el))
		p.esScores = a.cfg.URLOnly
	}
	if h := caps[rHL]; h.end != 0 && len(el) > 0 {
		solrHighlights(b, h, p.Results, w, f.Snippet)
	}
	pl := &a.plan
	var local [128]strRef // most answers' strings: no allocation
	refs, n := local[:0], 0
	nhit, rs, es, allCaps := w.nhit, p.Results, p.es, w.caps
	for i := range rs {
		r := &rs[i]
		r.Rank = i
		hc := allCaps[i*nhit:][:nhit:nhit]
		if s := hc[hScore]; s.end != 0 {
			var ok bool
			if p.esScores {
				es[i].score = s
			} else if r.Score, ok = number(b, s); ok && es != nil {
				es[i].score = s
			}
		}
		if es != nil {
			if s := hc[hInner]; s.end != 0 && b[s.start] == '{' {
				es[i].inner = s
			}
		}
		if h := hc[hHL]; h.end != 0 {
			r.Snippet = highlight(b, h, f.Snippet)
		}
		fields := pl.fields
		if hc[hGroup].end != 0 {
			r.GroupWinner = string(b[hc[hWinner].start:hc[hWinner].end]) == "true"
			r.Removable = string(b[hc[hRemovable].start:hc[hRemovable].end]) == "true"
		} else {
			fields &^= 1 << 4 // most hits are untagged
		}
		// A snippet from the highlighting is the hit's; a text field
		// that is the snippet field is read only then.
		if r.Snippet != "" {
			fields &^= 1 << 2
		} else if pl.textIsSnip && hc[hSnippet].end != 0 {
			fields &^= 1 << 3
		}
		for ; fields != 0; fields &= fields - 1 {
			k := bits.TrailingZeros8(fields)
			s := hc[fieldSlots[k]]
			if s.end == 0 {
				continue
			}
			switch j := skipWS(b, s.start); b[j] {
			case '"':
				refs = append(refs, strRef{strField(r, k), span{j + 1, s.end - 1}})
				n += s.end - j - 2
			case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				refs = append(refs, strRef{strField(r, k), span{j, s.end}})
				n += s.end - j
			default:
				*strField(r, k) = text(b, s, false)
			}
		}
	}
	fillArena(b, refs, n, w.noBS)
	a.totals(p, w, caps)
	if len(p.patch) > 1 {
		slices.SortFunc(p.patch, func(x, y patch) int { return x.at.start - y.at.start })
	}
	return p
}

// The string fields of a Result that results reads, as bits: bit k is
// field k of fieldSlots (Result.URL, Title, Snippet, Text, Group).
var fieldSlots = [...]int{hURL, hTitle, hSnippet, hText, hGroup}

// strField returns the address of r's string field k of fieldSlots.
func strField(r *Result, k int) *string {
	switch k {
	case 0:
		return &r.URL
	case 1:
		return &r.Title
	case 2:
		return &r.Snippet
	case 3:
		return &r.Text
	}
	return &r.Group
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
		if h := caps[rHL]; h.end != 0 && b[h.start] == '{' {
			// Rewritten to the documents shown ([solrHighlighting]).
			p.patch = append(p.patch, patch{h, 'h'})
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

// strRef is a string of a Parsed's results that the body holds as it is
// (a JSON string without escapes, or a number's text): where it goes and
// its bytes in the body, a JSON string's without its quotes.
type strRef struct {
	dst *string
	at  span
}

// fillArena copies the strings refs, n bytes, into one allocation of
// the exact size and sets them, then tests the copy at once for what
// would need decoding, a test per string costing more than the copy.
// Only when that test fails are the strings tested one by one, each that
// needs it decoded on its own (see text). noBS: b holds no backslash
// (the structural index found none).
func fillArena(b []byte, refs []strRef, n int, noBS bool) {
	if n == 0 {
		return
	}
	buf := make([]byte, n)
	// buf is written below and never after: all is a string, as
	// strings.Builder makes one.
	all := unsafe.String(unsafe.SliceData(buf), len(buf))
	off := 0
	contStart := false // a string starts with a UTF-8 continuation byte
	for _, r := range refs {
		n := copy(buf[off:], b[r.at.start:r.at.end])
		if n > 0 && buf[off]&0xC0 == 0x80 {
			contStart = true
		}
		*r.dst = all[off : off+n]
		off += n
	}
	if plainArena(buf, contStart, noBS) {
		return
	}
	// Some string needs decoding: test each, as text does (a number's
	// text never does; a JSON string's bytes follow its quote).
	for _, r := range refs {
		if b[r.at.start-1] == '"' && !plainString(b[r.at.start:r.at.end]) {
			*r.dst = unquote(b[r.at.start-1 : r.at.end+1])
		}
	}
}

// plainArena reports whether every string copied into buf is its own
// value (plainString): buf holds printable ASCII other than a backslash
// only, or it holds no backslash and no control byte, is valid UTF-8 and
// no string in it starts inside a character (contStart false), so each
// string is valid UTF-8 too. noBS: buf holds no backslash, known.
func plainArena(buf []byte, contStart, noBS bool) bool {
	if !noBS && bytes.IndexByte(buf, '\\') >= 0 {
		return false
	}
	// printable ASCII: per byte c below 0x80, the high bit of c+0x60 is
	// set iff c >= 0x20, and &^ c clears it for c >= 0x80. A byte of
	// 0xa0 or more carries into the next, but is refused itself: the
	// bits are all set only when each byte is printable ASCII.
	const k = 0x60 * swarLo
	ok := uint64(swarHi)
	i := 0
	for ; i+32 <= len(buf); i += 32 {
		x := buf[i : i+32 : i+32]
		w0, w1, w2, w3 := le64(x, 0), le64(x, 8), le64(x, 16), le64(x, 24)
		ok &= (w0 + k) & (w1 + k) & (w2 + k) & (w3 + k) &^ (w0 | w1 | w2 | w3)
	}
	for ; i+8 <= len(buf); i += 8 {
		w := le64(buf, i)
		ok &= (w + k) &^ w
	}
	if ok&swarHi == swarHi {
		for _, c := range buf[i:] {
			if c < ' ' || c >= utf8.RuneSelf {
				return !contStart && plainString(buf)
			}
		}
		return true
	}
	return !contStart && plainString(buf)
}

func isNumber(b []byte, s span) bool {
	_, ok := number(b, s)
	return ok
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

// esReason is an Elasticsearch error object's "type: reason", its reason
// alone without a type, "" without a reason.
func esReason(b []byte, e span) string {
	r, ok := field(b, e, "reason")
	if !ok {
		return ""
	}
	why := text(b, r, false)
	if ty, ok := field(b, e, "type"); ok {
		why = text(b, ty, false) + ": " + why
	}
	return why
}

// solrNotJSON reports whether a Solr answer's Content-Type names one of
// Solr's other formats: javabin (SolrJ's default) or XML. A JSON answer
// may be sent as text/plain (a configset's json content-type), so only
// these are known not to be JSON.
func solrNotJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "application/octet-stream", "application/vnd.apache.solr.javabin", "application/xml", "text/xml":
		return true
	}
	return false
}

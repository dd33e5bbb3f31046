package engine

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/winnow-search/winnow/resultlist"
)

const (
	atomNS         = "http://www.w3.org/2005/Atom"
	openSearchNS   = "http://a9.com/-/spec/opensearch/1.1/"
	openSearchNS10 = "http://a9.com/-/spec/opensearchrss/1.0/"
)

// feed is the OpenSearch RSS 2.0 / Atom adapter. Render edits the document
// at the byte offsets Parse recorded (by scanFeed, or encoding/xml's
// Decoder.InputOffset), so the prolog, comments, namespace prefixes and
// every element outside the dropped or annotated items stay as the backend
// wrote them.
type feed struct{ cfg Config }

func (f *feed) Name() string { return f.cfg.Kind }

func (f *feed) errorf(format string, args ...any) error {
	return fmt.Errorf("engine %s: "+format, append([]any{f.cfg.Kind}, args...)...)
}

// xmlPatch is a number in the feed's OpenSearch elements to rewrite.
type xmlPatch struct {
	at   span
	what byte // 'i': startIndex, 's': itemsPerPage
	orig int
}

// Parse implements [Adapter]. Feeds made of elements, attributes, text,
// character and CDATA sections, comments and processing instructions in
// UTF-8 are read by a small scanner (scanFeed) in one pass; anything else
// (a DOCTYPE, other entities, another encoding, a syntax error) goes to
// encoding/xml, which reports the error or reads what the scanner
// declined.
func (f *feed) Parse(body []byte, contentType string) (*Parsed, error) {
	st := newFeedState(body, f.cfg.URLOnly)
	if scanFeed(body, st) {
		return st.finish(), nil
	}
	st = newFeedState(body, f.cfg.URLOnly)
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return r, nil
		}
		return nil, fmt.Errorf("unsupported charset %q", label)
	}
	for {
		before := int(d.InputOffset())
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, f.errorf("%w: %v", ErrMalformed, err)
		}
		after := int(d.InputOffset())
		switch t := tok.(type) {
		case xml.StartElement:
			st.start(t.Name.Space, t.Name.Local, before, after)
			if st.wantType() {
				typ := ""
				for _, a := range t.Attr {
					if a.Name.Local == "type" {
						typ = a.Value
					}
				}
				st.textType(typ)
			}
			if st.wantLink() {
				rel, href := "", ""
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "rel":
						rel = a.Value
					case "href":
						href = a.Value
					}
				}
				st.link(rel, href)
			}
		case xml.CharData:
			st.text(t, after)
		case xml.EndElement:
			st.end(before, after)
		}
	}
	if st.p.rootNS < 0 {
		return nil, f.errorf("%w: no root element", ErrMalformed)
	}
	return st.finish(), nil
}

// feedState turns a feed's tokens into a Parsed. Field texts collect in
// buf and become strings in finish, with one allocation.
type feedState struct {
	p                *Parsed
	depth, itemDepth int
	cur              *itemText
	items            []itemText
	child            string // local name of the item child being read
	childDepth       int
	mark             int    // start of the current text in buf
	osField          string // OpenSearch element being read
	osSpan           span
	buf              []byte
	// urlOnly keeps only each item's link (Config.URLOnly): other
	// children's text is checked, not decoded or kept.
	urlOnly bool
	// kind says how the item child's text reads; typed, that the child
	// is an Atom text construct whose type the caller must pass to
	// textType.
	kind  textKind
	typed bool
}

// itemText holds an item's fields as spans of feedState.buf, and how
// their texts read.
type itemText struct {
	url, title, snippet    span
	titleKind, snippetKind textKind
}

// textKind says how a feed's text reads into a [Result]'s Title or
// Snippet.
type textKind uint8

const (
	// asHTML: HTML, as RSS 2.0's description and an Atom construct of
	// type="html" (htmlSnippet).
	asHTML textKind = iota
	// asText: plain text, as an Atom construct of type="text" (the
	// default) or "xhtml" (the text of its elements; RFC 4287 §3.1): its
	// "&" and "<" are escaped (resultText).
	asText
	// asWritten: RSS's title, kept as the feed wrote it.
	asWritten
)

func newFeedState(body []byte, urlOnly bool) *feedState {
	st := &feedState{p: &Parsed{body: body, xml: true, Total: -1, rootNS: -1}, itemDepth: -1, urlOnly: urlOnly}
	// Size the lists for the items the feed seems to hold.
	n := bytes.Count(body, []byte("<item")) + bytes.Count(body, []byte("<entry"))
	st.items = make([]itemText, 0, n)
	st.p.elems = make([]span, 0, n)
	st.p.inner = make([]int, 0, n)
	st.buf = make([]byte, 0, min(len(body)/2, 64<<10))
	return st
}

func (st *feedState) start(space, local string, before, after int) {
	p := st.p
	st.depth++
	if st.depth == 1 {
		p.rootNS = after - 1
		if p.rootNS > 0 && p.body[p.rootNS-1] == '/' {
			p.rootNS--
		}
	}
	switch {
	case st.cur == nil && isItem(space, local):
		st.itemDepth = st.depth
		st.items = append(st.items, itemText{})
		st.cur = &st.items[len(st.items)-1]
		p.elems = append(p.elems, span{start: before})
	case st.cur != nil && st.depth == st.itemDepth+1:
		st.child = local
		st.childDepth = st.depth
		st.mark = len(st.buf)
		st.kind, st.typed = asHTML, false
		switch {
		case space == atomNS && (local == "title" || local == "summary" || local == "content"):
			st.kind, st.typed = asText, true
		case local == "title":
			st.kind = asWritten
		}
		if local == "link" && space == atomNS && st.cur.url.end == st.cur.url.start {
			st.child = "atom:link"
		} else if st.urlOnly && local != "link" {
			st.child = ""
		}
	case st.cur == nil && (space == openSearchNS || space == openSearchNS10):
		st.osField = local
		st.osSpan = span{after, after}
		st.mark = len(st.buf)
	}
}

// wantType reports whether the element just started is an Atom text
// construct whose type attribute ("" if none) the caller must pass to
// textType.
func (st *feedState) wantType() bool { return st.typed }

// textType reads an Atom text construct's type: "html" (or an HTML media
// type, as a content element may name one) is HTML, any other plain text.
func (st *feedState) textType(typ string) {
	st.typed = false
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "html", "text/html":
		st.kind = asHTML
	}
}

// wantLink reports whether the element just started is an Atom link whose
// rel and href the caller must pass to link.
func (st *feedState) wantLink() bool { return st.child == "atom:link" }

func (st *feedState) link(rel, href string) {
	st.child = "link"
	if rel == "" || rel == "alternate" {
		n := len(st.buf)
		st.buf = append(st.buf, href...)
		st.cur.url = span{n, len(st.buf)}
		st.mark = len(st.buf)
	}
}

// wantsText reports whether text at this point is kept.
func (st *feedState) wantsText() bool {
	return st.cur != nil && st.depth >= st.childDepth && st.child != "" || st.osField != ""
}

func (st *feedState) text(t []byte, after int) {
	if st.wantsText() {
		st.buf = append(st.buf, t...)
	}
	if st.osField != "" {
		st.osSpan.end = after
	}
}

func (st *feedState) end(before, after int) {
	p := st.p
	switch {
	case st.cur != nil && st.depth == st.itemDepth:
		p.elems[len(p.elems)-1].end = after
		p.inner = append(p.inner, before)
		st.cur, st.itemDepth = nil, -1
	case st.cur != nil && st.depth == st.childDepth && st.child != "":
		v := st.trimmed()
		keep := false
		switch st.child {
		case "title":
			st.cur.title, st.cur.titleKind, keep = v, st.kind, true
		case "link":
			if st.cur.url.end == st.cur.url.start {
				st.cur.url, keep = v, true
			}
		case "description", "summary":
			st.cur.snippet, st.cur.snippetKind, keep = v, st.kind, true
		case "content":
			if st.cur.snippet.end == st.cur.snippet.start {
				st.cur.snippet, st.cur.snippetKind, keep = v, st.kind, true
			}
		}
		if !keep {
			st.buf = st.buf[:st.mark]
		}
		st.child = ""
	case st.osField != "":
		v := st.trimmed()
		n, err := strconv.Atoi(string(st.buf[v.start:v.end]))
		st.buf = st.buf[:st.mark]
		if err == nil {
			switch st.osField {
			case "totalResults":
				p.Total = n
			case "startIndex":
				p.xpatch = append(p.xpatch, xmlPatch{st.osSpan, 'i', n})
			case "itemsPerPage":
				p.xpatch = append(p.xpatch, xmlPatch{st.osSpan, 's', n})
			}
		}
		st.osField = ""
	}
	st.depth--
}

// trimmed returns the span of buf[mark:] without surrounding white space
// (as strings.TrimSpace trims).
func (st *feedState) trimmed() span {
	v := bytes.TrimSpace(st.buf[st.mark:])
	if len(v) == 0 {
		return span{st.mark, st.mark}
	}
	i := st.mark + (cap(st.buf[st.mark:]) - cap(v))
	return span{i, i + len(v)}
}

func (st *feedState) finish() *Parsed {
	p := st.p
	p.Results = make([]Result, len(st.items))
	all := string(st.buf)
	for i, it := range st.items {
		p.Results[i] = Result{URL: all[it.url.start:it.url.end], Title: it.titleKind.read(all[it.title.start:it.title.end]),
			Snippet: it.snippetKind.read(all[it.snippet.start:it.snippet.end]), Rank: i}
	}
	p.first = len(p.Results)
	return p
}

// read turns a feed's text of kind k into a Result's form.
func (k textKind) read(s string) string {
	switch k {
	case asHTML:
		return htmlSnippet(s)
	case asText:
		return resultText(s)
	}
	return s
}

// resultText writes plain text in a [Result]'s form, where "<" may open a
// highlighting tag and a character reference stands for its character
// (the proxy's page decodes them): the text's own "&" and "<" escaped,
// so that "a <b> c" shows "<b>".
func resultText(s string) string {
	if !strings.ContainsAny(s, "&<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isItem(space, local string) bool {
	return local == "item" && (space == "" || !strings.Contains(space, "/")) ||
		local == "entry" && space == atomNS
}

// edit replaces body[at:end] with what kind says: 'n' the winnow
// namespace declaration, 'v' the number v, 'a' item v's annotation, 'g'
// item v's duplicates, 'd' nothing.
type edit struct {
	at, end int
	kind    byte
	v       int
}

// Render implements [Adapter]. Group nests each duplicate item, as the
// backend wrote it, in a <winnow:duplicate> element at the end of its
// winner; Annotate adds a <winnow:annotation> element to every marked item.
func (f *feed) Render(dst []byte, p *Parsed, marks []Mark, mode Mode, w Window) ([]byte, error) {
	if p == nil || !p.xml {
		return nil, f.errorf("Render needs a feed parsed by this adapter")
	}
	pick, err := choose(p, marks, mode, w)
	if err != nil {
		return nil, f.errorf("%w", err)
	}
	b := p.body
	edits := make([]edit, 0, 1+len(p.xpatch)+len(p.elems))
	size := len(b)
	if mode != Remove && marks != nil || mode == Remove && slices.ContainsFunc(marks, func(m Mark) bool { return m.Keep }) {
		edits = append(edits, edit{p.rootNS, p.rootNS, 'n', 0})
		size += len(Namespace) + 16
	}
	for _, pt := range p.xpatch {
		v := pt.orig
		switch pt.what {
		case 'i':
			v = pt.orig - w.Base + w.From
		case 's':
			if w.Size <= 0 {
				continue
			}
			v = w.Size
		}
		edits = append(edits, edit{pt.at.start, pt.at.end, 'v', v})
		size += 20
	}
	next := 0 // index in pick, which is ascending
	for i, e := range p.elems {
		if next >= len(pick) || pick[next] != i {
			start := e.start
			for start > 0 && isSpace(b[start-1]) {
				start--
			}
			edits = append(edits, edit{start, e.end, 'd', 0})
			continue
		}
		next++
		m := markAt(marks, i)
		switch resultlist.Place(mode, i, m.facts()) {
		case resultlist.Annotated:
			edits = append(edits, edit{p.inner[i], p.inner[i], 'a', i})
			size += 80 + markProbabilitySize + len(m.Cluster) + len(p.Results[m.Winner].URL) + len(m.Relation) + len(m.Explain)
		case resultlist.Leads:
			edits = append(edits, edit{p.inner[i], p.inner[i], 'g', i})
			for j, d := range marks {
				if j != i && d.Winner == i {
					size += 80 + markProbabilitySize + p.elems[j].end - p.elems[j].start + len(d.Cluster) + len(d.Relation) + len(d.Explain)
				}
			}
		}
	}
	slices.SortStableFunc(edits, func(x, y edit) int { return x.at - y.at })
	out := slices.Grow(dst, size)
	pos := 0
	var dups dupLists
	for _, e := range edits {
		out = append(out, b[pos:e.at]...)
		switch e.kind {
		case 'n':
			out = append(out, ` xmlns:winnow="`+Namespace+`"`...)
		case 'v':
			out = strconv.AppendInt(out, int64(e.v), 10)
		case 'a':
			out = xmlAnnotation(out, p, marks[e.v])
		case 'g':
			if dups.first == nil {
				dups = duplicateLists(marks)
			}
			out = xmlGroup(out, p, marks, e.v, dups)
		}
		pos = e.end
	}
	return append(out, b[pos:]...), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func xmlAttr(dst []byte, name, v string) []byte {
	dst = append(dst, ' ')
	dst = append(dst, name...)
	dst = append(dst, `="`...)
	dst = xmlText(dst, v)
	return append(dst, '"')
}

// xmlText appends v escaped exactly as xml.EscapeText escapes it, without
// its io.Writer.
func xmlText(dst []byte, v string) []byte {
	last := 0
	for i := 0; i < len(v); {
		c := v[i]
		var esc string
		if c < utf8.RuneSelf {
			i++
			switch c {
			case '"':
				esc = "&#34;"
			case '\'':
				esc = "&#39;"
			case '&':
				esc = "&amp;"
			case '<':
				esc = "&lt;"
			case '>':
				esc = "&gt;"
			case '\t':
				esc = "&#x9;"
			case '\n':
				esc = "&#xA;"
			case '\r':
				esc = "&#xD;"
			default:
				if c >= ' ' {
					continue
				}
				esc = "\uFFFD"
			}
			dst = append(dst, v[last:i-1]...)
			dst = append(dst, esc...)
			last = i
			continue
		}
		r, n := utf8.DecodeRuneInString(v[i:])
		i += n
		if r == utf8.RuneError && n == 1 || r == 0xFFFE || r == 0xFFFF {
			dst = append(dst, v[last:i-n]...)
			dst = append(dst, "\uFFFD"...)
			last = i
		}
	}
	return append(dst, v[last:]...)
}

func xmlAnnotation(dst []byte, p *Parsed, m Mark) []byte {
	dst = append(dst, "<winnow:annotation"...)
	dst = xmlAttr(dst, "cluster", m.Cluster)
	dst = xmlAttr(dst, "winner", p.Results[m.Winner].URL)
	dst = xmlAttr(dst, "relation", m.Relation)
	dst = xmlProbability(dst, m)
	dst = append(dst, '>')
	dst = xmlText(dst, m.Explain)
	return append(dst, "</winnow:annotation>"...)
}

// xmlProbability appends a duplicate's decision and calibrated
// probability as attributes when its verdict has one;
// probability_at_most when the verdict only bounds it.
func xmlProbability(dst []byte, m Mark) []byte {
	if m.Decision == "" || math.IsNaN(m.Probability) {
		return dst
	}
	dst = xmlAttr(dst, "decision", m.Decision)
	name := "probability"
	if m.ProbabilityAtMost {
		name = "probability_at_most"
	}
	return xmlAttr(dst, name, strconv.FormatFloat(math.Round(m.Probability*1e4)/1e4, 'f', -1, 64))
}

func xmlGroup(out []byte, p *Parsed, marks []Mark, win int, dups dupLists) []byte {
	for j := dups.first[win]; j >= 0; j = dups.next[j] {
		d := marks[j]
		out = append(out, "<winnow:duplicate"...)
		out = xmlAttr(out, "cluster", d.Cluster)
		out = xmlAttr(out, "relation", d.Relation)
		out = xmlProbability(out, d)
		if d.Explain != "" {
			out = xmlAttr(out, "explain", d.Explain)
		}
		out = append(out, '>')
		e := p.elems[j]
		out = append(out, p.body[e.start:e.end]...)
		out = append(out, "</winnow:duplicate>"...)
	}
	return out
}

// Rewrite implements [Adapter]. FromParam is a 0-based offset (Omega's
// TOPDOC); the defaults are from 0 and size 10.
// With TOPDOC as FromParam a request from a nonzero offset also gets
// RAWSEARCH=1: Xapian Omega otherwise snaps TOPDOC down to a multiple of
// HITSPERPAGE, and an over-fetched page would start at the wrong hit.
func (f *feed) Rewrite(r Request, factor int) (Request, Window, error) {
	u, err := url.Parse(r.Path)
	if err != nil {
		return r, Window{}, f.errorf("%w: %v", ErrRequest, err)
	}
	q := u.Query()
	from, size := 0, 10
	for _, pr := range []struct {
		name string
		v    *int
	}{{f.cfg.FromParam, &from}, {f.cfg.SizeParam, &size}} {
		if s := q.Get(pr.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return r, Window{}, f.errorf("%w: %s=%q", ErrRequest, pr.name, s)
			}
			*pr.v = n
		}
	}
	bfrom, bsize, w := fetchRange(from, size, factor, f.cfg.MaxFetch, f.cfg.ResultWindow)
	q.Set(f.cfg.FromParam, strconv.Itoa(bfrom))
	q.Set(f.cfg.SizeParam, strconv.Itoa(bsize))
	if bfrom > 0 && f.cfg.FromParam == "TOPDOC" {
		q.Set("RAWSEARCH", "1")
	}
	u.RawQuery = q.Encode()
	return Request{Method: r.Method, Path: u.RequestURI(), Header: r.Header, Body: r.Body}, w, nil
}

// Search implements [Adapter].
func (f *feed) Search(q Query) (Request, error) {
	if q.From < 0 || q.Size < 0 {
		return Request{}, f.errorf("%w: negative from or size", ErrRequest)
	}
	v, err := url.ParseQuery(f.cfg.Extra)
	if err != nil {
		return Request{}, f.errorf("Extra: %v", err)
	}
	v.Set(f.cfg.QueryParam, q.Q)
	v.Set(f.cfg.FromParam, strconv.Itoa(q.From))
	v.Set(f.cfg.SizeParam, strconv.Itoa(q.Size))
	return Request{Method: "GET", Path: f.cfg.Path + "?" + v.Encode()}, nil
}

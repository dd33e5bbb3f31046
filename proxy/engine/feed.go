package engine

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

const (
	atomNS         = "http://www.w3.org/2005/Atom"
	openSearchNS   = "http://a9.com/-/spec/opensearch/1.1/"
	openSearchNS10 = "http://a9.com/-/spec/opensearchrss/1.0/"
)

// feed is the OpenSearch RSS 2.0 / Atom adapter. Render edits the document
// at byte offsets found with encoding/xml's Decoder.InputOffset, so the
// prolog, comments, namespace prefixes and every element outside the
// dropped or annotated items stay as the backend wrote them.
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

// Parse implements [Adapter].
func (f *feed) Parse(body []byte, contentType string) (*Parsed, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "utf-8", "utf8", "us-ascii", "ascii":
			return r, nil
		}
		return nil, fmt.Errorf("unsupported charset %q", label)
	}
	p := &Parsed{body: body, xml: true, Total: -1, rootNS: -1}
	var (
		depth, itemDepth = 0, -1
		cur              *Result
		child            string // local name of the item child being read
		childDepth       int
		txt              strings.Builder
		osField          string // OpenSearch element being read
		osSpan           span
	)
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
			depth++
			if depth == 1 {
				p.rootNS = after - 1
				if p.rootNS > 0 && body[p.rootNS-1] == '/' {
					p.rootNS--
				}
			}
			switch {
			case cur == nil && isItem(t.Name):
				itemDepth = depth
				p.Results = append(p.Results, Result{Rank: len(p.Results)})
				cur = &p.Results[len(p.Results)-1]
				p.elems = append(p.elems, span{start: before})
			case cur != nil && depth == itemDepth+1:
				child = t.Name.Local
				childDepth = depth
				txt.Reset()
				if child == "link" && t.Name.Space == atomNS && cur.URL == "" {
					rel, href := "", ""
					for _, a := range t.Attr {
						switch a.Name.Local {
						case "rel":
							rel = a.Value
						case "href":
							href = a.Value
						}
					}
					if rel == "" || rel == "alternate" {
						cur.URL = href
					}
				}
			case cur == nil && (t.Name.Space == openSearchNS || t.Name.Space == openSearchNS10):
				osField = t.Name.Local
				osSpan = span{after, after}
				txt.Reset()
			}
		case xml.CharData:
			if cur != nil && depth >= childDepth && child != "" || osField != "" {
				txt.Write(t)
			}
			if osField != "" {
				osSpan.end = after
			}
		case xml.EndElement:
			switch {
			case cur != nil && depth == itemDepth:
				p.elems[len(p.elems)-1].end = after
				p.inner = append(p.inner, before)
				cur, itemDepth = nil, -1
			case cur != nil && depth == childDepth && child != "":
				v := strings.TrimSpace(txt.String())
				switch child {
				case "title":
					cur.Title = v
				case "link":
					if cur.URL == "" {
						cur.URL = v
					}
				case "description", "summary":
					cur.Snippet = v
				case "content":
					if cur.Snippet == "" {
						cur.Snippet = v
					}
				}
				child = ""
			case osField != "":
				n, err := strconv.Atoi(strings.TrimSpace(txt.String()))
				if err == nil {
					switch osField {
					case "totalResults":
						p.Total = n
					case "startIndex":
						p.xpatch = append(p.xpatch, xmlPatch{osSpan, 'i', n})
					case "itemsPerPage":
						p.xpatch = append(p.xpatch, xmlPatch{osSpan, 's', n})
					}
				}
				osField = ""
			}
			depth--
		}
	}
	if p.rootNS < 0 {
		return nil, f.errorf("%w: no root element", ErrMalformed)
	}
	p.first = len(p.Results)
	return p, nil
}

func isItem(n xml.Name) bool {
	return n.Local == "item" && (n.Space == "" || !strings.Contains(n.Space, "/")) ||
		n.Local == "entry" && n.Space == atomNS
}

type edit struct {
	at, end int // replace body[at:end]
	ins     []byte
}

// Render implements [Adapter]. Group nests each duplicate item, as the
// backend wrote it, in a <winnow:duplicate> element at the end of its
// winner; Annotate adds a <winnow:annotation> element to every marked item.
func (f *feed) Render(p *Parsed, marks []Mark, mode Mode, w Window) ([]byte, error) {
	if p == nil || !p.xml {
		return nil, f.errorf("Render needs a feed parsed by this adapter")
	}
	pick, err := choose(p, marks, mode, w)
	if err != nil {
		return nil, f.errorf("%w", err)
	}
	b := p.body
	var edits []edit
	if mode != Remove && marks != nil {
		edits = append(edits, edit{p.rootNS, p.rootNS, []byte(` xmlns:winnow="` + Namespace + `"`)})
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
		edits = append(edits, edit{pt.at.start, pt.at.end, strconv.AppendInt(nil, int64(v), 10)})
	}
	kept := make([]bool, len(p.Results))
	for _, i := range pick {
		kept[i] = true
	}
	for i, e := range p.elems {
		if !kept[i] {
			start := e.start
			for start > 0 && isSpace(b[start-1]) {
				start--
			}
			edits = append(edits, edit{start, e.end, nil})
			continue
		}
		m := markAt(marks, i)
		if m.Winner < 0 {
			continue
		}
		var ins []byte
		switch {
		case mode == Annotate:
			ins = xmlAnnotation(p, m)
		case mode == Group && m.Winner == i:
			ins = xmlGroup(p, marks, i)
		}
		if ins != nil {
			edits = append(edits, edit{p.inner[i], p.inner[i], ins})
		}
	}
	slices.SortStableFunc(edits, func(x, y edit) int { return x.at - y.at })
	out := make([]byte, 0, len(b)+len(edits)*64)
	pos := 0
	for _, e := range edits {
		out = append(out, b[pos:e.at]...)
		out = append(out, e.ins...)
		pos = e.end
	}
	return append(out, b[pos:]...), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func xmlAttr(dst []byte, name, v string) []byte {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(v))
	dst = append(dst, ' ')
	dst = append(dst, name...)
	dst = append(dst, `="`...)
	dst = append(dst, buf.Bytes()...)
	return append(dst, '"')
}

func xmlText(dst []byte, v string) []byte {
	var buf bytes.Buffer
	_ = xml.EscapeText(&buf, []byte(v))
	return append(dst, buf.Bytes()...)
}

func xmlAnnotation(p *Parsed, m Mark) []byte {
	out := []byte("<winnow:annotation")
	out = xmlAttr(out, "cluster", m.Cluster)
	out = xmlAttr(out, "winner", p.Results[m.Winner].URL)
	out = xmlAttr(out, "relation", m.Relation)
	out = append(out, '>')
	out = xmlText(out, m.Explain)
	return append(out, "</winnow:annotation>"...)
}

func xmlGroup(p *Parsed, marks []Mark, win int) []byte {
	var out []byte
	for j, d := range marks {
		if j == win || d.Winner != win {
			continue
		}
		out = append(out, "<winnow:duplicate"...)
		out = xmlAttr(out, "cluster", d.Cluster)
		out = xmlAttr(out, "relation", d.Relation)
		out = xmlAttr(out, "explain", d.Explain)
		out = append(out, '>')
		e := p.elems[j]
		out = append(out, p.body[e.start:e.end]...)
		out = append(out, "</winnow:duplicate>"...)
	}
	return out
}

// Rewrite implements [Adapter]. FromParam is a 0-based offset (Omega's
// TOPDOC); the defaults are from 0 and size 10.
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
	bfrom, bsize, w := fetchRange(from, size, factor, f.cfg.MaxFetch)
	q.Set(f.cfg.FromParam, strconv.Itoa(bfrom))
	q.Set(f.cfg.SizeParam, strconv.Itoa(bsize))
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

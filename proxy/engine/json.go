package engine

import (
	"fmt"
	"net/url"
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
// their fields live.
type jsonAdapter struct {
	cfg  Config
	kind kind
}

func (a *jsonAdapter) Name() string { return a.cfg.Kind }

func (a *jsonAdapter) errorf(format string, args ...any) error {
	return fmt.Errorf("engine %s: "+format, append([]any{a.cfg.Kind}, args...)...)
}

// Parse implements [Adapter].
func (a *jsonAdapter) Parse(body []byte, contentType string) (*Parsed, error) {
	if err := checkDoc(body); err != nil {
		return nil, a.errorf("%w: %v", ErrMalformed, err)
	}
	root := span{skipWS(body, 0), len(body)}
	if body[root.start] != '{' {
		if a.kind == kindGeneric && body[root.start] == '[' && a.cfg.Fields.Results == "." {
			return a.parseList(body, root, root)
		}
		return nil, a.errorf("%w: top-level value is not an object", ErrMalformed)
	}
	if err := a.backendError(body, root); err != nil {
		return nil, err
	}
	var list span
	var ok bool
	switch a.kind {
	case kindES:
		list, ok = path(body, root, "hits.hits")
	case kindSolr:
		list, ok = path(body, root, "response.docs")
	case kindSearx:
		list, ok = field(body, root, "results")
	case kindGeneric:
		list, ok = path(body, root, a.cfg.Fields.Results)
		if a.cfg.Fields.Results == "." {
			list, ok = root, true
		}
	}
	if !ok || body[list.start] != '[' {
		return nil, a.errorf("%w: no result array", ErrMalformed)
	}
	return a.parseList(body, root, list)
}

func (a *jsonAdapter) backendError(b []byte, root span) error {
	e, ok := field(b, root, "error")
	if !ok || b[e.start] == 'n' {
		return nil
	}
	be := &BackendError{Engine: a.cfg.Kind}
	switch a.kind {
	case kindES:
		if _, hits := field(b, root, "hits"); hits {
			return nil
		}
		if s, ok := field(b, root, "status"); ok {
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
	default:
		return nil
	}
	return be
}

func (a *jsonAdapter) parseList(b []byte, root, list span) (*Parsed, error) {
	el := elements(b, list)
	p := &Parsed{body: b, list: list, elems: el, Total: -1, first: len(el)}
	p.Results = make([]Result, len(el))
	f := a.cfg.Fields
	var hl span
	hasHL := false
	if a.kind == kindSolr {
		hl, hasHL = field(b, root, "highlighting")
	}
	single := !strings.Contains(f.URL+f.Title+f.Snippet+f.Text, ".")
	for i, e := range el {
		r := &p.Results[i]
		r.Rank = i
		doc := e
		switch a.kind {
		case kindES:
			doc = span{}
			var h span
			members(b, e, func(k []byte, v span) bool {
				switch {
				case keyEq(k, "_score"):
					r.Score, _ = number(b, v)
				case keyEq(k, "_source"):
					doc = v
				case keyEq(k, "highlight"):
					h = v
				}
				return true
			})
			if h.end != 0 {
				r.Snippet = highlight(b, h, f.Snippet)
			}
		case kindSolr:
			if s, ok := field(b, e, "score"); ok {
				r.Score, _ = number(b, s)
			}
			if hasHL {
				if id, ok := field(b, e, a.cfg.IDField); ok {
					if h, ok := field(b, hl, text(b, id, false)); ok {
						r.Snippet = highlight(b, h, f.Snippet)
					}
				}
			}
		case kindSearx:
			if s, ok := field(b, e, "score"); ok {
				r.Score, _ = number(b, s)
			}
		}
		if doc.end == 0 {
			continue
		}
		if single && b[doc.start] == '{' {
			snip := r.Snippet == ""
			members(b, doc, func(k []byte, v span) bool {
				switch {
				case keyEq(k, f.URL):
					r.URL = text(b, v, false)
				case keyEq(k, f.Title):
					r.Title = text(b, v, false)
				case snip && keyEq(k, f.Snippet):
					r.Snippet = text(b, v, false)
				case f.Text != "" && keyEq(k, f.Text):
					r.Text = text(b, v, false)
				}
				return true
			})
			continue
		}
		r.URL = get(b, doc, f.URL)
		r.Title = get(b, doc, f.Title)
		if r.Snippet == "" {
			r.Snippet = get(b, doc, f.Snippet)
		}
		if f.Text != "" {
			r.Text = get(b, doc, f.Text)
		}
	}
	switch a.kind {
	case kindES:
		if t, ok := path(b, root, "hits.total"); ok {
			if b[t.start] == '{' {
				t, ok = field(b, t, "value")
			}
			if n, ok2 := number(b, t); ok && ok2 {
				p.Total = int(n)
			}
		}
	case kindSolr:
		if t, ok := path(b, root, "response.numFound"); ok {
			if n, ok := number(b, t); ok {
				p.Total = int(n)
			}
		}
		if s, ok := path(b, root, "response.start"); ok && isNumber(b, s) {
			p.patch = append(p.patch, patch{s, 'f'})
		}
	case kindSearx:
		if t, ok := field(b, root, "number_of_results"); ok {
			if n, ok := number(b, t); ok && (n > 0 || len(el) == 0) {
				p.Total = int(n)
			}
		}
	case kindGeneric:
		if f.Total != "" {
			if t, ok := path(b, root, f.Total); ok {
				if n, ok := number(b, t); ok {
					p.Total = int(n)
				}
			}
		}
	}
	return p, nil
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

// Render implements [Adapter].
func (a *jsonAdapter) Render(p *Parsed, marks []Mark, mode Mode, w Window) ([]byte, error) {
	if p == nil || p.xml {
		return nil, a.errorf("Render needs a JSON answer parsed by this adapter")
	}
	pick, err := choose(p, marks, mode, w)
	if err != nil {
		return nil, a.errorf("%w", err)
	}
	b := p.body
	out := make([]byte, 0, len(b)+len(pick)*96)
	pos := 0
	for _, pt := range p.patch {
		if pt.at.start < p.list.start {
			out = append(out, b[pos:pt.at.start]...)
			out = strconv.AppendInt(out, int64(patchValue(pt, w)), 10)
			pos = pt.at.end
		}
	}
	out = append(out, b[pos:p.list.start]...)
	out = append(out, '[')
	ind := indentOf(b, p.list)
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
			out = withMember(out, b, e, "_winnow", a.groupJSON(p, marks, i))
		case mode == Annotate:
			out = withMember(out, b, e, "_winnow", annotationJSON(nil, p, m))
		default:
			out = append(out, b[e.start:e.end]...)
		}
	}
	if len(pick) > 0 {
		out = append(out, trailIndent(b, p.list)...)
	}
	out = append(out, ']')
	pos = p.list.end
	for _, pt := range p.patch {
		if pt.at.start > p.list.start {
			out = append(out, b[pos:pt.at.start]...)
			out = strconv.AppendInt(out, int64(patchValue(pt, w)), 10)
			pos = pt.at.end
		}
	}
	return append(out, b[pos:]...), nil
}

func patchValue(pt patch, w Window) int {
	if pt.what == 's' {
		return w.Size
	}
	return w.From
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

func (a *jsonAdapter) groupJSON(p *Parsed, marks []Mark, win int) []byte {
	m := marks[win]
	out := []byte(`{"cluster":`)
	out = appendString(out, m.Cluster)
	out = append(out, `,"duplicates":[`...)
	n := 0
	for j, d := range marks {
		if j == win || d.Winner != win {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		e := p.elems[j]
		ann := append([]byte(`{"relation":`), appendString(nil, d.Relation)...)
		ann = append(ann, `,"explain":`...)
		ann = appendString(ann, d.Explain)
		ann = append(ann, '}')
		if p.body[e.start] == '{' {
			out = withMember(out, p.body, e, "_winnow", ann)
		} else {
			out = append(out, p.body[e.start:e.end]...)
		}
	}
	return append(out, "]}"...)
}

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
	if mode < Remove || mode > Annotate {
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
		loser := m.Winner >= 0 && m.Winner != i
		if loser && mode != Annotate {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		pick = append(pick, i)
	}
	return pick, nil
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
	bfrom, bsize, w := fetchRange(from, size, factor, a.cfg.MaxFetch)
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

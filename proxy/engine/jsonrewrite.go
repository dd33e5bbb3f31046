package engine

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

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
	// A Solr search's parameters may come in a form body (SolrJ's POST,
	// pysolr's long queries), which Solr reads as it reads the query
	// string's: its start, rows and wt are the search's. The gate lets a
	// Solr search body through only as a form or a JSON object.
	var form url.Values
	if a.kind == kindSolr {
		from, size = 0, 10
		if i := skipWS(b, 0); i < len(b) && b[i] != '{' {
			if form, err = url.ParseQuery(string(b)); err != nil {
				return r, Window{}, a.errorf("%w: form body: %v", ErrRequest, err)
			}
		}
	}
	param := func(name string) string {
		if s := q.Get(name); s != "" || form == nil {
			return s
		}
		return form.Get(name)
	}
	if a.kind == kindSolr {
		// Only JSON answers are refined: any other format (SolrJ's
		// default javabin, its XML) is sent on once, as the client
		// asked, not over-fetched and then asked for again.
		if wt := param("wt"); wt != "" && wt != "json" {
			return r, Window{}, a.errorf("%w: Solr wt=%s", ErrFormat, wt)
		}
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{a.cfg.FromParam, &from}, {a.cfg.SizeParam, &size}} {
		if s := param(p.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				return r, Window{}, a.errorf("%w: %s=%q", ErrRequest, p.name, s)
			}
			*p.v = n
		}
	}
	// Solr's JSON Request API (SolrJ's JsonQueryRequest): the body's
	// offset and limit are the search's start and rows, over the query
	// string's.
	solrJSON := false
	if i := skipWS(b, 0); a.kind == kindSolr && form == nil && i < len(b) {
		if err := checkDoc(b); err != nil {
			return r, Window{}, a.errorf("%w: body: %v", ErrRequest, err)
		}
		body = span{i, len(b)}
		for _, m := range []struct {
			name string
			v    *int
		}{{"offset", &from}, {"limit", &size}} {
			if s, ok := field(b, body, m.name); ok {
				if *m.v, err = intAt(b, s); err != nil {
					return r, Window{}, a.errorf("%w: %s: %v", ErrRequest, m.name, err)
				}
				solrJSON = true
			}
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
	if solrJSON {
		nb := setMember(b, body, "offset", bfrom)
		out.Body = setMember(nb, span{skipWS(nb, 0), len(nb)}, "limit", bsize)
	}
	if form.Has(a.cfg.FromParam) || form.Has(a.cfg.SizeParam) {
		// Solr merges the two, the query string's first: the window is
		// set there alone, so the form's own values are not read.
		form.Del(a.cfg.FromParam)
		form.Del(a.cfg.SizeParam)
		out.Body = []byte(form.Encode())
	}
	if a.kind == kindSolr && param("wt") == "" {
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
	text := q.Q
	if a.kind == kindES || a.kind == kindSolr {
		text = luceneText(text)
	}
	v.Set(a.cfg.QueryParam, text)
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

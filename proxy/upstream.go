package proxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
)

// upstream is one configured search engine with its adapters and its
// HTTP client: everything winnow sends to an engine goes through it.
type upstream struct {
	Engine
	adapter engine.Adapter
	// light speaks the same API but parses only URLs and texts: the
	// transparent path needs no titles or snippets.
	light  engine.Adapter
	base   *url.URL
	client *fasthttp.Client
	search string // last path segment of search requests, e.g. "_search"
}

func newUpstream(e Engine) (*upstream, error) {
	if e.Name == "" {
		return nil, errors.New("name is empty")
	}
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q is not an http(s) URL", e.URL)
	}
	a, err := engine.New(e.Adapter)
	if err != nil {
		return nil, err
	}
	lightCfg := e.Adapter
	lightCfg.URLOnly = true
	light, err := engine.New(lightCfg)
	if err != nil {
		return nil, err
	}
	search := path.Base(cmp.Or(e.Adapter.Path, defaultSearchPath(a.Name())))
	return &upstream{
		Engine:  e,
		adapter: a,
		light:   light,
		base:    u,
		search:  search,
		client: &fasthttp.Client{
			Name:                          "winnow",
			ReadTimeout:                   e.Timeout,
			WriteTimeout:                  e.Timeout,
			MaxConnsPerHost:               1024,
			MaxResponseBodySize:           64 << 20,
			DisablePathNormalizing:        true,
			DisableHeaderNamesNormalizing: true,
			NoDefaultUserAgentHeader:      true,
			// Engines on IPv6 addresses ([::1]:9200): fasthttp dials IPv4 only
			// unless told.
			DialDualStack: true,
		},
	}, nil
}

func defaultSearchPath(kind string) string {
	switch kind {
	case "elasticsearch":
		return "/_search"
	case "solr":
		return "/select"
	case "opensearch-rss":
		return "/"
	}
	return "/search"
}

// hopHeaders are not forwarded in either direction (RFC 9110 §7.6.1);
// Accept-Encoding is dropped so answers come back uncompressed to parse.
var hopHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true, "proxy-authenticate": true,
	"proxy-authorization": true, "te": true, "trailer": true, "transfer-encoding": true, "upgrade": true,
	"host": true, "accept-encoding": true, "content-length": true,
}

// isHop reports whether header k is in hopHeaders, in any case, without
// allocating: it runs for every header of every request and answer.
func isHop(k []byte) bool {
	var lower [len("proxy-authorization")]byte
	if len(k) > len(lower) {
		return false
	}
	for i, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return hopHeaders[string(lower[:len(k)])]
}

// forwardable reports whether a client's request header goes on to the
// backend: not hop-by-hop, not one of winnow's own X-Winnow-*.
func forwardable(k []byte) bool {
	const own = "x-winnow-"
	if len(k) >= len(own) && strings.EqualFold(string(k[:len(own)]), own) {
		return false
	}
	return !isHop(k)
}

// do sends r to the backend within its timeout and the deadline of ctx.
// The headers are the client's (client not nil) minus hop-by-hop and
// X-Winnow-* ones, else r.Header. The answer stays in fasthttp's pooled
// response, read in place: the caller must release it with
// fasthttp.ReleaseResponse.
func (u *upstream) do(ctx context.Context, r engine.Request, client *fasthttp.RequestHeader) (*fasthttp.Response, error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	target := *u.base
	pth, rawQuery, _ := strings.Cut(r.Path, "?")
	target.Path = strings.TrimSuffix(u.base.Path, "/") + pth
	target.RawQuery = rawQuery
	req.SetRequestURI(target.String())
	req.Header.SetMethod(cmp.Or(r.Method, "GET"))
	if client != nil {
		for k, v := range client.All() {
			if forwardable(k) {
				req.Header.SetBytesKV(k, v)
			}
		}
	} else {
		for k, v := range r.Header {
			req.Header.Set(k, v)
		}
	}
	req.Header.Del("Accept-Encoding")
	if len(r.Body) > 0 {
		req.SetBodyRaw(r.Body)
	}
	deadline := time.Now().Add(u.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	resp := fasthttp.AcquireResponse()
	if err := u.client.DoDeadline(req, resp, deadline); err != nil {
		fasthttp.ReleaseResponse(resp)
		return nil, err
	}
	return resp, nil
}

// call is [upstream.do] for callers that keep the answer: it returns the
// status, content type, a copy of the body and the end-to-end headers.
func (u *upstream) call(ctx context.Context, r engine.Request) (status int, contentType string, body []byte, hdr [][2]string, err error) {
	resp, err := u.do(ctx, r, nil)
	if err != nil {
		return 0, "", nil, nil, err
	}
	defer fasthttp.ReleaseResponse(resp)
	for k, v := range resp.Header.All() {
		if !isHop(k) && !strings.EqualFold(string(k), "Content-Encoding") {
			hdr = append(hdr, [2]string{string(k), string(v)})
		}
	}
	return resp.StatusCode(), string(resp.Header.ContentType()), append([]byte(nil), resp.Body()...), hdr, nil
}

// isSearch reports whether a client request is a search the adapter can
// rewrite: its path ends with the engine's search segment.
func (u *upstream) isSearch(r engine.Request) bool {
	p, _, _ := strings.Cut(r.Path, "?")
	return u.search == "/" || u.search == "." || path.Base(p) == u.search
}

// callPages fetches several pages of the engine in parallel (SearXNG).
// The first page decides the status; a later page that fails ends the
// list there.
func (u *upstream) callPages(ctx context.Context, reqs []engine.Request) (int, string, [][]byte, [][2]string, error) {
	type answer struct {
		status int
		ct     string
		body   []byte
		hdr    [][2]string
		err    error
	}
	answers := make([]answer, len(reqs))
	done := make(chan struct{}, len(reqs))
	for i, r := range reqs {
		go func() {
			defer func() { done <- struct{}{} }()
			a := &answers[i]
			a.status, a.ct, a.body, a.hdr, a.err = u.call(ctx, r)
		}()
	}
	for range reqs {
		<-done
	}
	if a := answers[0]; a.err != nil || a.status/100 != 2 {
		return a.status, a.ct, [][]byte{a.body}, a.hdr, a.err
	}
	var bodies [][]byte
	for _, a := range answers {
		if a.err != nil || a.status/100 != 2 {
			break
		}
		bodies = append(bodies, a.body)
	}
	return answers[0].status, answers[0].ct, bodies, answers[0].hdr, nil
}

// relay writes a backend answer to the client as the backend gave it
// (its Content-Encoding included), minus hop-by-hop headers. The body
// moves from resp to the client's response instead of being copied.
func relay(ctx *fasthttp.RequestCtx, resp *fasthttp.Response) {
	ctx.Response.Reset()
	for k, v := range resp.Header.All() {
		if !isHop(k) {
			ctx.Response.Header.SetBytesKV(k, v)
		}
	}
	ctx.SetStatusCode(resp.StatusCode())
	body := resp.SwapBody(nil)
	resp.SwapBody(ctx.Response.SwapBody(body))
}

// copyAnswerHeader copies a backend answer's end-to-end headers but
// Content-Encoding (winnow parsed and rewrote an identity body).
func copyAnswerHeader(dst, src *fasthttp.ResponseHeader) {
	for k, v := range src.All() {
		if !isHop(k) && !strings.EqualFold(string(k), "Content-Encoding") {
			dst.SetBytesKV(k, v)
		}
	}
}

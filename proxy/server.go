package proxy

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/cluster/client"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/page"
	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// Engine is one search backend.
type Engine struct {
	// Name labels the engine in metrics, logs and the search page.
	Name string
	// URL is the backend's base URL, e.g. "http://127.0.0.1:9200".
	URL string
	// Adapter configures how its API is spoken (kind, fields, paths).
	Adapter engine.Config
	// Timeout bounds one call to the engine; zero means 2s. It sits
	// inside the request's own deadline.
	Timeout time.Duration
}

// Options configure a [Server]. Zero fields take the defaults named.
type Options struct {
	// Engines are the backends; at least one.
	Engines []Engine
	// Transparent names the engine that requests outside winnow's own
	// paths are forwarded to, in that engine's API; default the first
	// engine; "-" turns transparent mode off.
	Transparent string
	// Mode is how duplicates are shown by default: engine.Remove,
	// engine.Group or engine.Annotate. Default Group (the zero value is
	// Remove; set ModeSet to keep an explicit Remove).
	Mode    engine.Mode
	ModeSet bool
	// Factor is the over-fetch factor: a page of n results asks the
	// backend for (from+n)·Factor. Default 3.
	Factor int
	// TopK is the number of results refined per query. Default 50.
	TopK int
	// Budget bounds the refinement of one query: what is not signed in
	// time passes through unmarked. Default 300ms.
	Budget time.Duration
	// Decision decides near-duplicates (zero value: the default).
	Decision similarity.Decision
	// Signer signs pages.
	Signer page.Signer
	// Fetch configures the page fetcher (SSRF guard on by default).
	Fetch fetch.Options
	// Cluster is the cluster service (winnow backend) the proxy asks
	// first; nil means none. Results it knows as verified duplicates of
	// another result need no online work; a service that is down, slow or
	// failing only means the proxy works alone.
	Cluster *client.Client
	// ClusterTimeout bounds one lookup in the cluster service, inside the
	// budget. Default 50ms.
	ClusterTimeout time.Duration
	// ClusterFeed sends the signatures the proxy computes (pages it
	// fetched, texts hits carried) to the cluster service in the
	// background, so the service learns them. Needs Cluster.
	ClusterFeed bool
	// CacheBytes bounds the signature cache. Default 256 MiB.
	CacheBytes int64
	// CacheTTL is how long a signature is used before it is revalidated.
	// Default 1h.
	CacheTTL time.Duration
	// AnswerCacheBytes bounds the cache of refined answers: a request
	// whose backend answer is the same as last time (but for digits
	// before the results, such as the time taken) reuses the last
	// refinement while its signatures are still cached. Default 16 MiB;
	// negative turns it off.
	AnswerCacheBytes int64
	// MaxRequestBytes caps a client request body. Default 1 MiB.
	MaxRequestBytes int
	// MaxHeaderBytes caps a client request's headers. Default 16 KiB.
	MaxHeaderBytes int
	// MaxConns caps concurrent client connections. Default 10,000.
	MaxConns int
	// ReadTimeout, WriteTimeout and IdleTimeout bound client
	// connections. Defaults 10s, 30s, 60s.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// Logger receives the server's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Server is winnow's refinement proxy: a fasthttp server in front of one
// or more search backends. Create it with [New], run it with
// [Server.Serve] and stop it with [Server.Shutdown].
type Server struct {
	o        Options
	engines  []*backend
	transp   *backend
	fetcher  *fetch.Client
	cache    *sigCache
	answers  *answerCache // nil: off
	rewrites *twoGen[string, rewritten]
	ref      *refiner
	m        *metrics
	log      *slog.Logger
	srv      *fasthttp.Server
	ready    atomic.Bool
	stopLife context.CancelFunc

	lnMu   sync.Mutex
	lns    []net.Listener // given to Serve
	closed bool           // Shutdown has begun

}

// backend is one configured engine with its adapter and HTTP client.
type backend struct {
	Engine
	adapter engine.Adapter
	// light speaks the same API but parses only URLs and texts: the
	// transparent path needs no titles or snippets.
	light  engine.Adapter
	base   *url.URL
	client *fasthttp.Client
	search string // last path segment of search requests, e.g. "_search"
}

// New validates the options and builds the server.
func New(o Options) (*Server, error) {
	o.Factor = cmp.Or(o.Factor, 3)
	o.TopK = cmp.Or(o.TopK, 50)
	o.Budget = cmp.Or(o.Budget, 300*time.Millisecond)
	o.ClusterTimeout = cmp.Or(o.ClusterTimeout, 50*time.Millisecond)
	o.CacheBytes = cmp.Or(o.CacheBytes, 256<<20)
	o.CacheTTL = cmp.Or(o.CacheTTL, time.Hour)
	o.AnswerCacheBytes = cmp.Or(o.AnswerCacheBytes, 16<<20)
	o.MaxRequestBytes = cmp.Or(o.MaxRequestBytes, 1<<20)
	o.MaxHeaderBytes = cmp.Or(o.MaxHeaderBytes, 16<<10)
	o.MaxConns = cmp.Or(o.MaxConns, 10_000)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, 10*time.Second)
	o.WriteTimeout = cmp.Or(o.WriteTimeout, 30*time.Second)
	o.IdleTimeout = cmp.Or(o.IdleTimeout, 60*time.Second)
	if !o.ModeSet && o.Mode == engine.Remove {
		o.Mode = engine.Group
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	var errs []error
	if len(o.Engines) == 0 {
		errs = append(errs, errors.New("proxy: no engines configured"))
	}
	s := &Server{o: o, log: log, rewrites: newTwoGen[string, rewritten](4096)}
	for i, e := range o.Engines {
		b, err := newBackend(e)
		if err != nil {
			errs = append(errs, fmt.Errorf("proxy: engines[%d] (%s): %w", i, e.Name, err))
			continue
		}
		s.engines = append(s.engines, b)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	switch o.Transparent {
	case "-":
	case "":
		s.transp = s.engines[0]
	default:
		for _, b := range s.engines {
			if b.Name == o.Transparent {
				s.transp = b
			}
		}
		if s.transp == nil {
			return nil, fmt.Errorf("proxy: transparent engine %q is not configured", o.Transparent)
		}
	}
	if o.Fetch.Logger == nil {
		o.Fetch.Logger = log
	}
	var err error
	if s.fetcher, err = fetch.New(o.Fetch); err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	if s.cache, err = newSigCache(o.CacheBytes, o.CacheTTL); err != nil {
		return nil, err
	}
	if o.Cluster == nil {
		// Only lists signed from the cache alone are remembered
		// (hotLists), and the cluster service's verdicts are not.
		s.answers = newAnswerCache(o.AnswerCacheBytes)
	}
	s.m = newMetrics(s)
	life, stop := context.WithCancel(context.Background())
	s.stopLife = stop
	s.ref = &refiner{signer: o.Signer, fetcher: s.fetcher, cache: s.cache, log: log, m: s.m, life: life,
		clusterTimeout: o.ClusterTimeout, verdicts: newVerdictCache(8 << 10), keys: newKeyCache(16 << 10), lists: newListCache(1024), hot: newHotLists(1024)}
	if o.Cluster != nil {
		s.ref.cluster = o.Cluster
		if o.ClusterFeed {
			s.ref.feed = newFeeder(o.Cluster, log, s.m)
		}
	} else if o.ClusterFeed {
		return nil, errors.New("proxy: ClusterFeed needs a Cluster service")
	}
	s.srv = &fasthttp.Server{
		// Answers are compressed for clients that accept it: the backend
		// is asked for identity so its answer can be parsed.
		Handler:                      fasthttp.CompressHandlerLevel(s.handle, fasthttp.CompressBestSpeed),
		Name:                         "winnow",
		Concurrency:                  o.MaxConns,
		ReadBufferSize:               o.MaxHeaderBytes,
		MaxRequestBodySize:           o.MaxRequestBytes,
		ReadTimeout:                  o.ReadTimeout,
		WriteTimeout:                 o.WriteTimeout,
		IdleTimeout:                  o.IdleTimeout,
		DisablePreParseMultipartForm: true,
		NoDefaultServerHeader:        true,
		Logger:                       fasthttpLogger{log},
		ErrorHandler:                 requestError,
	}
	return s, nil
}

func newBackend(e Engine) (*backend, error) {
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
	e.Timeout = cmp.Or(e.Timeout, 2*time.Second)
	search := path.Base(cmp.Or(e.Adapter.Path, defaultSearchPath(a.Name())))
	return &backend{
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

// requestError answers a request fasthttp could not read: 413 for a body
// over the limit, 431 for headers over the limit, 408 for a client too
// slow, 400 otherwise.
func requestError(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		ctx.Error("winnow: request body too large", fasthttp.StatusRequestEntityTooLarge)
	case errors.As(err, &small):
		ctx.Error("winnow: request headers too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.Is(err, fasthttp.ErrTimeout):
		ctx.Error("winnow: request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("winnow: bad request", fasthttp.StatusBadRequest)
	}
}

// fasthttpLogger routes fasthttp's own messages to slog.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Warn("fasthttp", "msg", fmt.Sprintf(format, args...))
}

// Serve accepts connections on ln until [Server.Shutdown]. It marks the
// server ready.
func (s *Server) Serve(ln net.Listener) error {
	s.lnMu.Lock()
	if s.closed {
		s.lnMu.Unlock()
		ln.Close()
		return nil
	}
	s.lns = append(s.lns, ln)
	s.lnMu.Unlock()
	s.ready.Store(true)
	return s.srv.Serve(ln)
}

// Shutdown stops accepting connections, waits for requests in flight and
// the background fetches to finish and for the signatures still queued for
// the cluster service to be sent (or ctx to end), and frees the cache.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ready.Store(false)
	err := s.srv.ShutdownWithContext(ctx)
	// A Serve that had not yet handed its listener to fasthttp when
	// fasthttp shut down would accept on it for ever: closing it ends
	// that Serve (a listener fasthttp closed already just errs).
	s.lnMu.Lock()
	s.closed = true
	for _, ln := range s.lns {
		ln.Close()
	}
	s.lnMu.Unlock()
	s.stopLife()
	done := make(chan struct{})
	go func() { s.ref.wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		err = cmp.Or(err, ctx.Err())
	}
	if s.ref.feed != nil {
		err = cmp.Or(err, s.ref.feed.close(ctx))
	}
	s.fetcher.Close()
	s.cache.close()
	return err
}

// handle routes a request. fasthttp does not recover handler panics: a
// panic is logged and answered with 500 so the process lives on.
func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	start := time.Now()
	route := "proxy"
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("handler_panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			ctx.ResetBody()
			ctx.Error("winnow: internal error", fasthttp.StatusInternalServerError)
		}
		s.m.request(route, ctx.Response.StatusCode(), time.Since(start))
	}()
	p := string(ctx.Path())
	switch {
	case p == "/healthz":
		route = "healthz"
		ctx.SetContentType("text/plain; charset=utf-8")
		ctx.WriteString("ok\n")
	case p == "/readyz":
		route = "readyz"
		ctx.SetContentType("text/plain; charset=utf-8")
		if !s.ready.Load() {
			ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
			ctx.WriteString("not ready\n")
			return
		}
		ctx.WriteString("ready\n")
	case p == "/metrics":
		route = "metrics"
		ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
		s.m.write(ctx)
	case p == "/_winnow/search" || p == "/_winnow/search.json" || (p == "/" && s.wantsPage(ctx)):
		route = "search"
		s.searchPage(ctx)
	case s.transp != nil:
		s.transparent(ctx)
	default:
		route = "notfound"
		ctx.Error("winnow: no transparent backend; the search page is at /_winnow/search", fasthttp.StatusNotFound)
	}
}

// wantsPage reports whether a request for "/" comes from a browser (or has
// no transparent backend to go to) and so gets the search page.
func (s *Server) wantsPage(ctx *fasthttp.RequestCtx) bool {
	return s.transp == nil || (ctx.IsGet() && bytes.Contains(ctx.Request.Header.Peek("Accept"), []byte("text/html")))
}

// params are the per-request settings a client can give as query
// parameters winnow_mode, winnow_threshold, winnow_method, winnow_explain
// (stripped before forwarding) or headers X-Winnow-Mode, ...
type params struct {
	custom   bool // the request overrides the decision
	off      bool
	mode     engine.Mode
	decision similarity.Decision
	explain  bool
}

func (s *Server) params(ctx *fasthttp.RequestCtx) (params, error) {
	p := params{mode: s.o.Mode, decision: s.o.Decision}
	args := ctx.QueryArgs()
	hasArgs := bytes.Contains(ctx.URI().QueryString(), []byte("winnow_"))
	get := func(arg, header string) string {
		if hasArgs {
			if v := args.Peek(arg); v != nil {
				return string(v)
			}
		}
		return string(ctx.Request.Header.Peek(header))
	}
	switch m := get("winnow_mode", "X-Winnow-Mode"); m {
	case "":
	case "remove":
		p.mode = engine.Remove
	case "group":
		p.mode = engine.Group
	case "annotate":
		p.mode = engine.Annotate
	case "off":
		p.off = true
	default:
		return p, fmt.Errorf("winnow_mode %q is not one of remove, group, annotate, off", m)
	}
	method, threshold := get("winnow_method", "X-Winnow-Method"), get("winnow_threshold", "X-Winnow-Threshold")
	if method != "" || threshold != "" {
		d, err := DecisionFor(method, threshold, s.o.Decision)
		if err != nil {
			return p, err
		}
		p.decision, p.custom = d, true
	}
	explain := get("winnow_explain", "X-Winnow-Explain")
	p.explain = explain == "1" || explain == "true"
	if p.explain && p.mode == engine.Remove {
		p.mode = engine.Annotate
	}
	return p, nil
}

// DecisionFor returns the decision named by a method ("default" or a paper
// method) with an optional threshold, for per-request overrides.
func DecisionFor(method, threshold string, def similarity.Decision) (similarity.Decision, error) {
	var t float64
	if threshold != "" {
		v, err := strconv.ParseFloat(threshold, 64)
		if err != nil || v < 0 || v > 64 {
			return def, fmt.Errorf("winnow_threshold %q is not a number in [0, 64]", threshold)
		}
		t = v
	}
	if method == "" || method == "default" {
		d := def
		if t > 0 {
			d.StrongLCS = t
		}
		return d, nil
	}
	m, err := similarity.ParseMethod(method)
	if err != nil {
		return def, fmt.Errorf("winnow_method: %w", err)
	}
	if t == 0 {
		t = m.DefaultThreshold()
	}
	return similarity.SingleMethod(m, t), nil
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

// clientRequest is the client's request as the adapters rewrite it: the
// path with winnow's own query parameters stripped, and the body. Its
// headers stay in ctx: [backend.do] copies them from there.
func clientRequest(ctx *fasthttp.RequestCtx) engine.Request {
	r := engine.Request{Method: string(ctx.Method())}
	uri := ctx.Request.URI()
	r.Path = string(uri.Path())
	if qs := uri.QueryString(); len(qs) > 0 {
		if !bytes.Contains(qs, []byte("winnow_")) {
			r.Path += "?" + string(qs)
		} else {
			var q fasthttp.Args
			for k, v := range ctx.QueryArgs().All() {
				if !bytes.HasPrefix(k, []byte("winnow_")) {
					q.AddBytesKV(k, v)
				}
			}
			if q.Len() > 0 {
				r.Path += "?" + q.String()
			}
		}
	}
	if body := ctx.PostBody(); len(body) > 0 {
		r.Body = append([]byte(nil), body...)
	}
	return r
}

// do sends r to the backend within its timeout and the deadline of ctx.
// The headers are the client's (client not nil) minus hop-by-hop and
// X-Winnow-* ones, else r.Header. The answer stays in fasthttp's pooled
// response, read in place: the caller must release it with
// fasthttp.ReleaseResponse.
func (b *backend) do(ctx context.Context, r engine.Request, client *fasthttp.RequestHeader) (*fasthttp.Response, error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	u := *b.base
	pth, rawQuery, _ := strings.Cut(r.Path, "?")
	u.Path = strings.TrimSuffix(b.base.Path, "/") + pth
	u.RawQuery = rawQuery
	req.SetRequestURI(u.String())
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
	deadline := time.Now().Add(b.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	resp := fasthttp.AcquireResponse()
	if err := b.client.DoDeadline(req, resp, deadline); err != nil {
		fasthttp.ReleaseResponse(resp)
		return nil, err
	}
	return resp, nil
}

// call is [backend.do] for callers that keep the answer: it returns the
// status, content type, a copy of the body and the end-to-end headers.
func (b *backend) call(ctx context.Context, r engine.Request) (status int, contentType string, body []byte, hdr [][2]string, err error) {
	resp, err := b.do(ctx, r, nil)
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
func (b *backend) isSearch(r engine.Request) bool {
	p, _, _ := strings.Cut(r.Path, "?")
	return b.search == "/" || b.search == "." || path.Base(p) == b.search
}

// transparent forwards a request in the backend's own API and refines
// the answer. Whatever goes wrong on winnow's side, the client gets the
// backend's answer as the backend gave it.
func (s *Server) transparent(ctx *fasthttp.RequestCtx) {
	b := s.transp
	reqCtx, cancel := context.WithTimeout(context.Background(), b.Timeout+s.o.Budget)
	defer cancel()
	orig := clientRequest(ctx)
	p, perr := s.params(ctx)
	if perr != nil || p.off || !b.isSearch(orig) {
		if perr != nil {
			s.log.Debug("bad_winnow_params", "err", perr)
		}
		s.forward(ctx, reqCtx, b, orig)
		return
	}
	start := time.Now()
	if pg, ok := b.light.(engine.Pager); ok {
		s.transparentPages(ctx, reqCtx, b, pg, orig, p, start)
		return
	}
	breq, win, err := s.rewrite(b, orig)
	if err != nil {
		s.fallback(ctx, reqCtx, b, orig, start, err)
		return
	}
	resp, err := b.do(reqCtx, breq, &ctx.Request.Header)
	if err != nil {
		s.fallback(ctx, reqCtx, b, orig, start, err)
		return
	}
	defer fasthttp.ReleaseResponse(resp)
	if resp.StatusCode()/100 != 2 {
		// A backend error is passed on as the backend gave it.
		s.m.engine(b.Name, "http_error", time.Since(start))
		relay(ctx, resp)
		return
	}
	if len(resp.Header.ContentEncoding()) != 0 {
		s.fallback(ctx, reqCtx, b, orig, start, errors.New("answer compressed although identity was asked for"))
		return
	}
	var key uint64
	if s.answers != nil && !p.custom {
		key = answerKey(orig.Method, orig.Path, orig.Body, p.mode, win)
		if s.answerFromCache(ctx, key, orig, p, win, resp, b, start) {
			return
		}
	}
	// The body is parsed in place: it lives in resp until the answer is
	// rendered.
	parsed, err := b.light.Parse(resp.Body(), string(resp.Header.ContentType()))
	if err != nil {
		// An answer winnow cannot parse: ask again with the client's
		// request as it was.
		s.fallback(ctx, reqCtx, b, orig, start, err)
		return
	}
	ref, ok := s.refineInto(ctx, reqCtx, b, parsed, p, win, start)
	if !ok {
		s.forward(ctx, reqCtx, b, orig)
		return
	}
	if s.answers != nil && !p.custom && ref.hot != nil {
		s.rememberAnswer(key, orig, p, win, parsed, ref, ctx.Response.Body())
	}
	copyAnswerHeader(&ctx.Response.Header, &resp.Header)
	ctx.SetStatusCode(resp.StatusCode())
}

// answerFromCache answers from the answer cache when the backend's answer
// resp is one whose refinement it holds, and reports whether it did.
func (s *Server) answerFromCache(ctx *fasthttp.RequestCtx, key uint64, orig engine.Request, p params, win engine.Window, resp *fasthttp.Response, b *backend, start time.Time) bool {
	a := s.answers.get(key, orig.Method, orig.Path, orig.Body, p.mode, win)
	if a == nil {
		s.answers.misses.Add(1)
		return false
	}
	buf := ctx.Response.SwapBody(nil)
	out, raw, ok := a.render(buf[:0], resp.Body(), s.cache, time.Now())
	switch {
	case !ok:
		ctx.Response.SwapBody(buf)
		s.answers.misses.Add(1)
		return false
	case raw:
		// The remembered rendering itself, written as it is.
		ctx.Response.SwapBody(buf)
		ctx.Response.SetBodyRaw(out)
	default:
		ctx.Response.SwapBody(out)
	}
	s.answers.hits.Add(1)
	s.m.engine(b.Name, "ok", time.Since(start))
	s.m.refined(&refined{cached: a.cached, unrefined: a.unrefined})
	s.m.clustered(a.clusters, a.dups, p.mode.String())
	copyAnswerHeader(&ctx.Response.Header, &resp.Header)
	ctx.SetStatusCode(resp.StatusCode())
	return true
}

// rememberAnswer keeps a refined answer in the answer cache; out is its
// rendering. An answer is kept the second time its key is met, so a
// stream of queries that never repeat costs no copies.
func (s *Server) rememberAnswer(key uint64, orig engine.Request, p params, win engine.Window, parsed *engine.Parsed, ref *refined, out []byte) {
	if !s.answers.secondSighting(key) {
		return
	}
	body := parsed.Body()
	ext := parsed.Extent()
	if ext > len(out) || !bytes.Equal(out[:ext], body[:ext]) {
		// Render changed the head it promised to copy: never reuse.
		s.log.Warn("answer_cache_extent", "extent", ext)
		return
	}
	clusters, dups := clusterCounts(ref)
	s.answers.put(key, &answer{
		method: orig.Method, path: orig.Path, reqBody: bytes.Clone(orig.Body), mode: p.mode, win: win,
		body: bytes.Clone(body), extent: ext, out: bytes.Clone(out), hot: ref.hot,
		cached: ref.cached, unrefined: ref.unrefined, clusters: clusters, dups: dups,
	})
}

// rewrite is the transparent backend's Rewrite with the server's
// factor, remembered for requests without a body: a popular query's URL
// is rewritten once, not parsed and encoded again on every request.
func (s *Server) rewrite(b *backend, orig engine.Request) (engine.Request, engine.Window, error) {
	if len(orig.Body) > 0 {
		return b.light.Rewrite(orig, s.o.Factor)
	}
	if r, ok := s.rewrites.get(orig.Path); ok {
		orig.Path = r.path
		return orig, r.win, nil
	}
	breq, win, err := b.light.Rewrite(orig, s.o.Factor)
	if err == nil && len(breq.Body) == 0 {
		s.rewrites.put(orig.Path, rewritten{breq.Path, win})
	}
	return breq, win, err
}

// rewritten is a remembered Rewrite of a request without a body.
type rewritten struct {
	path string
	win  engine.Window
}

// fallback answers with the client's request as it was, when the
// backend's answer to the rewritten one could not be had or parsed.
func (s *Server) fallback(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *backend, orig engine.Request, start time.Time, err error) {
	s.m.engine(b.Name, "fallback", time.Since(start))
	s.log.Debug("transparent_fallback", "engine", b.Name, "err", err)
	s.forward(ctx, reqCtx, b, orig)
}

// transparentPages is the transparent path of an adapter that asks for
// several backend pages (SearXNG).
func (s *Server) transparentPages(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *backend, pg engine.Pager, orig engine.Request, p params, start time.Time) {
	reqs, win, err := pg.Pages(orig, s.o.Factor)
	var (
		parsed *engine.Parsed
		status int
		ct     string
		bodies [][]byte
		hdr    [][2]string
	)
	if err == nil {
		status, ct, bodies, hdr, err = s.callPages(reqCtx, b, reqs)
		if err == nil && status/100 != 2 {
			s.m.engine(b.Name, "http_error", time.Since(start))
			s.writeAnswer(ctx, status, ct, bodies[0], hdr)
			return
		}
		if err == nil {
			parsed, err = pg.ParsePages(bodies, ct)
		}
	}
	if err != nil {
		s.fallback(ctx, reqCtx, b, orig, start, err)
		return
	}
	if _, ok := s.refineInto(ctx, reqCtx, b, parsed, p, win, start); !ok {
		s.forward(ctx, reqCtx, b, orig)
		return
	}
	for _, kv := range hdr {
		ctx.Response.Header.Set(kv[0], kv[1])
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType(ct)
}

// refineInto refines a parsed answer and renders it into the client's
// response body, reusing the response's own pooled buffer. It reports
// false, leaving the response as it was, when rendering fails.
func (s *Server) refineInto(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *backend, parsed *engine.Parsed, p params, win engine.Window, start time.Time) (*refined, bool) {
	s.m.engine(b.Name, "ok", time.Since(start))
	ref := s.ref.refine(reqCtx, parsed.Results, refineOptions{topK: s.o.TopK, budget: s.o.Budget, decision: p.decision, defaultDecision: !p.custom})
	clusters, dups := clusterCounts(ref)
	s.m.clustered(clusters, dups, p.mode.String())
	buf := ctx.Response.SwapBody(nil)
	out, err := b.light.Render(buf[:0], parsed, ref.marks, p.mode, win)
	if err != nil {
		ctx.Response.SwapBody(buf)
		s.log.Warn("render_failed", "engine", b.Name, "err", err)
		return ref, false
	}
	ctx.Response.SwapBody(out)
	return ref, true
}

// clusterCounts returns the clusters of two or more results in ref and
// the results grouped under another.
func clusterCounts(ref *refined) (clusters, dups int) {
	for _, c := range ref.clusters {
		if len(c.Members) > 1 {
			clusters++
			dups += len(c.Members) - 1
		}
	}
	return clusters, dups + len(ref.serviceDups)
}

// callPages fetches several pages of a backend in parallel (SearXNG).
// The first page decides the status; a later page that fails ends the
// list there.
func (s *Server) callPages(ctx context.Context, b *backend, reqs []engine.Request) (int, string, [][]byte, [][2]string, error) {
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
			a.status, a.ct, a.body, a.hdr, a.err = b.call(ctx, r)
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

// forward sends the client's request unchanged and relays the answer. A
// backend that cannot be reached gets 502, one that does not answer in
// time 504: the only errors winnow itself writes.
func (s *Server) forward(ctx *fasthttp.RequestCtx, reqCtx context.Context, b *backend, r engine.Request) {
	start := time.Now()
	resp, err := b.do(reqCtx, r, &ctx.Request.Header)
	if err != nil {
		s.m.engine(b.Name, "down", time.Since(start))
		s.log.Warn("backend_unreachable", "engine", b.Name, "err", err)
		code := fasthttp.StatusBadGateway
		if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			code = fasthttp.StatusGatewayTimeout
		}
		ctx.Error(fmt.Sprintf("winnow: backend %s: %v", b.Name, err), code)
		return
	}
	defer fasthttp.ReleaseResponse(resp)
	s.m.engine(b.Name, "passthrough", time.Since(start))
	relay(ctx, resp)
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

func (s *Server) writeAnswer(ctx *fasthttp.RequestCtx, status int, ct string, body []byte, hdr [][2]string) {
	for _, kv := range hdr {
		ctx.Response.Header.Set(kv[0], kv[1])
	}
	ctx.SetStatusCode(status)
	if ct != "" {
		ctx.SetContentType(ct)
	}
	ctx.SetBody(body)
}

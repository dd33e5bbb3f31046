package fetch

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/winnow-search/winnow/canon"
)

// Defaults used when an [Options] field is zero.
const (
	DefaultTimeout         = 2 * time.Second
	DefaultMaxBodyBytes    = 4 << 20
	DefaultMaxDecodedBytes = 8 << 20
	DefaultMaxRedirects    = 5
	DefaultMaxConns        = 64
	DefaultMaxConnsPerHost = 4
	DefaultUserAgent       = "winnow/0.1 (+https://github.com/winnow-search/winnow)"
)

// defaultContentTypes are the media types fetched when
// Options.AllowedContentTypes is empty.
func defaultContentTypes() []string {
	return []string{"text/html", "application/xhtml+xml", "text/plain"}
}

// Sentinel errors. Errors returned by [Client.Get] wrap them; branch with
// [errors.Is].
var (
	// ErrBlocked means the SSRF guard refused an address (loopback,
	// private, link-local, metadata, ...) or the URL scheme.
	ErrBlocked = errors.New("fetch: refused by SSRF guard")
	// ErrBadPort wraps ErrBlocked: the URL's port is one of the Fetch
	// standard's bad ports, refused on every network (Options.Allow does
	// not open it), so it does not mean the address is internal.
	ErrBadPort = fmt.Errorf("%w: a port browsers refuse", ErrBlocked)
	// ErrTooLarge means the body exceeded Options.MaxBodyBytes on the wire
	// or Options.MaxDecodedBytes after decompression.
	ErrTooLarge = errors.New("fetch: body too large")
	// ErrContentType means the media type or content encoding is not
	// accepted.
	ErrContentType = errors.New("fetch: content type not accepted")
	// ErrTooManyRedirects means more than Options.MaxRedirects redirects.
	ErrTooManyRedirects = errors.New("fetch: too many redirects")
	// ErrStatus means the final response had a status other than 2xx or
	// 304 (to a conditional request), or a redirect without a usable
	// Location.
	ErrStatus = errors.New("fetch: unexpected HTTP status")
	// ErrTimeout is returned, unwrapped, when the page deadline (the
	// shorter of Options.Timeout and the context deadline) passes. It
	// reports Timeout() true and matches [context.DeadlineExceeded].
	ErrTimeout error = &timeoutError{}
)

type timeoutError struct{}

func (*timeoutError) Error() string        { return "fetch: page deadline exceeded" }
func (*timeoutError) Timeout() bool        { return true }
func (*timeoutError) Temporary() bool      { return true }
func (*timeoutError) Is(target error) bool { return target == context.DeadlineExceeded }

// Resolver resolves host names; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a [Client]. The zero value is usable: every zero field
// takes the default named in its comment.
type Options struct {
	// Timeout bounds one page, all redirects, waits for a connection slot
	// and the body included. Default 2s. The context deadline given to
	// Get bounds it further.
	Timeout time.Duration
	// MaxBodyBytes caps the body as sent on the wire. Default 4 MiB.
	MaxBodyBytes int64
	// MaxDecodedBytes caps the body after gzip, deflate or br decoding, so
	// a decompression bomb is cut off. Default 8 MiB.
	MaxDecodedBytes int64
	// Truncate returns a page over either cap cut at the cap with
	// Page.Truncated set. By default (false) such a page fails with
	// [ErrTooLarge].
	Truncate bool
	// MaxRedirects is the number of redirects followed. Default 5;
	// negative means none.
	MaxRedirects int
	// MaxConns bounds fetches in flight over all hosts. Default 64.
	MaxConns int
	// MaxConnsPerHost bounds fetches in flight to one host name.
	// Default 4.
	MaxConnsPerHost int
	// UserAgent is sent with every request. Default [DefaultUserAgent].
	UserAgent string
	// AllowedContentTypes are the media types accepted (type/subtype,
	// compared case-insensitively; parameters are ignored). Default text/html,
	// application/xhtml+xml and text/plain.
	AllowedContentTypes []string
	// Allow lists networks that are dialed although the SSRF guard would
	// refuse them (tests and the demo use 127.0.0.0/8).
	Allow []netip.Prefix
	// AllowPrivate turns the SSRF guard off entirely. Unsafe: any URL in
	// a search result can then reach internal services and cloud
	// metadata endpoints. Schemes other than http and https, and the bad
	// ports of the Fetch standard, stay refused.
	AllowPrivate bool
	// Resolver resolves host names. Default net.DefaultResolver.
	Resolver Resolver
	// Logger receives debug records of fetch outcomes. Default
	// slog.Default().
	Logger *slog.Logger
}

// Hop is one request of a fetch: the URL asked for, the status answered
// and, for a redirect, the absolute Location followed.
type Hop struct {
	URL      string
	Status   int
	Location string
}

// Page is a fetched page. It shares nothing with the Client or with other
// callers: the caller owns Body and Chain.
type Page struct {
	// URL is the final URL after redirects.
	URL string
	// Chain holds every hop in order, the final one last; more than one hop
	// means redirects (redirect duplicates).
	Chain []Hop
	// Status is the final HTTP status.
	Status int
	// ContentType is the Content-Type header as sent, charset included.
	ContentType string
	// Body is the decoded body (gzip, deflate and br undone); empty when
	// NotModified.
	Body []byte
	// ETag and LastModified are the validators to revalidate with later.
	ETag, LastModified string
	// Link holds the Link header lines, joined by ", " (a canonical URL
	// declared there: canon.LinkCanonical).
	Link string
	// NotModified reports a 304 answer to a conditional request: Body is
	// empty and the caller keeps its copy.
	NotModified bool
	// Truncated reports that Body was cut at a cap (only with
	// Options.Truncate).
	Truncated bool
}

// Validators make a request conditional (If-None-Match, If-Modified-Since);
// the zero value makes it unconditional.
type Validators struct{ ETag, LastModified string }

// Stats is a snapshot of a Client's counters. Outcomes are counted once per
// fetch, however many callers shared it.
type Stats struct {
	OK          uint64 // pages returned with a 2xx status
	NotModified uint64 // 304 answers to revalidation
	Timeout     uint64 // page deadline passed
	TooLarge    uint64 // over a size cap (ErrTooLarge), or truncated
	Blocked     uint64 // refused by the SSRF guard (ErrBlocked)
	BadType     uint64 // media type or encoding refused (ErrContentType)
	HTTPError   uint64 // unexpected status (ErrStatus) or too many redirects
	DialError   uint64 // network errors: resolve, connect, reset, bad response
	Canceled    uint64 // every caller gave up before the fetch ended
	Other       uint64 // anything else, e.g. a corrupt compressed body
	Redirects   uint64 // redirects followed
	Shared      uint64 // Get calls that joined a fetch already in flight
	InFlight    int64  // fetches running now
}

type counters struct {
	ok, notModified, timeout, tooLarge, blocked, badType, httpError,
	dialError, canceled, other, redirects, shared atomic.Uint64
	inFlight atomic.Int64
}

// Client fetches result pages. It is safe for concurrent use; create one
// with [New] and share it.
type Client struct {
	opt      Options
	guard    guard
	resolver Resolver
	log      *slog.Logger
	hc       *fasthttp.Client
	accept   string
	types    []string
	conns    chan struct{} // global fetch slots
	stats    counters

	mu      sync.Mutex // guards flights and hosts
	flights map[string]*flight
	hosts   map[string]*hostSlots
}

// hostSlots is the per-host semaphore; refs counts holders and waiters so
// the entry is dropped when unused.
type hostSlots struct {
	ch   chan struct{}
	refs int
}

// flight is one fetch shared by every concurrent Get of the same key.
type flight struct {
	done    chan struct{}
	page    *Page
	err     error
	waiters int // guarded by Client.mu
	cancel  context.CancelFunc
	taken   atomic.Bool // the first caller takes page, later ones a copy
}

// New returns a Client for o, with defaults filled in. It reports invalid
// options, each naming its field.
func New(o Options) (*Client, error) {
	o.Timeout = cmp.Or(o.Timeout, DefaultTimeout)
	o.MaxBodyBytes = cmp.Or(o.MaxBodyBytes, DefaultMaxBodyBytes)
	o.MaxDecodedBytes = cmp.Or(o.MaxDecodedBytes, DefaultMaxDecodedBytes)
	o.MaxRedirects = cmp.Or(o.MaxRedirects, DefaultMaxRedirects)
	o.MaxConns = cmp.Or(o.MaxConns, DefaultMaxConns)
	o.MaxConnsPerHost = cmp.Or(o.MaxConnsPerHost, DefaultMaxConnsPerHost)
	o.UserAgent = cmp.Or(o.UserAgent, DefaultUserAgent)
	if len(o.AllowedContentTypes) == 0 {
		o.AllowedContentTypes = defaultContentTypes()
	}
	var errs []error
	if o.Timeout < 0 {
		errs = append(errs, fmt.Errorf("fetch: Timeout %v is negative", o.Timeout))
	}
	if o.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("fetch: MaxBodyBytes %d is negative", o.MaxBodyBytes))
	}
	if o.MaxDecodedBytes < 0 {
		errs = append(errs, fmt.Errorf("fetch: MaxDecodedBytes %d is negative", o.MaxDecodedBytes))
	}
	if o.MaxConns < 0 {
		errs = append(errs, fmt.Errorf("fetch: MaxConns %d is negative", o.MaxConns))
	}
	if o.MaxConnsPerHost < 0 {
		errs = append(errs, fmt.Errorf("fetch: MaxConnsPerHost %d is negative", o.MaxConnsPerHost))
	}
	types := make([]string, 0, len(o.AllowedContentTypes))
	for _, t := range o.AllowedContentTypes {
		mt := canon.MediaType(t)
		if mt == "" {
			errs = append(errs, fmt.Errorf("fetch: AllowedContentTypes: %q is no type/subtype", t))
			continue
		}
		types = append(types, mt)
	}
	for _, p := range o.Allow {
		if !p.IsValid() {
			errs = append(errs, fmt.Errorf("fetch: Allow: invalid prefix %v", p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if o.MaxRedirects < 0 {
		o.MaxRedirects = 0
	}
	c := &Client{
		opt:      o,
		guard:    guard{allow: slices.Clone(o.Allow), allowPrivate: o.AllowPrivate},
		resolver: o.Resolver,
		log:      o.Logger,
		accept:   strings.Join(types, ", "),
		types:    types,
		conns:    make(chan struct{}, o.MaxConns),
		flights:  make(map[string]*flight),
		hosts:    make(map[string]*hostSlots),
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.hc = &fasthttp.Client{
		DialTimeout:               c.dial,
		NoDefaultUserAgentHeader:  true,
		TLSConfig:                 &tls.Config{MinVersion: tls.VersionTLS12},
		MaxConnsPerHost:           o.MaxConnsPerHost,
		MaxConnWaitTimeout:        o.Timeout,
		MaxIdemponentCallAttempts: 2,
		RetryIfErr:                retryIf,
		ReadBufferSize:            16 << 10,
		ReadTimeout:               o.Timeout, // backstop; DoDeadline sets the page deadline
		WriteTimeout:              o.Timeout,
		MaxResponseBodySize:       int(o.MaxBodyBytes),
		StreamResponseBody:        true,
		DisablePathNormalizing:    true,
	}
	return c, nil
}

// retryIf retries a request once on a stale keep-alive connection, but
// never after the guard refused or the deadline passed.
func retryIf(_ *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	if errors.Is(err, ErrBlocked) || isTimeout(err) || attempts > 1 {
		return false, false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return false, false // dial errors: the same address fails again
	}
	return false, true
}

// Close closes idle connections. A Client stays usable after Close.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Stats returns a snapshot of the counters.
func (c *Client) Stats() Stats {
	s := &c.stats
	return Stats{
		OK: s.ok.Load(), NotModified: s.notModified.Load(), Timeout: s.timeout.Load(),
		TooLarge: s.tooLarge.Load(), Blocked: s.blocked.Load(), BadType: s.badType.Load(),
		HTTPError: s.httpError.Load(), DialError: s.dialError.Load(), Canceled: s.canceled.Load(),
		Other: s.other.Load(), Redirects: s.redirects.Load(), Shared: s.shared.Load(),
		InFlight: s.inFlight.Load(),
	}
}

// Get fetches rawURL (white space and controls trimmed as the URL
// Standard does, see canon.TrimURL), following redirects and checking
// every hop with the SSRF guard, and returns the decoded page. Non-empty
// validators make the request conditional; a 304 answer returns a page
// with NotModified set.
//
// The page deadline is the shorter of Options.Timeout and ctx's deadline.
// Concurrent Gets of one canonical URL (see canon.URL) with equal
// validators share one fetch, run by a goroutine under the first caller's
// deadline; each caller returns as soon as its own ctx is done. The fetch
// goroutine exits when the fetch ends: at the latest at its deadline, and
// sooner when every caller has gone (waits for a slot and body reads are
// interrupted then; a request still waiting for response headers runs to
// its deadline).
//
// Errors wrap [ErrBlocked], [ErrTooLarge], [ErrContentType],
// [ErrTooManyRedirects] or [ErrStatus]; a deadline returns [ErrTimeout];
// a cancelled ctx returns an error wrapping ctx's error.
func (c *Client) Get(ctx context.Context, rawURL string, v Validators) (*Page, error) {
	u, err := url.Parse(canon.TrimURL(rawURL))
	if err != nil {
		return nil, fmt.Errorf("fetch: bad URL: %v", err)
	}
	t, err := c.parseTarget(u)
	if err != nil {
		c.count(err)
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, ctxError(ctx)
	}
	key := t.u.String()
	if k, err := canon.URL(key); err == nil {
		key = k
	}
	key += "\x00" + v.ETag + "\x00" + v.LastModified

	deadline := time.Now().Add(c.opt.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}

	c.mu.Lock()
	f, ok := c.flights[key]
	if ok {
		f.waiters++
		c.mu.Unlock()
		c.stats.shared.Add(1)
	} else {
		fctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		f = &flight{done: make(chan struct{}), waiters: 1, cancel: cancel}
		c.flights[key] = f
		c.mu.Unlock()
		go c.run(fctx, key, f, t, v)
	}

	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		if f.taken.CompareAndSwap(false, true) {
			return f.page, nil
		}
		return f.page.clone(), nil
	case <-ctx.Done():
		c.mu.Lock()
		f.waiters--
		if f.waiters == 0 {
			if c.flights[key] == f {
				delete(c.flights, key)
			}
			f.cancel()
		}
		c.mu.Unlock()
		return nil, ctxError(ctx)
	}
}

// run performs one shared fetch and publishes its result. It exits when the
// fetch ends (see Get) and recovers from panics so one bad page cannot
// crash the process.
func (c *Client) run(ctx context.Context, key string, f *flight, t target, v Validators) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("fetch_panic", "panic", r)
			f.page, f.err = nil, fmt.Errorf("fetch: internal error: %v", r)
		}
		c.mu.Lock()
		if c.flights[key] == f {
			delete(c.flights, key)
		}
		c.mu.Unlock()
		f.cancel()
		close(f.done)
	}()
	start := time.Now()
	f.page, f.err = c.fetch(ctx, t, v)
	switch {
	case f.err != nil && ctx.Err() == context.Canceled:
		c.stats.canceled.Add(1)
	case f.err == nil && f.page.NotModified:
		c.stats.notModified.Add(1)
	default:
		c.count(f.err)
	}
	if c.log.Enabled(ctx, slog.LevelDebug) {
		c.log.Debug("fetch_done", "url", t.u.Redacted(), "duration", time.Since(start), "err", f.err)
	}
}

// count records the outcome of one fetch.
func (c *Client) count(err error) {
	s := &c.stats
	switch {
	case err == nil:
		s.ok.Add(1)
	case errors.Is(err, ErrTimeout):
		s.timeout.Add(1)
	case errors.Is(err, ErrTooLarge):
		s.tooLarge.Add(1)
	case errors.Is(err, ErrBlocked):
		s.blocked.Add(1)
	case errors.Is(err, ErrContentType):
		s.badType.Add(1)
	case errors.Is(err, ErrStatus), errors.Is(err, ErrTooManyRedirects):
		s.httpError.Add(1)
	case errors.Is(err, errNet):
		s.dialError.Add(1)
	default:
		s.other.Add(1)
	}
}

// errNet marks network errors for counting; it is not exposed.
var errNet = errors.New("network error")

type netError struct{ err error }

func (e *netError) Error() string {
	msg := e.err.Error()
	if strings.HasPrefix(msg, "fetch: ") { // the dialer's own errors
		return msg
	}
	return "fetch: " + msg
}

func (e *netError) Unwrap() error        { return e.err }
func (e *netError) Is(target error) bool { return target == errNet }

func ctxError(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ErrTimeout
	}
	return fmt.Errorf("fetch: %w", context.Cause(ctx))
}

func isTimeout(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, fasthttp.ErrDialTimeout) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

// acquire takes a slot of ch, or fails when ctx is done first.
func acquire(ctx context.Context, ch chan struct{}) error {
	select {
	case ch <- struct{}{}:
		return nil
	default:
	}
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctxError(ctx)
	}
}

// acquireHost takes a slot of host's semaphore; release with releaseHost.
func (c *Client) acquireHost(ctx context.Context, host string) error {
	c.mu.Lock()
	hs := c.hosts[host]
	if hs == nil {
		hs = &hostSlots{ch: make(chan struct{}, c.opt.MaxConnsPerHost)}
		c.hosts[host] = hs
	}
	hs.refs++
	c.mu.Unlock()
	if err := acquire(ctx, hs.ch); err != nil {
		c.dropHost(host, hs)
		return err
	}
	return nil
}

func (c *Client) releaseHost(host string) {
	c.mu.Lock()
	hs := c.hosts[host]
	c.mu.Unlock()
	<-hs.ch
	c.dropHost(host, hs)
}

func (c *Client) dropHost(host string, hs *hostSlots) {
	c.mu.Lock()
	hs.refs--
	if hs.refs == 0 {
		delete(c.hosts, host)
	}
	c.mu.Unlock()
}

// fetch runs the redirect loop under ctx, whose deadline is the page's.
func (c *Client) fetch(ctx context.Context, t target, v Validators) (*Page, error) {
	if err := acquire(ctx, c.conns); err != nil {
		return nil, err
	}
	c.stats.inFlight.Add(1)
	defer func() {
		c.stats.inFlight.Add(-1)
		<-c.conns
	}()
	deadline, _ := ctx.Deadline()
	var chain []Hop
	var jar cookieJar
	for hop := 0; ; hop++ {
		p, loc, err := c.hop(ctx, t, v, deadline, &jar)
		if err != nil {
			return nil, err
		}
		chain = append(chain, Hop{URL: p.URL, Status: p.Status})
		if loc == nil {
			p.Chain = chain
			return p, nil
		}
		if hop >= c.opt.MaxRedirects {
			return nil, fmt.Errorf("%w: more than %d", ErrTooManyRedirects, c.opt.MaxRedirects)
		}
		next := t.u.ResolveReference(loc)
		chain[len(chain)-1].Location = next.String()
		if t, err = c.parseTarget(next); err != nil {
			return nil, err
		}
		c.stats.redirects.Add(1)
	}
}

// hop performs one request, with the cookies jar holds for its host. It
// returns either the final page, or a redirect target (its cookies kept
// in jar), or an error.
func (c *Client) hop(ctx context.Context, t target, v Validators, deadline time.Time, jar *cookieJar) (*Page, *url.URL, error) {
	if err := c.acquireHost(ctx, t.host); err != nil {
		return nil, nil, err
	}
	defer c.releaseHost(t.host)

	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	defer resp.CloseBodyStream() //nolint:errcheck // runs before ReleaseResponse

	urlStr := t.u.String()
	req.SetRequestURI(urlStr)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.Header.SetUserAgent(c.opt.UserAgent)
	req.Header.Set(fasthttp.HeaderAccept, c.accept)
	req.Header.Set(fasthttp.HeaderAcceptEncoding, "gzip, deflate, br")
	if v.ETag != "" {
		req.Header.Set(fasthttp.HeaderIfNoneMatch, v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set(fasthttp.HeaderIfModifiedSince, v.LastModified)
	}
	jar.send(req, t.host)

	if err := c.hc.DoDeadline(req, resp, deadline); err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, nil, ctxError(ctx)
		case errors.Is(err, ErrBlocked):
			return nil, nil, err
		case isTimeout(err):
			return nil, nil, ErrTimeout
		}
		return nil, nil, &netError{err}
	}

	resp.Header.SetNoDefaultContentType(true) // tell a missing Content-Type apart
	p := &Page{URL: urlStr, Status: resp.StatusCode()}
	switch p.Status {
	case fasthttp.StatusMovedPermanently, fasthttp.StatusFound, fasthttp.StatusSeeOther,
		fasthttp.StatusTemporaryRedirect, fasthttp.StatusPermanentRedirect:
		loc := resp.Header.Peek(fasthttp.HeaderLocation)
		if len(loc) == 0 {
			return nil, nil, fmt.Errorf("%w: %d without Location", ErrStatus, p.Status)
		}
		lu, err := url.Parse(string(loc))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %d with bad Location: %v", ErrStatus, p.Status, err)
		}
		jar.keep(resp, t.host)
		return p, lu, nil
	case fasthttp.StatusNotModified:
		if v == (Validators{}) {
			// Not an answer to this request (RFC 9110 §15.4.5): its empty
			// body is not the page.
			return nil, nil, fmt.Errorf("%w: 304 to an unconditional request", ErrStatus)
		}
		p.NotModified = true
	}
	p.ETag = string(resp.Header.Peek(fasthttp.HeaderETag))
	p.LastModified = string(resp.Header.Peek(fasthttp.HeaderLastModified))
	p.ContentType = string(resp.Header.Peek(fasthttp.HeaderContentType))
	if links := resp.Header.PeekAll(fasthttp.HeaderLink); len(links) > 0 {
		p.Link = string(bytes.Join(links, []byte(", ")))
	}
	if p.NotModified {
		return p, nil, nil
	}
	if p.Status < 200 || p.Status > 299 {
		return nil, nil, fmt.Errorf("%w: %d", ErrStatus, p.Status)
	}
	if err := c.checkType(p.ContentType); err != nil {
		return nil, nil, err
	}
	enc := strings.ToLower(strings.TrimSpace(string(resp.Header.Peek(fasthttp.HeaderContentEncoding))))
	body, truncated, err := c.readBody(ctx, resp, enc)
	if err != nil {
		return nil, nil, err
	}
	p.Body, p.Truncated = body, truncated
	if truncated {
		c.stats.tooLarge.Add(1)
	}
	return p, nil, nil
}

// cookieJar holds the cookies that the redirects of one fetch set, by
// host. Sites behind a cookie check (load balancers, consent and bot
// walls) answer a request without their cookie with a redirect to the
// page itself that sets it; a browser follows with the cookie and shows
// the page, a client without cookies loops until ErrTooManyRedirects. The
// jar lives for one fetch and sends a cookie only to the host that set
// it; Domain, Path and expiry dates are not read (a removal, by an empty
// value or a past date, is).
type cookieJar map[string]map[string]string

// keep records the cookies resp sets for host.
func (j *cookieJar) keep(resp *fasthttp.Response, host string) {
	ck := fasthttp.AcquireCookie()
	defer fasthttp.ReleaseCookie(ck)
	for _, value := range resp.Header.Cookies() { // value: the whole Set-Cookie
		ck.Reset()
		if ck.ParseBytes(value) != nil || len(ck.Key()) == 0 {
			continue
		}
		if *j == nil {
			*j = cookieJar{}
		}
		m := (*j)[host]
		if m == nil {
			m = map[string]string{}
			(*j)[host] = m
		}
		exp := ck.Expire()
		if len(ck.Value()) == 0 || ck.MaxAge() < 0 || exp != fasthttp.CookieExpireUnlimited && exp.Before(time.Now()) {
			delete(m, string(ck.Key()))
			continue
		}
		m[string(ck.Key())] = string(ck.Value())
	}
}

// send adds the cookies held for host to req.
func (j *cookieJar) send(req *fasthttp.Request, host string) {
	for k, v := range (*j)[host] {
		req.Header.SetCookie(k, v)
	}
}

// checkType accepts the media types of Options.AllowedContentTypes, read
// as browsers read them ([canon.MediaType]). A Content-Type without a
// type/subtype is refused, as a missing one is: a browser would sniff
// the body, and fetch does not.
func (c *Client) checkType(ct string) error {
	if ct == "" {
		return fmt.Errorf("%w: no Content-Type", ErrContentType)
	}
	mt := canon.MediaType(ct)
	if mt == "" {
		return fmt.Errorf("%w: %q has no type/subtype", ErrContentType, ct)
	}
	if slices.Contains(c.types, mt) {
		return nil
	}
	return fmt.Errorf("%w: %q", ErrContentType, mt)
}

// clone returns a deep copy of p for a caller that shared a fetch.
func (p *Page) clone() *Page {
	q := *p
	q.Chain = slices.Clone(p.Chain)
	q.Body = bytes.Clone(p.Body)
	return &q
}

package indextag

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Retry defaults of [Options].
const (
	DefaultMaxBackoff = 10 * time.Second
	DefaultRetryFor   = 10 * time.Minute
	firstBackoff      = 100 * time.Millisecond
	// firstContactFor bounds the retries of a connection failure before
	// the engine has answered anything: a URL that was never reachable
	// is most likely wrong, and its operator should hear so in seconds,
	// not after RetryFor. Once the engine has answered, a failure is an
	// engine restarting mid-run and is retried for RetryFor.
	firstContactFor = 20 * time.Second
)

// ErrStatus is wrapped by the error of an engine answer with an
// unexpected status.
var ErrStatus = errors.New("indextag: engine status")

// statusError is an engine answer with an unexpected status.
type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("indextag: %s %s: %v %d: %s", e.method, e.path, ErrStatus, e.status, e.body)
}

func (e *statusError) Unwrap() error { return ErrStatus }

// statusOf returns the HTTP status of err, 0 if it is not an answer.
func statusOf(err error) int {
	var se *statusError
	if errors.As(err, &se) {
		return se.status
	}
	return 0
}

// retryable reports whether an HTTP status is the engine's back-pressure
// or a transient failure that a retry may get past.
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable ||
		status == http.StatusBadGateway || status == http.StatusGatewayTimeout
}

// conn is an engine's HTTP endpoint with back-pressure handling. It is
// safe for concurrent use.
type conn struct {
	base     *url.URL // scheme, host and any path prefix, no trailing slash
	hc       *http.Client
	maxWait  time.Duration
	retryFor time.Duration
	// firstContact is firstContactFor (shorter in tests); answered
	// reports that the engine has answered a request, whatever its status.
	firstContact time.Duration
	answered     atomic.Bool
	retries      atomic.Int64 // requests retried after back-pressure or a transient failure
	backoffs     sync.Map     // status or error kind -> *atomic.Int64, for the report
	// onHeader, if not nil, sees each answer's header; set only by
	// doHeader, before the connection is shared.
	onHeader func(http.Header)
	// log tells of retries, at most once every retryLogEvery (the last
	// line's time in loggedAt, Unix ns; the retries since in
	// unlogged): a run that retries for minutes is not silent.
	log      *slog.Logger
	loggedAt atomic.Int64
	unlogged atomic.Int64
}

// retryLogEvery is the least time between two log lines of retries.
const retryLogEvery = 5 * time.Second

func newConn(base *url.URL, o Options) *conn {
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	b := *base
	b.Path = strings.TrimSuffix(b.Path, "/")
	b.RawQuery, b.Fragment = "", ""
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	return &conn{base: &b, hc: hc, maxWait: max(o.MaxBackoff, firstBackoff), retryFor: o.RetryFor, firstContact: firstContactFor, log: log}
}

// logRetry logs a retry of method path after err (for reason), unless a
// line was written less than retryLogEvery ago; the line counts the
// retries since the last and says how long the request is retried.
func (c *conn) logRetry(method, path, reason string, err error, retryFor time.Duration) {
	n := c.unlogged.Add(1)
	now := time.Now().UnixNano()
	last := c.loggedAt.Load()
	if now-last < int64(retryLogEvery) || !c.loggedAt.CompareAndSwap(last, now) {
		return
	}
	c.unlogged.Add(-n)
	giveUp := "never"
	if retryFor > 0 {
		giveUp = retryFor.String()
	}
	c.log.Warn("indextag: engine request failed, retrying", "request", method+" "+path, "reason", reason,
		"err", err, "retries_since_last_log", n, "gives_up_after", giveUp)
}

// at is a connection like c to another address of the same engine (a
// SolrCloud node): the same client and retry bounds, the credentials of
// c's address when base has none.
func (c *conn) at(base *url.URL) *conn {
	b := *base
	if b.User == nil {
		b.User = c.base.User
	}
	b.Path = strings.TrimSuffix(b.Path, "/")
	b.RawQuery, b.Fragment = "", ""
	return &conn{base: &b, hc: c.hc, maxWait: c.maxWait, retryFor: c.retryFor, firstContact: c.firstContact}
}

// count adds one to the retries by reason.
func (c *conn) count(reason string) {
	c.retries.Add(1)
	v, _ := c.backoffs.LoadOrStore(reason, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// retryCounts returns the retries by reason.
func (c *conn) retryCounts() map[string]int {
	m := map[string]int{}
	c.backoffs.Range(func(k, v any) bool {
		m[k.(string)] = int(v.(*atomic.Int64).Load())
		return true
	})
	return m
}

// backoff is an exponential backoff with full jitter, capped at max.
type backoff struct {
	next, max time.Duration
	start     time.Time
}

// wait sleeps before the next attempt, or returns ctx's error, or an
// error once giving up: more than retryFor since the first attempt. A
// backoff that would end past retryFor is cut to it, so the last
// attempt comes at the bound, not a whole backoff after it.
func (b *backoff) wait(ctx context.Context, retryFor time.Duration, cause error) error {
	if b.start.IsZero() {
		b.start, b.next = time.Now(), firstBackoff
	}
	since := time.Since(b.start)
	if retryFor > 0 && since > retryFor {
		return fmt.Errorf("indextag: gave up after %s of retries: %w", retryFor, cause)
	}
	d := time.Duration(rand.Int64N(int64(b.next))) + b.next/2
	b.next = min(2*b.next, b.max)
	if retryFor > 0 {
		// Just past the bound: the attempt after it is the last.
		d = min(d, retryFor-since+time.Millisecond)
	}
	return sleep(ctx, d)
}

// do sends a request with a JSON (or NDJSON) body and decodes a 2xx
// answer into out (nil: discarded). Back-pressure and transient failures
// (429, 502, 503, 504, connection errors) are retried with backoff for up
// to retryFor; any other status is a *statusError.
func (c *conn) do(ctx context.Context, method, path string, query url.Values, body []byte, contentType string, out any) error {
	return c.retry(ctx, false, method, path, query, body, contentType, out)
}

// doAdvancing is [conn.do] for a request that moves a cursor the engine
// keeps (a scroll continuation): the engine may have served the page
// before the answer was cut or timed out, and the same request again
// would read the page after it, losing this one. So it is retried only
// when the engine refused it (a retryable status) or was never reached
// (the connection was not made); otherwise its error says so.
func (c *conn) doAdvancing(ctx context.Context, method, path string, query url.Values, body []byte, contentType string, out any) error {
	return c.retry(ctx, true, method, path, query, body, contentType, out)
}

func (c *conn) retry(ctx context.Context, advancing bool, method, path string, query url.Values, body []byte, contentType string, out any) error {
	// The retries are bounded from the first attempt, which may itself
	// have waited long (the client's timeout).
	b := backoff{max: c.maxWait, start: time.Now(), next: firstBackoff}
	for {
		err := c.once(ctx, method, path, query, body, contentType, out)
		if err == nil || ctx.Err() != nil {
			return err
		}
		st := statusOf(err)
		reason := fmt.Sprintf("HTTP %d", st)
		if advancing && st == 0 && !isDialError(err) {
			return fmt.Errorf("indextag: %s %s: the answer was lost after the request was sent, and the engine's cursor may have moved past its page, which no retry can read again; run the job again: %w", method, path, err)
		}
		if untrusted(err) {
			// The engine answered the handshake with a certificate no
			// retry will make trusted (Elasticsearch 8's own CA, by
			// default): not a connection that failed.
			return fmt.Errorf("indextag: %s: the engine's TLS certificate is not trusted; SSL_CERT_FILE=FILE trusts the CA in FILE (Elasticsearch's config/certs/http_ca.crt): %w", c.base.Redacted(), err)
		}
		if st == 0 {
			var ne interface{ Timeout() bool }
			if !errors.As(err, &ne) && !isConnError(err) {
				return err
			}
			reason = "connection"
		} else if !retryable(st) {
			return err
		}
		c.count(reason)
		retryFor, unreached := c.retryFor, reason == "connection" && !c.answered.Load()
		if unreached && (retryFor <= 0 || retryFor > c.firstContact) {
			retryFor = c.firstContact
		}
		if werr := b.wait(ctx, retryFor, err); werr != nil {
			if unreached {
				werr = fmt.Errorf("indextag: %s has not answered (is the URL right?): %w", c.base.Redacted(), werr)
			}
			return werr
		}
		c.logRetry(method, path, reason, err, retryFor)
	}
}

// untrusted reports a TLS certificate that does not verify.
func untrusted(err error) bool {
	var ve *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	return errors.As(err, &ve) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// isDialError reports a connection that was never made: the request did
// not reach the engine.
func isDialError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}

// isConnError reports a failure to reach the engine or a connection cut
// mid-answer.
func isConnError(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) || errors.Is(err, io.ErrUnexpectedEOF)
}

// doHeader sends a GET without a body, with the retries of do, and
// returns the last answer's header (nil when none came) with its error.
func (c *conn) doHeader(ctx context.Context, method, path string, out any) (http.Header, error) {
	var h http.Header
	c.onHeader = func(got http.Header) { h = got }
	defer func() { c.onHeader = nil }()
	err := c.do(ctx, method, path, nil, nil, "", out)
	return h, err
}

func (c *conn) once(ctx context.Context, method, path string, query url.Values, body []byte, contentType string, out any) error {
	u := *c.base
	u.Path += path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	if !c.answered.Load() && c.firstContact > 0 {
		// An engine that has never answered gets the first-contact
		// bound, not the client's timeout (2 minutes by default): one
		// that accepts connections and stays silent is most likely the
		// wrong address too.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.firstContact)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", cmp.Or(contentType, "application/json"))
	}
	req.Header.Set("Accept", "application/json")
	// Compression would cost both ends CPU for nothing on a local
	// network; an engine may still compress, and then the body is read
	// as sent.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	c.answered.Store(true)
	defer resp.Body.Close()
	if c.onHeader != nil {
		c.onHeader(resp.Header)
	}
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return &statusError{method: method, path: path, status: resp.StatusCode, body: strings.TrimSpace(string(msg))}
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	if s, ok := out.(streamer); ok {
		// An answer cut mid-way and retried is decoded again from its
		// start: what the cut one gave is dropped, not kept twice.
		s.reset()
		err = decodeStream(resp.Body, s)
	} else {
		dec := json.NewDecoder(resp.Body)
		dec.UseNumber()
		err = dec.Decode(out)
	}
	if err != nil {
		return fmt.Errorf("indextag: %s %s: bad answer: %w", method, path, err)
	}
	return nil
}

// pacer bounds a rate of items a second across goroutines; nil or a rate
// of 0 is unbounded.
type pacer struct {
	mu    sync.Mutex
	rate  float64
	start time.Time
	sent  float64 // items admitted since start; guarded by mu
}

func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{rate: rate}
}

// take waits until n more items fit the rate, or ctx is done.
func (p *pacer) take(ctx context.Context, n int) error {
	if p == nil {
		return ctx.Err()
	}
	p.mu.Lock()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	due := p.start.Add(time.Duration(p.sent / p.rate * float64(time.Second)))
	p.sent += float64(n)
	p.mu.Unlock()
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err()
	}
	return sleep(ctx, d)
}

// sleep waits d, or until ctx ends (then its error), so a backoff or the
// write rate never holds up Ctrl-C.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

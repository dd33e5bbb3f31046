package indextag

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestFirstContactBounded: an engine that has never answered is given up
// after the first-contact bound, not after RetryFor, and the error asks
// whether the URL is right; once it has answered, a connection failure
// is an engine restarting and is retried for RetryFor.
func TestFirstContactBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	ln.Close() // nothing listens there now

	// Far longer than the test's own deadline: only the first-contact
	// bound can end the retries in time.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := newConn(closed, Options{RetryFor: time.Hour, MaxBackoff: 50 * time.Millisecond})
	c.firstContact = 300 * time.Millisecond
	err = c.do(ctx, "GET", "/", nil, nil, "", nil)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "has not answered (is the URL right?)") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("never-reached engine: %v (context: %v); want the first-contact error with the cause", err, ctx.Err())
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("{}")) }))
	base, _ := url.Parse(srv.URL)
	c = newConn(base, Options{RetryFor: 800 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
	if err := c.do(ctx, "GET", "/", nil, nil, "", nil); err != nil {
		t.Fatalf("first request: %v", err)
	}
	// Answered: a first-contact bound that would end the retries at once
	// no longer applies. (Set before the first request, it bounds that
	// request's attempts too: 1 ms is less than a loaded machine takes.)
	c.firstContact = time.Millisecond
	srv.Close()
	start := time.Now()
	err = c.do(ctx, "GET", "/", nil, nil, "", nil)
	if err == nil || strings.Contains(err.Error(), "has not answered") || !strings.Contains(err.Error(), "gave up after 800ms") {
		t.Fatalf("engine gone after answering: %v; want RetryFor's error", err)
	}
	if waited := time.Since(start); waited < 800*time.Millisecond {
		t.Errorf("gave up after %v, before RetryFor (800ms)", waited)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ended by the test's deadline: %v", err)
	}
}

// TestFirstContactSilent: an engine that accepts the connection and never
// answers (a hung process, a firewall that drops the packets after the
// handshake) is given up after the first-contact bound too, counted from
// the first attempt. It was held for two of the client's 2-minute
// timeouts, about 4 minutes, before "has not answered": each attempt
// waited the client's timeout, and the bound was counted from the first
// failure.
func TestFirstContactSilent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // held open, never answered
		}
	}()
	base := &url.URL{Scheme: "http", Host: ln.Addr().String()}
	c := newConn(base, Options{RetryFor: time.Hour, MaxBackoff: 50 * time.Millisecond})
	c.firstContact = 500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	err = c.do(ctx, "GET", "/", nil, nil, "", nil)
	took := time.Since(start)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "has not answered (is the URL right?)") {
		t.Fatalf("silent engine: %v after %v (context: %v); want the first-contact error", err, took, ctx.Err())
	}
	if took > 10*time.Second {
		t.Errorf("silent engine given up after %v; the first-contact bound is 500ms", took)
	}
}

// TestUntrustedCertificate: an engine whose TLS certificate does not
// verify (Elasticsearch 8 serves HTTPS under its own CA by default) is
// told at once, with how to trust it; it was retried as an engine not
// answering for 20 seconds and then reported as a URL that may be wrong.
func TestUntrustedCertificate(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"version":{"number":"8.19.0"}}`))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	c := newConn(base, Options{RetryFor: time.Hour, MaxBackoff: 50 * time.Millisecond})
	err := c.do(context.Background(), "GET", "/", nil, nil, "", nil)
	if err == nil || !strings.Contains(err.Error(), "certificate is not trusted") || !strings.Contains(err.Error(), "SSL_CERT_FILE") {
		t.Errorf("untrusted certificate: %v; want it named, with SSL_CERT_FILE", err)
	}
	if n := c.retryCounts(); len(n) > 0 {
		t.Errorf("retried %v; a certificate does not become trusted by retrying", n)
	}
}

// TestBackoffWithinRetryFor: the retries end within retryFor of the
// first attempt, not a whole backoff after it: a backoff that crossed
// the bound was slept in full (an operator's -retry-for 15s ran 25.8 s).
func TestBackoffWithinRetryFor(t *testing.T) {
	// Retrying for a while already, the next backoff 4 to 12 s.
	b := backoff{start: time.Now(), next: 8 * time.Second, max: time.Minute}
	const retryFor = 500 * time.Millisecond
	var err error
	for range 100 {
		if err = b.wait(context.Background(), retryFor, errors.New("refused")); err != nil {
			break
		}
	}
	// Slack for a loaded machine's late wake-ups, far below the 4 s
	// the crossing backoff took at least.
	if took := time.Since(b.start); err == nil || took > retryFor+2*time.Second {
		t.Errorf("gave up after %v (%v); want within %v of the first attempt", took, err, retryFor)
	}
}

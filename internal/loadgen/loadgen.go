package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// ErrNoURLs is returned by [Run] when the options name no URL.
var ErrNoURLs = errors.New("loadgen: no URLs")

// Options configure [Run]. Zero fields take the defaults named.
type Options struct {
	// URLs are the requests sent, in turn: connection c starts at URL
	// c mod len(URLs) and moves to the next one after each request. All
	// must be http URLs on one host. At least one.
	URLs []string
	// Conns is the number of connections, each a goroutine that sends
	// requests back to back. Default 32.
	Conns int
	// Duration is how long requests are sent. Default 10s.
	Duration time.Duration
	// Timeout bounds one request; a request that takes longer counts as
	// an error. Default 5s.
	Timeout time.Duration
}

// Result is the outcome of one or more runs against one target.
type Result struct {
	// Requests counts the requests answered, whatever their status.
	Requests uint64
	// Errors counts requests that got no answer (connection errors,
	// timeouts).
	Errors uint64
	// Non2xx counts answers whose status was not 2xx.
	Non2xx uint64
	// Bytes is the sum of the answers' body sizes.
	Bytes uint64
	// Elapsed is the time spent sending requests.
	Elapsed time.Duration
	// Latency holds the latency of every answered request.
	Latency Histogram
	// FirstErr is the first error met, nil if none.
	FirstErr error
}

// RPS returns the answered requests per second.
func (r *Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Merge adds the counts, time and latencies of o to r, as if r's runs
// and o's were one.
func (r *Result) Merge(o *Result) {
	r.Requests += o.Requests
	r.Errors += o.Errors
	r.Non2xx += o.Non2xx
	r.Bytes += o.Bytes
	r.Elapsed += o.Elapsed
	r.Latency.Merge(&o.Latency)
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
}

// Run sends requests for o.Duration over o.Conns connections to one host
// and returns what they met. It stops early when ctx ends; it returns an
// error only for bad options.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.Conns = cmp.Or(o.Conns, 32)
	o.Duration = cmp.Or(o.Duration, 10*time.Second)
	o.Timeout = cmp.Or(o.Timeout, 5*time.Second)
	if len(o.URLs) == 0 {
		return nil, ErrNoURLs
	}
	var host string
	for _, s := range o.URLs {
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			return nil, fmt.Errorf("loadgen: %q is not an http URL", s)
		}
		if host != "" && u.Host != host {
			return nil, fmt.Errorf("loadgen: URLs on two hosts, %s and %s", host, u.Host)
		}
		host = u.Host
	}
	hc := &fasthttp.HostClient{
		Addr:                host,
		MaxConns:            o.Conns,
		ReadTimeout:         o.Timeout,
		WriteTimeout:        o.Timeout,
		MaxIdleConnDuration: time.Minute,
		MaxConnWaitTimeout:  o.Timeout,
	}
	defer hc.CloseIdleConnections()

	ctx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	results := make([]Result, o.Conns)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range o.Conns {
		wg.Go(func() { loop(ctx, hc, o.URLs, c, &results[c]) })
	}
	wg.Wait()
	total := &Result{}
	for i := range results {
		total.Merge(&results[i])
	}
	total.Elapsed = time.Since(start)
	return total, nil
}

// loop sends requests back to back on one connection until ctx ends.
func loop(ctx context.Context, hc *fasthttp.HostClient, urls []string, c int, r *Result) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	for i := c; ctx.Err() == nil; i++ {
		req.SetRequestURI(urls[i%len(urls)])
		t0 := time.Now()
		err := hc.Do(req, resp)
		d := time.Since(t0)
		if err != nil {
			r.Errors++
			if r.FirstErr == nil {
				r.FirstErr = fmt.Errorf("loadgen: %w", err)
			}
			continue
		}
		r.Requests++
		r.Latency.Record(d)
		r.Bytes += uint64(len(resp.Body()))
		if code := resp.StatusCode(); code/100 != 2 {
			r.Non2xx++
			if r.FirstErr == nil {
				r.FirstErr = fmt.Errorf("loadgen: %s: status %d", urls[i%len(urls)], code)
			}
		}
	}
}

package loadgen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// ErrNoURLs is returned by [Run] when the options name no URL.
var ErrNoURLs = errors.New("loadgen: no URLs")

// Options configure [Run]. Zero fields take the defaults named.
type Options struct {
	// URLs are the requests sent, in turn: in a closed loop connection c
	// starts at URL c mod len(URLs) and moves to the next one after each
	// request; at a Rate request i asks for URL i mod len(URLs). All must
	// be http URLs on one host. At least one.
	URLs []string
	// Conns is the number of connections, each a goroutine: in a closed
	// loop each sends requests back to back; at a Rate they cap the
	// requests in flight. Default 32.
	Conns int
	// Rate, when positive, makes the run open-loop: request i is due at
	// i/Rate seconds from the start, whatever the answers, and its latency
	// counts from that due time, not from when it was sent, so a stall
	// shows in every request it delays (coordinated omission corrected as
	// wrk2 -R does). A request due while all Conns are in flight waits for
	// one ([Result.Late]); one still waiting when the run ends is not sent
	// ([Result.Missed]). Requests per second; zero: a closed loop.
	Rate float64
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
	// Latency holds the latency of every answered request: at a Rate,
	// from the time it was due.
	Latency Histogram
	// Late counts, at a Rate, the requests that waited for a connection:
	// when they were due, all Conns were in flight.
	Late uint64
	// Missed counts, at a Rate, the requests due before the run ended
	// that were never sent, all Conns being in flight until the end.
	// Neither Requests nor Latency counts them.
	Missed uint64
	// Lag holds, at a Rate, the time from each request's due time to its
	// send: the wait for a connection, plus the generator's own delay in
	// waking up (Go timers on Linux wake up to 1 ms late when the process
	// is idle, golang/go#44343). Latency includes it.
	Lag Histogram
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
	r.Late += o.Late
	r.Missed += o.Missed
	r.Lag.Merge(&o.Lag)
	if r.FirstErr == nil {
		r.FirstErr = o.FirstErr
	}
}

// Run sends requests for o.Duration over o.Conns connections to one host
// and returns what they met. It stops early when ctx ends; it returns an
// error only for bad options. Requests in flight when it stops are
// answered (or time out) before it returns.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.Conns = cmp.Or(o.Conns, 32)
	o.Duration = cmp.Or(o.Duration, 10*time.Second)
	o.Timeout = cmp.Or(o.Timeout, 5*time.Second)
	if len(o.URLs) == 0 {
		return nil, ErrNoURLs
	}
	if o.Rate < 0 || math.IsNaN(o.Rate) || math.IsInf(o.Rate, 0) {
		return nil, fmt.Errorf("loadgen: rate %v is not a finite number >= 0", o.Rate)
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

	results := make([]Result, o.Conns)
	start := time.Now()
	var s *schedule
	if o.Rate > 0 {
		s = newSchedule(start, o.Rate, o.Duration)
	} else {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(o.Duration))
		defer cancel()
	}
	var wg sync.WaitGroup
	for c := range o.Conns {
		if s != nil {
			wg.Go(func() { s.loop(ctx, hc, o.URLs, &results[c]) })
		} else {
			wg.Go(func() { loop(ctx, hc, o.URLs, c, &results[c]) })
		}
	}
	wg.Wait()
	total := &Result{}
	for i := range results {
		total.Merge(&results[i])
	}
	total.Elapsed = time.Since(start)
	if s != nil {
		total.Missed = s.missed(total.Requests + total.Errors)
	}
	return total, nil
}

// schedule hands out the requests of an open-loop run: request i is due
// at start + i/rate, for i below n, the number due within the run's
// duration. It is safe for concurrent use.
type schedule struct {
	start    time.Time
	end      time.Time
	interval float64 // nanoseconds from one request to the next
	n        uint64
	next     atomic.Uint64 // the next request to hand out
	cut      atomic.Int64  // nanoseconds from start to when ctx was seen to end, 0 if not
}

func newSchedule(start time.Time, rate float64, d time.Duration) *schedule {
	interval := 1e9 / rate
	return &schedule{start: start, end: start.Add(d), interval: interval, n: uint64(math.Ceil(float64(d) / interval))}
}

// cutShort records that the run's context ended now, if no loop has yet.
func (s *schedule) cutShort() {
	s.cut.CompareAndSwap(0, max(int64(time.Since(s.start)), 1))
}

// missed returns how many of the requests due before the run ended were
// not among the sent ones. For a run cut short by its context, it counts
// up to when a loop first saw the context end.
func (s *schedule) missed(sent uint64) uint64 {
	due := s.n
	if cut := s.cut.Load(); cut > 0 {
		due = min(due, uint64(math.Ceil(float64(cut)/s.interval)))
	}
	if due < sent {
		return 0
	}
	return due - sent
}

// loop takes the next request, waits until it is due and sends it, until
// the schedule is done, ctx ends, or it takes a request after the run's
// end. A request already due when loop takes it is late: this loop and
// every other one were sending when it fell due.
func (s *schedule) loop(ctx context.Context, hc *fasthttp.HostClient, urls []string, r *Result) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for first := true; ; first = false {
		i := s.next.Add(1) - 1
		if i >= s.n {
			return
		}
		due := s.start.Add(time.Duration(float64(i) * s.interval))
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			s.cutShort()
			return
		case due.After(now):
			t.Reset(due.Sub(now))
			select {
			case <-ctx.Done():
				s.cutShort()
				return
			case <-t.C:
			}
		case !now.Before(s.end):
			return // a backlog at the end: missed
		case !first:
			// The first request of each loop is not late: the loops
			// start just after the schedule does.
			r.Late++
		}
		u := urls[i%uint64(len(urls))]
		req.SetRequestURI(u)
		r.Lag.Record(time.Since(due))
		err := hc.Do(req, resp)
		d := time.Since(due)
		r.record(u, d, resp, err)
	}
}

// loop sends requests back to back on one connection until ctx ends.
func loop(ctx context.Context, hc *fasthttp.HostClient, urls []string, c int, r *Result) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	for i := c; ctx.Err() == nil; i++ {
		u := urls[i%len(urls)]
		req.SetRequestURI(u)
		t0 := time.Now()
		err := hc.Do(req, resp)
		r.record(u, time.Since(t0), resp, err)
	}
}

// record counts one request to u that took d and got resp or err.
func (r *Result) record(u string, d time.Duration, resp *fasthttp.Response, err error) {
	if err != nil {
		r.Errors++
		if r.FirstErr == nil {
			r.FirstErr = fmt.Errorf("loadgen: %w", err)
		}
		return
	}
	r.Requests++
	r.Latency.Record(d)
	r.Bytes += uint64(len(resp.Body()))
	if code := resp.StatusCode(); code/100 != 2 {
		r.Non2xx++
		if r.FirstErr == nil {
			r.FirstErr = fmt.Errorf("loadgen: %s: status %d", u, code)
		}
	}
}

package loadgen

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func TestHistogramQuantile(t *testing.T) {
	// 1..100000 µs: the exact q-quantile of 1..n is ceil(q·n).
	var h Histogram
	const n = 100_000
	for i := 1; i <= n; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{
		{0, time.Microsecond},
		{0.5, 50 * time.Millisecond},
		{0.9, 90 * time.Millisecond},
		{0.99, 99 * time.Millisecond},
		{0.999, 99900 * time.Microsecond},
		{1, 100 * time.Millisecond},
	} {
		t.Run(time.Duration(tc.want).String(), func(t *testing.T) {
			got := h.Quantile(tc.q)
			if rel := float64(got-tc.want) / float64(tc.want); rel > 0.004 || rel < -0.004 {
				t.Errorf("Quantile(%v) = %v, want %v within 0.4%%", tc.q, got, tc.want)
			}
		})
	}
	if h.Count() != n || h.Min() != time.Microsecond || h.Max() != 100*time.Millisecond {
		t.Errorf("Count, Min, Max = %d, %v, %v, want %d, 1µs, 100ms", h.Count(), h.Min(), h.Max(), n)
	}
	if want := time.Duration(n+1) * time.Microsecond / 2; h.Mean() != want {
		t.Errorf("Mean() = %v, want %v", h.Mean(), want)
	}
}

func TestHistogramRandom(t *testing.T) {
	// Log-uniform values from 1ns to 10s against a sorted copy.
	r := rand.New(rand.NewPCG(1, 2))
	var h Histogram
	vals := make([]time.Duration, 50_000)
	for i := range vals {
		vals[i] = time.Duration(math.Pow(10, r.Float64()*10))
		h.Record(vals[i])
	}
	slices.Sort(vals)
	for _, q := range []float64{0.01, 0.25, 0.5, 0.9, 0.99, 0.999} {
		want := vals[int(q*float64(len(vals)))-1]
		got := h.Quantile(q)
		if rel := float64(got-want) / float64(want); rel > 0.004 || rel < -0.004 {
			t.Errorf("Quantile(%v) = %v, want %v within 0.4%%", q, got, want)
		}
	}
}

func TestHistogramMergeAndEmpty(t *testing.T) {
	var a, b, empty Histogram
	if empty.Quantile(0.5) != 0 || empty.Mean() != 0 || empty.Max() != 0 {
		t.Errorf("empty histogram: Quantile, Mean, Max = %v, %v, %v, want 0", empty.Quantile(0.5), empty.Mean(), empty.Max())
	}
	a.Record(time.Millisecond)
	b.Record(3 * time.Millisecond)
	b.Record(-time.Second) // counts as zero
	a.Merge(&b)
	a.Merge(&empty)
	if a.Count() != 3 || a.Min() != 0 || a.Max() != 3*time.Millisecond {
		t.Errorf("merged Count, Min, Max = %d, %v, %v, want 3, 0s, 3ms", a.Count(), a.Min(), a.Max())
	}
}

func serve(t *testing.T, h fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: h}
	go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
	t.Cleanup(func() { srv.Shutdown() })
	return "http://" + ln.Addr().String()
}

func TestRun(t *testing.T) {
	base := serve(t, func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == "/missing" {
			ctx.SetStatusCode(fasthttp.StatusNotFound)
			return
		}
		ctx.SetBodyString("hello")
	})
	t.Run("ok", func(t *testing.T) {
		r, err := Run(context.Background(), Options{URLs: []string{base + "/a", base + "/b"}, Conns: 4, Duration: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if r.Requests == 0 || r.Errors != 0 || r.Non2xx != 0 || r.FirstErr != nil {
			t.Errorf("Run = %d requests, %d errors, %d non-2xx, %v; want some, none, none", r.Requests, r.Errors, r.Non2xx, r.FirstErr)
		}
		if r.Latency.Count() != r.Requests || r.Bytes != 5*r.Requests || r.RPS() <= 0 {
			t.Errorf("Run: %d latencies, %d bytes, %.0f req/s for %d requests", r.Latency.Count(), r.Bytes, r.RPS(), r.Requests)
		}
		if r.Elapsed < 200*time.Millisecond || r.Elapsed > 2*time.Second {
			t.Errorf("Run took %v, want about 200ms", r.Elapsed)
		}
	})
	t.Run("non2xx", func(t *testing.T) {
		r, err := Run(context.Background(), Options{URLs: []string{base + "/missing"}, Conns: 1, Duration: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if r.Non2xx == 0 || r.Non2xx != r.Requests || r.FirstErr == nil || !strings.Contains(r.FirstErr.Error(), "status 404") {
			t.Errorf("Run = %d requests, %d non-2xx, %v; want all 404", r.Requests, r.Non2xx, r.FirstErr)
		}
	})
	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		r, err := Run(context.Background(), Options{URLs: []string{"http://" + addr + "/"}, Conns: 1, Duration: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if r.Errors == 0 || r.Requests != 0 || r.FirstErr == nil {
			t.Errorf("Run = %d requests, %d errors, %v; want only errors", r.Requests, r.Errors, r.FirstErr)
		}
	})
}

func TestRunOptions(t *testing.T) {
	local := []string{"http://127.0.0.1:1/"}
	for _, tc := range []struct {
		name string
		urls []string
		rate float64
		want string
	}{
		{"none", nil, 0, ErrNoURLs.Error()},
		{"https", []string{"https://127.0.0.1/"}, 0, `loadgen: "https://127.0.0.1/" is not an http URL`},
		{"two hosts", []string{"http://127.0.0.1:1/", "http://127.0.0.1:2/"}, 0, "loadgen: URLs on two hosts, 127.0.0.1:1 and 127.0.0.1:2"},
		{"negative rate", local, -1, "loadgen: rate -1 is not a finite number >= 0"},
		{"NaN rate", local, math.NaN(), "loadgen: rate NaN is not a finite number >= 0"},
		{"infinite rate", local, math.Inf(1), "loadgen: rate +Inf is not a finite number >= 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), Options{URLs: tc.urls, Rate: tc.rate})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Run(%q, rate %v) = %v, want %q", tc.urls, tc.rate, err, tc.want)
			}
		})
	}
	if _, err := Run(context.Background(), Options{}); !errors.Is(err, ErrNoURLs) {
		t.Errorf("Run(no URLs) = %v, want ErrNoURLs", err)
	}
}

// TestRunRate sends 1000 req/s for 1s to a fast server: every one of the
// 1000 requests due is sent or counted missed, nearly all are sent, and
// they arrive spread over the second, not in a burst.
func TestRunRate(t *testing.T) {
	var (
		mu       sync.Mutex
		arrivals []time.Time
	)
	base := serve(t, func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
		ctx.SetBodyString("hello")
	})
	const rate, d = 1000, time.Second
	t0 := time.Now()
	r, err := Run(context.Background(), Options{URLs: []string{base + "/a", base + "/b"}, Conns: 16, Duration: d, Rate: rate})
	if err != nil {
		t.Fatal(err)
	}
	sent := r.Requests + r.Errors
	if sent+r.Missed != rate {
		t.Errorf("Run: %d sent + %d missed, want the %d due in %v at %d/s", sent, r.Missed, rate, d, rate)
	}
	// A loaded machine may leave a backlog at the end or make a few
	// late; not a fifth.
	if r.Errors != 0 || r.Non2xx != 0 || r.Requests < rate*8/10 || r.Late > r.Requests/10 {
		t.Errorf("Run = %d requests, %d errors, %d non-2xx, %d late, %d missed (%v); want over %d, few late",
			r.Requests, r.Errors, r.Non2xx, r.Late, r.Missed, r.FirstErr, rate*8/10)
	}
	if r.Latency.Count() != r.Requests || r.Lag.Count() != sent || r.Bytes != 5*r.Requests {
		t.Errorf("Run: %d latencies, %d lags, %d bytes for %d requests", r.Latency.Count(), r.Lag.Count(), r.Bytes, r.Requests)
	}
	if r.Elapsed < d*9/10 || r.Elapsed > 3*d {
		t.Errorf("Run took %v, want about %v", r.Elapsed, d)
	}
	mu.Lock()
	defer mu.Unlock()
	// Due evenly over the second, half arrive in each half, give or take
	// stalls of 200 ms; a burst or twice the rate puts them all in the
	// first.
	var first int
	for _, at := range arrivals {
		if at.Sub(t0) < d/2 {
			first++
		}
	}
	if n := len(arrivals); n != int(sent) || first < n*3/10 || first > n*7/10 {
		t.Errorf("server saw %d requests, %d in the first half second; want %d, about half", n, first, sent)
	}
}

// TestRunRateStall loads a server that, once, stalls every request for
// 300ms. At a fixed rate the requests due during the stall count it in
// their latency (about 75 at 2ms intervals are over 150ms); in a closed
// loop only the few in flight do (coordinated omission).
func TestRunRateStall(t *testing.T) {
	const stall = 300 * time.Millisecond
	for _, tc := range []struct {
		name     string
		rate     float64
		wantSlow bool
	}{
		{"fixed rate", 500, true},
		{"closed loop", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu sync.Mutex // held while a request is served: one stall stalls all
				n  atomic.Int64
			)
			base := serve(t, func(ctx *fasthttp.RequestCtx) {
				mu.Lock()
				defer mu.Unlock()
				if n.Add(1) == 100 {
					time.Sleep(stall) // the stall simulated
				}
			})
			r, err := Run(context.Background(), Options{URLs: []string{base + "/"}, Conns: 4, Duration: time.Second, Rate: tc.rate})
			if err != nil {
				t.Fatal(err)
			}
			if r.Errors != 0 || r.Requests < 200 || r.Latency.Max() < stall {
				t.Fatalf("Run = %d requests, %d errors (%v), max latency %v; want over 200, none, >= %v",
					r.Requests, r.Errors, r.FirstErr, r.Latency.Max(), stall)
			}
			// The 51st slowest latency: over 150ms if 51 requests are.
			slow51 := r.Latency.Quantile(1 - 50/float64(r.Requests))
			if got := slow51 >= stall/2; got != tc.wantSlow {
				t.Errorf("51st slowest of %d latencies = %v, want over %v: %v", r.Requests, slow51, stall/2, tc.wantSlow)
			}
			if tc.rate == 0 {
				if r.Late != 0 || r.Missed != 0 || r.Lag.Count() != 0 {
					t.Errorf("closed loop: %d late, %d missed, %d lags, want none", r.Late, r.Missed, r.Lag.Count())
				}
				return
			}
			// About 146 of the 150 due during the stall wait for a
			// connection; the backlog clears well before the end.
			if r.Late < 50 || r.Requests+r.Missed != 500 || r.Missed > 50 || r.Lag.Max() < stall/2 {
				t.Errorf("Run = %d late, %d sent + %d missed, lag max %v; want over 50 late, 500 due, few missed, lag over %v",
					r.Late, r.Requests, r.Missed, r.Lag.Max(), stall/2)
			}
		})
	}
}

// TestRunRateOverload asks 1000 req/s for 300ms of a server that takes
// 10ms a request, over one connection: about 30 are sent, each after the
// first late, the other 270 missed, and the run does not outlast its
// duration to clear the backlog.
func TestRunRateOverload(t *testing.T) {
	base := serve(t, func(ctx *fasthttp.RequestCtx) {
		time.Sleep(10 * time.Millisecond) // the slow server simulated
	})
	r, err := Run(context.Background(), Options{URLs: []string{base + "/"}, Conns: 1, Duration: 300 * time.Millisecond, Rate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sent := r.Requests + r.Errors
	if sent+r.Missed != 300 || sent > 31 || r.Missed < 269 || r.Late != sent-1 {
		t.Errorf("Run = %d sent, %d late, %d missed; want 300 due, at most 31 sent, all but the first late, the rest missed",
			sent, r.Late, r.Missed)
	}
	// Request k (from 0) waits for k answers of at least 10ms each, and
	// was due k ms after the start.
	if want := time.Duration(sent-1) * 9 * time.Millisecond; r.Latency.Max() < want {
		t.Errorf("max latency %v over %d requests, want at least %v", r.Latency.Max(), sent, want)
	}
	if r.Elapsed > 2*time.Second {
		t.Errorf("Run took %v, want about 300ms", r.Elapsed)
	}
}

// TestRunRateCanceled ends a minute-long fixed-rate run from the server
// at its 100th request: Run returns soon and counts as missed only what
// fell due before the end.
func TestRunRateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	base := serve(t, func(*fasthttp.RequestCtx) {
		if n.Add(1) == 100 {
			cancel()
		}
	})
	r, err := Run(ctx, Options{URLs: []string{base + "/"}, Conns: 4, Duration: time.Minute, Rate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if r.Elapsed > 10*time.Second || r.Requests < 100 || r.Missed > r.Requests/2 {
		t.Errorf("Run cut at the 100th request = %v, %d requests, %d missed; want a quick end, 100 or more, few missed", r.Elapsed, r.Requests, r.Missed)
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	d := 1234567 * time.Nanosecond
	b.ReportAllocs()
	for b.Loop() {
		h.Record(d)
		d += 17
	}
}

package loadgen

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
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
	for _, tc := range []struct {
		name string
		urls []string
		want string
	}{
		{"none", nil, ErrNoURLs.Error()},
		{"https", []string{"https://127.0.0.1/"}, `loadgen: "https://127.0.0.1/" is not an http URL`},
		{"two hosts", []string{"http://127.0.0.1:1/", "http://127.0.0.1:2/"}, "loadgen: URLs on two hosts, 127.0.0.1:1 and 127.0.0.1:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Run(context.Background(), Options{URLs: tc.urls})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Run(%q) = %v, want %q", tc.urls, err, tc.want)
			}
		})
	}
	if _, err := Run(context.Background(), Options{}); !errors.Is(err, ErrNoURLs) {
		t.Errorf("Run(no URLs) = %v, want ErrNoURLs", err)
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

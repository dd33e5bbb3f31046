package loadgen

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// TestCompareThroughPassthrough loads a backend directly and through the
// pass-through in alternating rounds: both targets answer every request,
// the pass-through relays the backend's status and body, and each
// round is reported.
func TestCompareThroughPassthrough(t *testing.T) {
	direct := serve(t, func(ctx *fasthttp.RequestCtx) {
		ctx.WriteString("answer to " + string(ctx.QueryArgs().Peek("q")))
	})
	pt, err := StartPassthrough(strings.TrimPrefix(direct, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer pt.Close()

	status, body, err := fasthttp.Get(nil, pt.URL()+"/search?q=x")
	if err != nil || status != 200 || string(body) != "answer to x" {
		t.Fatalf("GET through the pass-through = %d %q %v, want 200 %q", status, body, err, "answer to x")
	}

	var rounds []int
	got, err := Compare(context.Background(), []Target{
		{Name: "direct", URLs: []string{direct + "/search?q=a"}},
		{Name: "passthrough", URLs: []string{pt.URL() + "/search?q=a"}},
	}, CompareOptions{Conns: 2, Rounds: 3, Slice: 50 * time.Millisecond, OnRound: func(r int, so []Measured) {
		rounds = append(rounds, r)
		if so[1].Requests == 0 {
			t.Errorf("round %d: the second target has no requests yet", r)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rounds) != 3 {
		t.Errorf("OnRound called for rounds %v, want 0, 1, 2", rounds)
	}
	for i, m := range got {
		if m.Requests == 0 || m.Errors != 0 || m.Non2xx != 0 {
			t.Errorf("target %d: %d requests, %d errors, %d non-2xx (%v)", i, m.Requests, m.Errors, m.Non2xx, m.FirstErr)
		}
		if m.Elapsed < 150*time.Millisecond {
			t.Errorf("target %d loaded for %v, want 3 slices of 50ms", i, m.Elapsed)
		}
		if want := uint64(len("answer to a")) * m.Requests; m.Bytes != want {
			t.Errorf("target %d: %d body bytes, want %d", i, m.Bytes, want)
		}
		if m.CPU <= 0 || m.CPUPerRequest() <= 0 {
			t.Errorf("target %d: CPU %v, per request %v; want > 0", i, m.CPU, m.CPUPerRequest())
		}
	}
}

// TestCompareRate loads two targets at one fixed rate: each gets the
// requests due in its slices, 2 rounds of 100, sent or counted missed.
func TestCompareRate(t *testing.T) {
	a := serve(t, func(ctx *fasthttp.RequestCtx) { ctx.WriteString("a") })
	b := serve(t, func(ctx *fasthttp.RequestCtx) { ctx.WriteString("b") })
	got, err := Compare(context.Background(), []Target{{Name: "a", URLs: []string{a + "/"}}, {Name: "b", URLs: []string{b + "/"}}},
		CompareOptions{Conns: 4, Rate: 400, Rounds: 2, Slice: 250 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range got {
		if sent := m.Requests + m.Errors; sent+m.Missed != 200 || m.Requests < 150 || m.Errors != 0 || m.Lag.Count() != sent {
			t.Errorf("target %d: %d requests, %d errors, %d missed, %d lags (%v); want 200 due, nearly all answered", i, m.Requests, m.Errors, m.Missed, m.Lag.Count(), m.FirstErr)
		}
	}
}

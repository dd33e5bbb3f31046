package loadgen

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// Target is one server that [Compare] measures: the URLs sent to it in
// turn.
type Target struct {
	Name string
	URLs []string
}

// Measured is a target's result merged over every round, with the CPU the
// whole process spent while the target was loaded.
type Measured struct {
	Result
	CPU time.Duration
}

// CPUPerRequest returns the process CPU spent per answered request.
func (m *Measured) CPUPerRequest() time.Duration {
	if m.Requests == 0 {
		return 0
	}
	return m.CPU / time.Duration(m.Requests)
}

// CompareOptions configure [Compare]. Zero fields take the defaults named.
type CompareOptions struct {
	// Conns is the number of connections. Default 32.
	Conns int
	// Rate, when positive, loads every target at this fixed rate, in
	// requests per second, as [Options.Rate] does; zero: closed loop.
	Rate float64
	// Rounds is the number of rounds; in each, every target is loaded
	// alone for Slice, in the order given. Default 5.
	Rounds int
	// Slice is the time each target is loaded in a round. Default 2s.
	Slice time.Duration
	// OnRound, when not nil, is called after each round with the results
	// so far.
	OnRound func(round int, so []Measured)
}

// Compare loads the targets one after the other in alternating rounds, so
// that a machine whose speed drifts treats them alike, and returns each
// target's merged result in the order given. It stops early when ctx ends.
func Compare(ctx context.Context, targets []Target, o CompareOptions) ([]Measured, error) {
	if o.Rounds <= 0 {
		o.Rounds = 5
	}
	if o.Slice <= 0 {
		o.Slice = 2 * time.Second
	}
	out := make([]Measured, len(targets))
	for r := range o.Rounds {
		for i, t := range targets {
			c0 := ProcessCPU()
			res, err := Run(ctx, Options{URLs: t.URLs, Conns: o.Conns, Duration: o.Slice, Rate: o.Rate})
			if err != nil {
				return nil, err
			}
			out[i].CPU += ProcessCPU() - c0
			out[i].Merge(res)
		}
		if o.OnRound != nil {
			o.OnRound(r, out)
		}
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// ProcessCPU returns the user and system CPU time the process has spent.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Passthrough is the baseline that winnow is measured against: a plain
// fasthttp reverse proxy that sends each request to one backend with a
// HostClient and copies the answer back, as fasthttp's own reverse-proxy
// example does.
type Passthrough struct {
	srv *fasthttp.Server
	ln  net.Listener
}

// StartPassthrough starts a pass-through to backendAddr (host:port) on a
// free loopback port.
func StartPassthrough(backendAddr string) (*Passthrough, error) {
	hc := &fasthttp.HostClient{Addr: backendAddr, MaxConns: 1024, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second}
	srv := &fasthttp.Server{
		Name:                  "passthrough",
		NoDefaultServerHeader: true,
		Handler: func(ctx *fasthttp.RequestCtx) {
			req := &ctx.Request
			req.Header.Del("Connection")
			if err := hc.Do(req, &ctx.Response); err != nil {
				ctx.Error("passthrough: "+err.Error(), fasthttp.StatusBadGateway)
				return
			}
			ctx.Response.Header.Del("Connection")
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	return &Passthrough{srv: srv, ln: ln}, nil
}

// URL returns the pass-through's base URL, http://127.0.0.1:port.
func (p *Passthrough) URL() string { return "http://" + p.ln.Addr().String() }

// Close stops the pass-through.
func (p *Passthrough) Close() error { return p.srv.Shutdown() }

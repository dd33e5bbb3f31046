package proxy

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

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
	// get returns a setting and the name it was given under, so an error
	// names what the client wrote.
	get := func(arg, header string) (string, string) {
		if hasArgs {
			if v := args.Peek(arg); v != nil {
				return string(v), arg
			}
		}
		return string(ctx.Request.Header.Peek(header)), header
	}
	if m, name := get("winnow_mode", "X-Winnow-Mode"); m == "off" {
		p.off = true
	} else if m != "" {
		mode, err := engine.ParseMode(m)
		if err != nil {
			return p, fmt.Errorf("%s %q is not one of group, remove, annotate, off", name, m)
		}
		p.mode = mode
	}
	method, methodName := get("winnow_method", "X-Winnow-Method")
	threshold, thresholdName := get("winnow_threshold", "X-Winnow-Threshold")
	if threshold != "" {
		if v, err := strconv.ParseFloat(threshold, 64); err != nil || !(v >= 0 && v <= 64) {
			return p, fmt.Errorf("%s %q is not a number in [0, 64]", thresholdName, threshold)
		}
	}
	if method != "" && method != "default" {
		if _, err := similarity.ParseMethod(method); err != nil {
			return p, fmt.Errorf("%s: %w", methodName, err)
		}
	}
	if method != "" || threshold != "" {
		d, err := DecisionFor(method, threshold, s.o.Decision)
		if err != nil {
			return p, err
		}
		p.decision, p.custom = d, true
	}
	explain, _ := get("winnow_explain", "X-Winnow-Explain")
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

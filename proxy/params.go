package proxy

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/winnow-search/winnow/proxy/engine"
	"github.com/winnow-search/winnow/similarity"
)

// params are the per-request settings a client can give as query
// parameters winnow_mode, winnow_method, winnow_threshold,
// winnow_min_confidence, winnow_explain (stripped before forwarding) or
// headers X-Winnow-Mode, X-Winnow-Method, ... The decision settings mean
// what config's decision.* keys mean (similarity.ParseDecision). Any
// other winnow_ parameter or X-Winnow- header is an error.
type params struct {
	custom   bool // the request overrides the decision
	off      bool
	mode     engine.Mode
	decision similarity.Decision // near-duplicates: the clusters
	remove   similarity.Decision // content-equivalence: what remove mode drops
	// explain asks for every result annotated as the mode treats it
	// (see render).
	explain bool
	// cursor is a search paging by the engine's cursor (a scroll, a
	// point in time, search_after): refined within the engine's page.
	cursor bool
}

// render is the mode the answer is rendered in: the request's, or with
// explain the mode that shows what it does ([resultlist.Mode.Explained]).
func (p params) render() engine.Mode {
	if p.explain {
		return p.mode.Explained()
	}
	return p.mode
}

// marks readies marks, the refinement's, for rendering in p's mode: a
// group answer without explain leaves out each duplicate's explanation
// (its annotation keeps the cluster, the relation and the verdict's
// decision and probability), which would otherwise be most of what the
// answer adds to the engine's; winnow_explain=1 keeps it. It clears them
// in place and returns marks.
func (p params) marks(marks []engine.Mark) []engine.Mark {
	if p.explain || p.render() != engine.Group {
		return marks
	}
	for i := range marks {
		if w := marks[i].Winner; w >= 0 && w != i {
			marks[i].Explain = ""
		}
	}
	return marks
}

// settings are the per-request settings, each as a query parameter and
// as a header; a request naming another winnow_ parameter or X-Winnow-
// header is refused (unknownSetting), as config refuses an unknown key.
var settings = [...]struct{ arg, header string }{
	{"winnow_mode", "X-Winnow-Mode"},
	{"winnow_method", "X-Winnow-Method"},
	{"winnow_threshold", "X-Winnow-Threshold"},
	{"winnow_min_confidence", "X-Winnow-Min-Confidence"},
	{"winnow_explain", "X-Winnow-Explain"},
}

// unknownSetting returns an error naming a winnow_ query parameter or an
// X-Winnow- header of the request that is not one of the settings, and
// listing those; nil when there is none. Such a parameter is a typo
// (winnow_minconfidence) that would otherwise change nothing silently:
// winnow strips both before forwarding.
func unknownSetting(ctx *fasthttp.RequestCtx, args *fasthttp.Args, hasArgs bool) error {
	known := func(k []byte, header bool) bool {
		for _, st := range settings {
			if header && strings.EqualFold(string(k), st.header) || !header && string(k) == st.arg {
				return true
			}
		}
		return false
	}
	list := func(header bool) string {
		names := make([]string, len(settings))
		for i, st := range settings {
			names[i] = st.arg
			if header {
				names[i] = st.header
			}
		}
		return strings.Join(names, ", ")
	}
	if hasArgs {
		for k := range args.All() {
			if bytes.HasPrefix(k, []byte("winnow_")) && !known(k, false) {
				return fmt.Errorf("unknown parameter %s: winnow's parameters are %s", k, list(false))
			}
		}
	}
	for k := range ctx.Request.Header.All() {
		if len(k) >= len(ownHeader) && strings.EqualFold(string(k[:len(ownHeader)]), ownHeader) && !known(k, true) {
			return fmt.Errorf("unknown header %s: winnow's headers are %s", k, list(true))
		}
	}
	return nil
}

func (s *Server) params(ctx *fasthttp.RequestCtx) (params, error) {
	p := params{mode: s.o.Mode, decision: s.o.Decision, remove: s.o.Remove}
	hasArgs := hasOwnArgs(ctx)
	form := ownForm(ctx)
	if !hasArgs && form == nil && !hasOwnHeaders(ctx) {
		// The common request names none of winnow's settings: the
		// server's defaults, without looking each one up.
		return p, nil
	}
	args := ctx.QueryArgs()
	if form != nil {
		// A form body's settings count as the query string's do: the
		// two are one request's parameters to Solr too.
		var both fasthttp.Args
		args.CopyTo(&both)
		for k, v := range form.All() {
			if bytes.HasPrefix(k, []byte("winnow_")) {
				both.AddBytesKV(k, v)
			}
		}
		args, hasArgs = &both, true
	}
	if err := unknownSetting(ctx, args, hasArgs); err != nil {
		return p, err
	}
	// get returns a setting and the name it was given under, so an error
	// names what the client wrote; a setting it did not give is named as
	// the request gives its others (a parameter when it has winnow_
	// parameters), so an error's hint names what the client would write.
	// A setting given twice with two values (the parameter and the
	// header, or the parameter repeated) is an error, never one of them
	// silently.
	var conflict error
	get := func(arg, header string) (string, string) {
		var vals [][]byte
		if hasArgs {
			vals = args.PeekMulti(arg)
		}
		h := ctx.Request.Header.Peek(header)
		for _, v := range vals[min(1, len(vals)):] {
			if !bytes.Equal(v, vals[0]) && conflict == nil {
				conflict = fmt.Errorf("%s is given twice, as %q and %q", arg, vals[0], v)
			}
		}
		if len(vals) > 0 && h != nil && !bytes.Equal(h, vals[0]) && conflict == nil {
			conflict = fmt.Errorf("%s %q and header %s %q disagree", arg, vals[0], header, h)
		}
		switch {
		case len(vals) > 0:
			return string(vals[0]), arg
		case h != nil || !hasArgs:
			return string(h), header
		}
		return "", arg
	}
	if m, name := get("winnow_mode", "X-Winnow-Mode"); conflict != nil {
		return p, conflict
	} else if m == "off" {
		p.off = true
	} else if m != "" {
		mode, err := engine.ParseMode(m)
		if err != nil {
			return p, fmt.Errorf("%s %q is not one of %s, off", name, m, strings.Join(engine.Modes, ", "))
		}
		p.mode = mode
	}
	method, methodName := get("winnow_method", "X-Winnow-Method")
	threshold, thresholdName := get("winnow_threshold", "X-Winnow-Threshold")
	conf, confName := get("winnow_min_confidence", "X-Winnow-Min-Confidence")
	if conflict != nil {
		return p, conflict
	}
	ds := similarity.DecisionSettings{Method: method, Threshold: threshold, MinConfidence: conf}
	if ds != (similarity.DecisionSettings{}) {
		fields := similarity.DecisionFields{Method: methodName, Threshold: thresholdName, MinConfidence: confName}
		// The confidence applies to the decision of the request's mode;
		// the other keeps the server's.
		group, remove := ds, ds
		if p.mode.Purpose() == similarity.PurposeRemove {
			group.MinConfidence = ""
		} else {
			remove.MinConfidence = ""
		}
		var err error
		if p.decision, err = DecisionFor(similarity.PurposeGroup, group, fields, s.o.Decision); err != nil {
			return p, err
		}
		if p.remove, err = DecisionFor(similarity.PurposeRemove, remove, fields, s.o.Remove); err != nil {
			return p, err
		}
		p.custom = true
	}
	explain, explainName := get("winnow_explain", "X-Winnow-Explain")
	if conflict != nil {
		return p, conflict
	}
	if explain != "" {
		// The booleans config reads (strconv.ParseBool): 1, 0, true,
		// false, ...; anything else is a 400, never false silently.
		var err error
		if p.explain, err = strconv.ParseBool(explain); err != nil {
			return p, fmt.Errorf("%s %q is not a boolean (1, 0, true or false)", explainName, explain)
		}
	}
	return p, nil
}

// DecisionFor returns the decision of purpose p that a request's settings
// name (similarity.ParseDecision, the parser of config's decision.* keys
// too), keeping def's minimum length; unset settings keep def. An error
// names the parameter as f gives it (the query parameter or header the
// client wrote).
func DecisionFor(p similarity.Purpose, s similarity.DecisionSettings, f similarity.DecisionFields, def similarity.Decision) (similarity.Decision, error) {
	if s == (similarity.DecisionSettings{}) {
		return def, nil
	}
	if s.Method == "" && s.Threshold == "" {
		// Only a confidence: the server's method with it. A server whose
		// method is a paper method rejects it, as its config would.
		if !def.IsModel() {
			return def, fmt.Errorf("%s: %q does not apply to the server's method, which gives no calibrated probability", f.MinConfidence, s.MinConfidence)
		}
		d, err := similarity.ParseDecision(p, s, f, def.MinTokens)
		if err == nil {
			// A calibrated decision (decision.calibration) keeps its
			// models under the request's confidence.
			d.Models = def.Models
		}
		return d, err
	}
	return similarity.ParseDecision(p, s, f, def.MinTokens)
}

// hasOwnArgs reports whether the request's query holds a winnow_
// parameter. The raw query settles most requests; one with a percent
// escape is read key by key, so an encoded key (winnow%5Fmode) is read
// and stripped like a plain one, not forwarded to the engine unread.
func hasOwnArgs(ctx *fasthttp.RequestCtx) bool {
	qs := ctx.URI().QueryString()
	if bytes.Contains(qs, []byte("winnow_")) {
		return true
	}
	if bytes.IndexByte(qs, '%') < 0 {
		return false
	}
	for k := range ctx.QueryArgs().All() {
		if bytes.HasPrefix(k, []byte("winnow_")) {
			return true
		}
	}
	return false
}

// hasOwnHeaders reports whether the request has an X-Winnow- header.
func hasOwnHeaders(ctx *fasthttp.RequestCtx) bool {
	for k := range ctx.Request.Header.All() {
		if len(k) >= len(ownHeader) && strings.EqualFold(string(k[:len(ownHeader)]), ownHeader) {
			return true
		}
	}
	return false
}

// methodName is method as a string, the common ones without a copy.
func methodName(method []byte) string {
	switch string(method) {
	case fasthttp.MethodGet:
		return fasthttp.MethodGet
	case fasthttp.MethodPost:
		return fasthttp.MethodPost
	case fasthttp.MethodHead:
		return fasthttp.MethodHead
	}
	return string(method)
}

// clientRequest is the client's request as the adapters rewrite it: the
// path with winnow's own query parameters stripped, and the body (a
// form's stripped of them too: [ownForm]). Its
// headers stay in ctx: [upstream.do] copies them from there.
func clientRequest(ctx *fasthttp.RequestCtx) engine.Request {
	r := engine.Request{Method: methodName(ctx.Method())}
	uri := ctx.Request.URI()
	qs := uri.QueryString()
	if len(qs) == 0 || !hasOwnArgs(ctx) {
		// One string for the path and query: a search's path is read on
		// every request.
		var room [256]byte
		b := append(room[:0], uri.Path()...)
		if len(qs) > 0 {
			b = append(append(b, '?'), qs...)
		}
		r.Path = string(b)
	} else {
		r.Path = string(uri.Path())
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
	if form := ownForm(ctx); form != nil {
		var rest fasthttp.Args
		for k, v := range form.All() {
			if !bytes.HasPrefix(k, []byte("winnow_")) {
				rest.AddBytesKV(k, v)
			}
		}
		r.Body = rest.AppendBytes(nil)
	} else if body := ctx.PostBody(); len(body) > 0 {
		r.Body = append([]byte(nil), body...)
	}
	return r
}

// ownForm returns the parameters of a POSTed form body that holds a
// winnow_ parameter, nil otherwise. A Solr search may come as a form
// (SolrJ's METHOD.POST puts every parameter in the body, and Solr reads
// them as the query string's): winnow's settings there are read and
// stripped as in the query string, not sent to the engine unread.
func ownForm(ctx *fasthttp.RequestCtx) *fasthttp.Args {
	// "winnow" finds an escaped key (winnow%5Fmode) too; a body without
	// it is not parsed.
	if !ctx.IsPost() || !bytes.Contains(ctx.PostBody(), []byte("winnow")) {
		return nil
	}
	form := ctx.PostArgs() // empty unless the body is a form
	for k := range form.All() {
		if bytes.HasPrefix(k, []byte("winnow_")) {
			return form
		}
	}
	return nil
}

package engine

import (
	"bytes"
	"errors"
	"fmt"
)

// SubSearch is one search of an Elasticsearch or OpenSearch multi-search
// (_msearch) body: its header line and its body line, without their
// newlines. Both alias the body they were split from.
type SubSearch struct {
	Header, Body []byte
	// Cursor reports a body that pages by a point in time or
	// search_after: it is refined within the page the engine gives,
	// never over-fetched.
	Cursor bool
}

// ErrMsearch matches a multi-search body or answer winnow cannot split
// into its searches; the request or answer then passes as it is.
var ErrMsearch = errors.New("engine: msearch")

// SplitMsearch splits an NDJSON multi-search body into its searches: a
// header line (an object, "{}" for none) and a body line each, blank
// lines skipped; each line must be one JSON object.
func SplitMsearch(b []byte) ([]SubSearch, error) {
	var lines [][]byte
	for line := range bytes.Lines(b) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if line[0] != '{' || checkDoc(line) != nil {
			return nil, fmt.Errorf("%w: line %d is not one JSON object", ErrMsearch, len(lines)+1)
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 || len(lines)%2 != 0 {
		return nil, fmt.Errorf("%w: %d lines, want header and body pairs", ErrMsearch, len(lines))
	}
	subs := make([]SubSearch, len(lines)/2)
	for i := range subs {
		h, body := lines[2*i], lines[2*i+1]
		pit, after, _, _ := esSearchBody(body)
		subs[i] = SubSearch{Header: h, Body: body, Cursor: pit || after}
	}
	return subs, nil
}

// AppendMsearch appends subs to dst as an NDJSON multi-search body.
func AppendMsearch(dst []byte, subs []SubSearch) []byte {
	for _, s := range subs {
		dst = append(dst, s.Header...)
		dst = append(dst, '\n')
		dst = append(dst, s.Body...)
		dst = append(dst, '\n')
	}
	return dst
}

// MsearchResponses returns the byte ranges ([start, end) pairs) in an
// Elasticsearch or OpenSearch multi-search answer b of the members of
// its "responses" array, one per sub-search in order.
func MsearchResponses(b []byte) ([][2]int, error) {
	if err := checkDoc(b); err != nil {
		return nil, fmt.Errorf("%w: answer: %v", ErrMsearch, err)
	}
	rs, ok := field(b, span{skipWS(b, 0), len(b)}, "responses")
	if !ok || b[rs.start] != '[' {
		return nil, fmt.Errorf("%w: answer has no responses array", ErrMsearch)
	}
	var out [][2]int
	for _, e := range elements(b, rs) {
		if b[e.start] != '{' {
			return nil, fmt.Errorf("%w: a response is not an object", ErrMsearch)
		}
		out = append(out, [2]int{e.start, e.end})
	}
	return out, nil
}

// MsearchFailed reports whether a sub-answer of a multi-search is the
// engine's error for that search (an "error" member), which passes as
// the engine gave it.
func MsearchFailed(sub []byte) bool {
	_, ok := field(sub, span{skipWS(sub, 0), len(sub)}, "error")
	return ok
}

// AppendUnrefined appends sub, a sub-answer of a multi-search (a JSON
// object), with a member "winnow":{"refined":"no","reason":reason} at
// its end: the sub-answer is the engine's own, not refined, for reason.
func AppendUnrefined(dst, sub []byte, reason string) []byte {
	end := bytes.LastIndexByte(sub, '}')
	if end < 0 {
		return append(dst, sub...)
	}
	dst = append(dst, sub[:end]...)
	if len(bytes.TrimSpace(sub[1:end])) > 0 {
		dst = append(dst, ',')
	}
	dst = append(dst, `"winnow":{"refined":"no","reason":`...)
	dst = appendJSONString(dst, reason)
	return append(dst, "}}"...)
}

package engine

import (
	"fmt"
	"strconv"
)

// Partial says why an answer holds only part of the engine's results,
// "" when it is whole: Elasticsearch's and OpenSearch's failed shards
// ("1 of 2 shards failed: query_shard_exception: failed to create
// query: ...", an index of an alias that maps a field otherwise) or
// timed_out, and Solr's partialResults (a timeAllowed or another limit
// that cut the search, with its partialResultsDetails). Such an answer is
// a success (200) that a reader would take for all there is. It reads
// the answer again, so it is for callers that need it (the metasearch),
// not for every parse.
func (p *Parsed) Partial() string {
	if p.xml || len(p.body) == 0 {
		return ""
	}
	b := p.body
	root := span{skipWS(b, 0), len(b)}
	switch p.kind {
	case kindES:
		var msg string
		if s, ok := path(b, root, "_shards.failed"); ok {
			if n, _ := number(b, s); n > 0 {
				total := "?"
				if t, ok := path(b, root, "_shards.total"); ok {
					if f, ok := number(b, t); ok {
						total = strconv.Itoa(int(f))
					}
				}
				msg = fmt.Sprintf("%d of %s shards failed", int(n), total)
				if r, ok := path(b, root, "_shards.failures.0.reason"); ok {
					if why := esReason(b, r); why != "" {
						msg += ": " + why
					}
				}
			}
		}
		if s, ok := path(b, root, "timed_out"); ok && string(b[s.start:s.end]) == "true" {
			if msg != "" {
				msg += "; "
			}
			msg += "timed out"
		}
		return msg
	case kindSolr:
		s, ok := path(b, root, "responseHeader.partialResults")
		if !ok || string(b[s.start:s.end]) != "true" {
			return ""
		}
		msg := "partial results"
		if d, ok := path(b, root, "responseHeader.partialResultsDetails"); ok {
			if why := text(b, d, false); why != "" {
				msg += ": " + why
			}
		}
		return msg
	}
	return ""
}

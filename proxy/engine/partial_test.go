package engine

import "testing"

// TestPartial reads the answers real engines gave when they searched only
// part of what was asked (captured from Elasticsearch 8.19 over an index
// whose body is a long beside one whose body is text, with df=body; Solr
// 9 with timeAllowed=0), and whole answers.
func TestPartial(t *testing.T) {
	for _, tt := range []struct {
		kind, body, want string
	}{
		{"elasticsearch", `{"took":4,"timed_out":false,"_shards":{"total":2,"successful":1,"skipped":0,"failed":1,"failures":[{"shard":0,"index":"metahunt_num","node":"i9WsgDSGRrK6oOiqOGPjgg","reason":{"type":"query_shard_exception","reason":"failed to create query: For input string: \"benchmark\"","index_uuid":"yvJSzD1cT8mwO3Pqvjw4sw","index":"metahunt_num","caused_by":{"type":"number_format_exception","reason":"For input string: \"benchmark\""}}}]},"hits":{"total":{"value":5,"relation":"eq"},"max_score":1.2,"hits":[{"_index":"metahunt_explore","_id":"a","_score":1.2,"_source":{"url":"http://example.org/a"}}]}}`,
			`1 of 2 shards failed: query_shard_exception: failed to create query: For input string: "benchmark"`},
		{"opensearch", `{"took":1,"timed_out":true,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}`, "timed out"},
		{"elasticsearch", `{"took":1,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}`, ""},
		{"solr", `{"responseHeader":{"partialResults":true,"partialResultsDetails":"Limits exceeded! ([prepare] Limit(s) exceeded prior to query in [query, facet, facet_module, mlt, highlight, stats, expand, terms, debug]): Query limits: [TimeAllowedLimit:LIMIT EXCEEDED]","status":0,"QTime":2,"params":{"q":"benchmark","timeAllowed":"0"}},"response":{"numFound":0,"start":0,"numFoundExact":true,"docs":[]}}`,
			"partial results: Limits exceeded! ([prepare] Limit(s) exceeded prior to query in [query, facet, facet_module, mlt, highlight, stats, expand, terms, debug]): Query limits: [TimeAllowedLimit:LIMIT EXCEEDED]"},
		{"solr", `{"responseHeader":{"partialResults":true},"response":{"numFound":0,"start":0,"docs":[]}}`, "partial results"},
		{"solr", `{"responseHeader":{"status":0,"QTime":1},"response":{"numFound":0,"start":0,"docs":[]}}`, ""},
		{"searxng", `{"query":"x","results":[],"unresponsive_engines":[]}`, ""},
	} {
		p, err := mustNew(t, Config{Kind: tt.kind}).Parse([]byte(tt.body), "application/json")
		if err != nil {
			t.Fatalf("%s: %v", tt.kind, err)
		}
		if got := p.Partial(); got != tt.want {
			t.Errorf("%s %.60s...: Partial() = %q, want %q", tt.kind, tt.body, got, tt.want)
		}
	}
	p, err := mustNew(t, Config{Kind: "opensearch-rss"}).Parse(read(t, "omega-opensearch.xml"), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Partial(); got != "" {
		t.Errorf("Omega's RSS: Partial() = %q, want none", got)
	}
}

package engine

import "testing"

// BenchmarkGateCheck is the gate's look at an Elasticsearch search with
// a body, which the proxy's route memo does not keep: a plain search,
// whose cost the cursor seal must leave as it was, and a point in time
// search, whose body the gate writes again with the ID unsealed.
//
//	go test -run '^$' -bench GateCheck -count 5 ./proxy/engine/
func BenchmarkGateCheck(b *testing.B) {
	g := NewGate(Config{Kind: "elasticsearch"})
	plain := GateRequest{Method: "POST", URI: "/idx/_search?size=10", ContentType: "application/json",
		Body: []byte(`{"query":{"bool":{"must":[{"match":{"body":"benchmark tips"}}],"filter":[{"term":{"lang":"en"}}]}},"size":10,"from":20,"_source":["url","title"]}`)}
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Check(plain); err != nil {
				b.Fatal(err)
			}
		}
	})
}

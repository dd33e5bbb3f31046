package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkParseRender measures the proxy's hot path on a 50-hit
// Elasticsearch answer (built from the real hit in es7-search.json):
// Parse, then Render of a 10-hit page in each mode.
func BenchmarkParseRender(b *testing.B) {
	body := esBody(b, 50)
	a := mustNew(b, Config{Kind: "elasticsearch"})
	marks := make([]Mark, 50)
	for i := range marks {
		marks[i] = Mark{Cluster: "c", Winner: i / 3 * 3, Relation: "duplicate", Explain: "same text"}
	}
	for _, m := range []Mode{Remove, Group, Annotate} {
		b.Run(m.String(), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				p, err := a.Parse(body, "application/json")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := a.Render(nil, p, marks, m, Window{Size: 10}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseFeed measures Parse and Render of Xapian Omega's feed.
func BenchmarkParseFeed(b *testing.B) {
	body := read(b, "omega-opensearch.xml")
	a := mustNew(b, Config{Kind: "opensearch-rss"})
	marks := []Mark{{Winner: 0}, {Winner: 0}, {Winner: 2}, {Winner: -1}, {Winner: 2}}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p, err := a.Parse(body, "application/xml")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Render(nil, p, marks, Annotate, Window{Size: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseRenderCompact is BenchmarkParseRender/remove on the same
// answer without indentation, as Elasticsearch sends it without ?pretty.
func BenchmarkParseRenderCompact(b *testing.B) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, esBody(b, 50)); err != nil {
		b.Fatal(err)
	}
	body := buf.Bytes()
	a := mustNew(b, Config{Kind: "elasticsearch"})
	marks := make([]Mark, 50)
	for i := range marks {
		marks[i] = Mark{Cluster: "c", Winner: i / 3 * 3, Relation: "duplicate", Explain: "same text"}
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		p, err := a.Parse(body, "application/json")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := a.Render(nil, p, marks, Remove, Window{Size: 10}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseURLOnly measures the transparent path's parse of a 50-hit
// Elasticsearch answer: only URLs and texts are read, the rest validated
// and skipped. "es7" is [esBody]'s pretty-printed answer, "demo" the
// demo engine's compact one (53 hits, 28 KB: what `winnow bench` makes
// the proxy parse).
func BenchmarkParseURLOnly(b *testing.B) {
	a := mustNew(b, Config{Kind: "elasticsearch", URLOnly: true})
	for _, c := range []struct {
		name string
		body []byte
	}{{"es7", esBody(b, 50)}, {"demo", read(b, "demo-es-53.json")}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := a.Parse(c.body, "application/json"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRenderGroupSparse renders a 50-hit Elasticsearch answer, parsed
// once, in Group mode with few groups, as real answers have them: hits 3
// and 7 duplicates of hit 0, hit 12 of hit 10, the other hits their own
// winners.
func BenchmarkRenderGroupSparse(b *testing.B) {
	body := esBody(b, 50)
	a := mustNew(b, Config{Kind: "elasticsearch"})
	marks := make([]Mark, 50)
	for i := range marks {
		marks[i] = Mark{Cluster: "c", Winner: i, Relation: "distinct"}
	}
	for _, d := range [][2]int{{3, 0}, {7, 0}, {12, 10}} {
		marks[d[0]] = Mark{Cluster: "c", Winner: d[1], Relation: "duplicate", Explain: "same text"}
	}
	p, err := a.Parse(body, "application/json")
	if err != nil {
		b.Fatal(err)
	}
	benchRenderGroup(b, a, p, marks)
}

// benchRenderGroup renders p in group mode with marks, a 50-hit window,
// once an iteration, into a reused buffer.
func benchRenderGroup(b *testing.B, a Adapter, p *Parsed, marks []Mark) {
	out := make([]byte, 0, 2*len(p.Body()))
	b.ReportAllocs()
	b.SetBytes(int64(len(p.Body())))
	for b.Loop() {
		var err error
		if out, err = a.Render(out[:0], p, marks, Group, Window{Size: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderGroupDemo renders the demo engine's 53-hit answer (what
// `winnow bench` makes the proxy render) in group mode with marks shaped
// as the proxy's: every odd hit a duplicate of the hit before it, with
// a cluster ID, relation, decision and probability, and an explanation
// ("explain", as winnow_explain asks) or none ("compact", the default
// group answer).
func BenchmarkRenderGroupDemo(b *testing.B) {
	body := read(b, "demo-es-53.json")
	a := mustNew(b, Config{Kind: "elasticsearch", URLOnly: true})
	p, err := a.Parse(body, "application/json")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, explain string
	}{{"compact", ""}, {"explain", demoWhy}} {
		marks := demoGroupMarks(len(p.Results), c.explain)
		b.Run(c.name, func(b *testing.B) { benchRenderGroup(b, a, p, marks) })
	}
}

// demoWhy is a duplicate's explanation as winnow_explain shows it.
const demoWhy = "duplicate: simhash distance 1 <= 16 (candidate), P(near-duplicate) 0.954 >= 0.95 [jaccard 0.96 (+8.3), intercept -5.3] (accepted without LCS)"

// demoGroupMarks returns BenchmarkRenderGroupDemo's marks for n hits.
func demoGroupMarks(n int, explain string) []Mark {
	marks := make([]Mark, n)
	for i := range marks {
		cluster := fmt.Sprintf("%016x", i/2*7919)
		if i%2 == 0 {
			marks[i] = Mark{Cluster: cluster, Winner: i}
		} else {
			marks[i] = Mark{Cluster: cluster, Winner: i - 1, Relation: "duplicate", Explain: explain, Decision: "group", Probability: 0.9538}
		}
	}
	return marks
}

package engine

import "testing"

// The benchmarks below are BenchmarkParseURLOnly/demo and
// BenchmarkRenderGroupDemo for counting instructions with callgrind's
// --toggle-collect on one function (docs/performance.md, "Cheaper
// results and group rendering"). They run in the benchmark's own
// goroutine (no b.Run) with its stack grown first: a stack growth inside
// the toggled function restarts it on the new stack, which callgrind
// counts as a second call that never returns, so it would go on
// counting after the function returned. Timings are the other
// benchmarks'.

// growStack grows the goroutine's stack to over n*4 KiB.
//
//go:noinline
func growStack(n int) byte {
	var pad [4096]byte
	pad[n%len(pad)] = byte(n)
	if n > 0 {
		return growStack(n-1) + pad[n*7%len(pad)]
	}
	return pad[0]
}

func BenchmarkCallgrindParseDemo(b *testing.B) {
	growStack(64)
	a := mustNew(b, Config{Kind: "elasticsearch", URLOnly: true})
	body := read(b, "demo-es-53.json")
	for b.Loop() {
		if _, err := a.Parse(body, "application/json"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallgrindParseSmall parses the engines' answers of a hit or
// two in testdata, each with its kind's adapter, once an iteration.
func BenchmarkCallgrindParseSmall(b *testing.B) {
	growStack(64)
	var as []Adapter
	var bodies [][]byte
	for _, c := range [][2]string{{"solr", "solr-select.json"}, {"solr", "solr-highlight.json"},
		{"searxng", "searxng-webapp-test.json"}, {"elasticsearch", "es7-search.json"}, {"elasticsearch", "opensearch-search.json"}} {
		as = append(as, mustNew(b, Config{Kind: c[0]}))
		bodies = append(bodies, read(b, c[1]))
	}
	for b.Loop() {
		for i, a := range as {
			if _, err := a.Parse(bodies[i], "application/json"); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkCallgrindParseMixed parses an answer of 50 hits whose members
// come each in another order than the last's (mixedHits).
func BenchmarkCallgrindParseMixed(b *testing.B) {
	growStack(64)
	a := mustNew(b, Config{Kind: "elasticsearch"})
	body := mixedHits(50)
	for b.Loop() {
		if _, err := a.Parse(body, "application/json"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallgrindRenderCompact(b *testing.B) { callgrindRender(b, "") }

func BenchmarkCallgrindRenderExplain(b *testing.B) { callgrindRender(b, demoWhy) }

func callgrindRender(b *testing.B, explain string) {
	growStack(64)
	a := mustNew(b, Config{Kind: "elasticsearch", URLOnly: true})
	p, err := a.Parse(read(b, "demo-es-53.json"), "application/json")
	if err != nil {
		b.Fatal(err)
	}
	marks := demoGroupMarks(len(p.Results), explain)
	out := make([]byte, 0, 2*len(p.Body()))
	for b.Loop() {
		if out, err = a.Render(out[:0], p, marks, Group, Window{Size: 50}); err != nil {
			b.Fatal(err)
		}
	}
}

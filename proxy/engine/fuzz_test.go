package engine

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// FuzzParseJSON checks that no JSON adapter panics on any input, and that
// Render of whatever parses yields a body that parses again.
func FuzzParseJSON(f *testing.F) {
	for _, name := range []string{"es7-search.json", "es-error.json", "opensearch-search.json", "solr-select.json",
		"solr-highlight.json", "solr-error.json", "searxng-webapp-test.json"} {
		f.Add(read(f, name))
	}
	f.Add([]byte(`{"hits":{"hits":[{"_source":{"url":"\u00e9\ud800"}}]}}`))
	f.Add([]byte(`[[[[[[[[`))
	for _, b := range brokenDemo(f, 4096) {
		f.Add(b)
	}
	var adapters []Adapter
	for _, c := range []Config{{Kind: "elasticsearch"}, {Kind: "elasticsearch", URLOnly: true}, {Kind: "solr"}, {Kind: "searxng"},
		{Kind: "json", Fields: FieldPaths{Results: "results", Total: "number_of_results", URL: "parsed_url.1"}}} {
		adapters = append(adapters, mustNew(f, c))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, a := range adapters {
			p, err := a.Parse(body, "application/json")
			if err != nil {
				continue
			}
			marks := make([]Mark, len(p.Results))
			for i := range marks {
				marks[i] = Mark{Cluster: "c", Winner: i / 2 * 2, Relation: "duplicate", Explain: "\x00\"<&>"}
			}
			for _, m := range []Mode{Remove, Group, Annotate} {
				out, err := a.Render(nil, p, marks, m, Window{Size: 3})
				if err != nil {
					t.Fatalf("%s Render %v: %v", a.Name(), m, err)
				}
				if _, err := a.Parse(out, ""); err != nil {
					t.Fatalf("%s: rendered %v body does not parse: %v\n%q\n%q", a.Name(), m, err, body, out)
				}
			}
		}
	})
}

// FuzzParseXML checks that the feed adapter never panics and that what it
// renders parses again.
func FuzzParseXML(f *testing.F) {
	for _, name := range []string{"omega-opensearch.xml", "opensearch-spec-rss.xml", "opensearch-spec-atom.xml", "feedgen-atom.xml", "feedgen-rss.xml"} {
		f.Add(read(f, name))
	}
	f.Add([]byte(`<rss><channel><item><link>a</link><item><link>b</link></item></item></channel></rss>`))
	a := mustNew(f, Config{Kind: "opensearch-rss"})
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := a.Parse(body, "application/xml")
		if err != nil {
			return
		}
		marks := make([]Mark, len(p.Results))
		for i := range marks {
			marks[i] = Mark{Cluster: "c", Winner: i / 2 * 2, Explain: "<&\">"}
		}
		for _, m := range []Mode{Remove, Group, Annotate} {
			out, err := a.Render(nil, p, marks, m, Window{Size: 2})
			if err != nil {
				t.Fatalf("Render %v: %v", m, err)
			}
			if _, err := a.Parse(out, ""); err != nil {
				t.Fatalf("rendered %v feed does not parse: %v\n%q\n%q", m, err, body, out)
			}
		}
	})
}

// brokenDemo returns corrupted copies of the demo engine's answer, each
// broken inside a member the parse does not select (a hit's title or
// highlight), so only a parse that checks what it skips refuses them,
// and the answer cut at every step-th byte.
func brokenDemo(t testing.TB, step int) map[string][]byte {
	body := read(t, "demo-es-53.json")
	out := map[string][]byte{}
	edit := func(name, old, new string) {
		i := bytes.Index(body, []byte(old))
		if i < 0 {
			t.Fatalf("%s: %q not in the demo answer", name, old)
		}
		b := append(append(append([]byte(nil), body[:i]...), new...), body[i+len(old):]...)
		out[name] = b
	}
	edit("quote escaped in a skipped string", `Format — LLVM 15 documentation"`, `Format — LLVM 15 documentation\"`)
	edit("highlight array closed by a brace", `are"]}},`, `are"}}},`)
	edit("bare word in a skipped array", `"text":["`, `"text":[tru,"`)
	edit("missing comma in a skipped array", `"text":["`, `"text":[1 "`)
	edit("missing colon in a skipped object", `"highlight":{"text":`, `"highlight":{"text" `)
	edit("control byte outside a string", `"release":"22"}`, "\"release\":\"22\"\x01}")
	for n := 0; n < len(body)-1; n += step {
		out[fmt.Sprintf("cut at %d", n)] = body[:n]
	}
	return out
}

// TestParseRefusesBrokenAnswers: an answer broken anywhere, in the
// members the refinement reads or in those it copies byte for byte, is
// refused as malformed (the proxy then passes the client's own request
// through), never parsed into a rendering that copies the break.
func TestParseRefusesBrokenAnswers(t *testing.T) {
	for _, urlOnly := range []bool{false, true} {
		a := mustNew(t, Config{Kind: "elasticsearch", URLOnly: urlOnly})
		for name, b := range brokenDemo(t, 7) {
			if _, err := a.Parse(b, "application/json"); !errors.Is(err, ErrMalformed) {
				t.Errorf("URLOnly %v, %s: Parse = %v, want ErrMalformed", urlOnly, name, err)
			}
		}
	}
}

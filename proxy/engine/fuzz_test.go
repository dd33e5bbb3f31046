package engine

import "testing"

// FuzzParseJSON checks that no JSON adapter panics on any input, and that
// Render of whatever parses yields a body that parses again.
func FuzzParseJSON(f *testing.F) {
	for _, name := range []string{"es7-search.json", "es-error.json", "opensearch-search.json", "solr-select.json",
		"solr-highlight.json", "solr-error.json", "searxng-webapp-test.json"} {
		f.Add(read(f, name))
	}
	f.Add([]byte(`{"hits":{"hits":[{"_source":{"url":"\u00e9\ud800"}}]}}`))
	f.Add([]byte(`[[[[[[[[`))
	var adapters []Adapter
	for _, c := range []Config{{Kind: "elasticsearch"}, {Kind: "solr"}, {Kind: "searxng"},
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
	for _, name := range []string{"omega-opensearch.xml", "opensearch-spec-rss.xml", "opensearch-spec-atom.xml"} {
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

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/proxy/engine"
)

// defaultIndex is the index (Solr core) Run loads the sample into on a
// real engine.
const defaultIndex = "winnow_bench"

// backend is the engine the targets stand in front of: the demo engine
// (kind "") or a real one.
type backend struct {
	kind  string // "", "opensearch", "elasticsearch" or "solr"
	index string
	// origin is the engine's scheme and host; path its search path.
	origin, path string
	// tagged: the index carries winnow index's tags, which the queries
	// ask for.
	tagged bool
}

// demoBackend is the embedded demo engine's, with its Elasticsearch API.
func demoBackend(origin string) backend {
	return backend{origin: origin, path: "/llvm/_search"}
}

// realBackend is a real engine at base (as scripts/engine prints it:
// http://127.0.0.1:PORT, with /solr for Solr).
func realBackend(kind, base, index string) (backend, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return backend{}, fmt.Errorf("bench: engine %q: want an http URL", base)
	}
	b := backend{kind: kind, index: index, origin: u.Scheme + "://" + u.Host}
	prefix := strings.TrimSuffix(u.Path, "/")
	switch kind {
	case "opensearch", "elasticsearch":
		b.path = prefix + "/" + index + "/_search"
	case "solr":
		if prefix == "" {
			prefix = "/solr"
		}
		b.path = prefix + "/" + index + "/select"
	default:
		return backend{}, fmt.Errorf("bench: engine kind %q: want opensearch, elasticsearch or solr", kind)
	}
	return b, nil
}

func (b backend) solr() bool { return b.kind == "solr" }

// indexURL is the index's address as `winnow index` takes it: the
// search path without its endpoint.
func (b backend) indexURL() string {
	return b.origin + path.Dir(b.path)
}

// fields are the stored fields the queries ask for, comma-separated:
// those winnow reads (url, title) and, on a tagged index, the tags.
func (b backend) fields() string {
	f := "url,title"
	if b.tagged {
		f += ",winnow_group,winnow_winner,winnow_removable"
	}
	return f
}

// adapter is the proxy's engine configuration for b.
func (b backend) adapter() engine.Config {
	if b.solr() {
		return engine.Config{Kind: "solr", Path: b.path}
	}
	return engine.Config{Kind: "elasticsearch", Path: b.path}
}

// queryURLs are the queries on base (a target's address). On a real
// engine they ask for the fields winnow reads only (url, title), not
// the stored page and text, for both targets alike.
func (b backend) queryURLs(base string, size int) []string {
	urls := make([]string, len(Queries))
	for i, q := range Queries {
		switch {
		case b.kind == "":
			urls[i] = base + b.path + "?q=" + url.QueryEscape(q) + "&size=" + strconv.Itoa(size)
		case b.solr():
			urls[i] = base + b.path + "?" + url.Values{"q": {q}, "rows": {strconv.Itoa(size)}, "fl": {"id,score," + b.fields()}}.Encode()
		default:
			urls[i] = base + b.path + "?" + url.Values{"q": {q}, "size": {strconv.Itoa(size)}, "_source_includes": {b.fields()}}.Encode()
		}
	}
	return urls
}

// collapseURLs are the same queries with the engine's own collapsing on
// the page keyword (one hit per near-duplicate cluster of the sample):
// Solr's {!collapse field=page}, OpenSearch's and Elasticsearch's
// collapse, sent as a GET with the body in the source parameter.
func (b backend) collapseURLs(base string, size int) []string {
	urls := make([]string, len(Queries))
	for i, q := range Queries {
		if b.solr() {
			urls[i] = base + b.path + "?" + url.Values{"q": {q}, "rows": {strconv.Itoa(size)}, "fl": {"id,url,title,score"},
				"fq": {"{!collapse field=page}"}}.Encode()
			continue
		}
		body, _ := json.Marshal(map[string]any{
			"size": size, "_source": []string{"url", "title"},
			"query":    map[string]any{"query_string": map[string]any{"query": q}},
			"collapse": map[string]any{"field": "page"},
		})
		urls[i] = base + b.path + "?" + url.Values{"source": {string(body)}, "source_content_type": {"application/json"}}.Encode()
	}
	return urls
}

// load indexes the sample into the real engine, its pages' URLs on the
// demo engine at pagesBase (which serves them for winnow to fetch).
func (b backend) load(ctx context.Context, base, pagesBase string) error {
	docs, err := realengine.Sample(pagesBase)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := realengine.Index(ctx, b.kind, base, b.index, docs); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// solrHits is the part of a Solr answer the bench checks: in group mode
// a winner's duplicates are in the expanded section, by its id.
type solrHits struct {
	Response struct {
		Docs []struct {
			Winnow *struct{} `json:"_winnow"`
		} `json:"docs"`
	} `json:"response"`
	Expanded map[string]struct {
		Docs []json.RawMessage `json:"docs"`
	} `json:"expanded"`
}

// countSolr is countHits for a Solr answer.
func countSolr(body []byte) (results, marked int, err error) {
	var a solrHits
	if err := json.Unmarshal(body, &a); err != nil {
		return 0, 0, err
	}
	for _, d := range a.Response.Docs {
		results++
		if d.Winnow != nil {
			marked++
		}
	}
	for _, g := range a.Expanded {
		results += len(g.Docs)
		marked += len(g.Docs)
	}
	return results, marked, nil
}

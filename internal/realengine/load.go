package realengine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/canon"
	"github.com/winnow-search/winnow/corpus/sample"
)

// Doc is one document [Load] indexes. ID is the engine's document id;
// the other fields are stored under their lower-case names (url, page,
// title, body, html). Empty fields are left out.
type Doc struct {
	ID string
	// URL is where the page is served, the address winnow canonicalizes.
	URL string
	// Page names the near-duplicate cluster the document belongs to (the
	// same for one page in every release of the sample), a keyword.
	Page  string
	Title string
	// Body is the text searched: the page's main text, as the demo
	// engine indexes it.
	Body string
	// HTML is the page itself, stored but not searched.
	HTML string
}

// Sample returns the demo's 53 LLVM pages (corpus/sample) as documents:
// ID the sample ID ("sample://llvm/13/FaultMaps"), Page its page name
// ("FaultMaps"), Title its <title>, Body its canonical main text
// (canon.ContentMain, what internal/demo indexes) and HTML the page. With
// pagesBase (the address of a demo engine, which serves the pages under
// /pages/) URL is the page's address there, as in [sample.DocsAt];
// without it URL is empty.
func Sample(pagesBase string) ([]Doc, error) {
	docs := sample.Docs()
	if pagesBase != "" {
		docs = sample.DocsAt(pagesBase)
	}
	var out []Doc
	for d, err := range docs {
		if err != nil {
			return nil, fmt.Errorf("realengine: %w", err)
		}
		cd, err := canon.HTML(d.Body, d.ContentType, canon.Options{Content: canon.ContentMain})
		if err != nil {
			return nil, fmt.Errorf("realengine: %s: %w", d.ID, err)
		}
		out = append(out, Doc{
			ID:    d.ID,
			URL:   d.URL,
			Page:  sample.Page(d.ID),
			Title: strings.TrimSpace(cd.Title),
			Body:  cd.Text,
			HTML:  string(d.Body),
		})
	}
	return out, nil
}

// fields is d as the engines store it.
func (d Doc) fields() map[string]any {
	m := map[string]any{"id": d.ID}
	for k, v := range map[string]string{"url": d.URL, "page": d.Page, "title": d.Title, "body": d.Body, "html": d.HTML} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// indexDefinition is the OpenSearch and Elasticsearch index: one shard,
// no replica (green on one node), the fields of the shipped Solr schema.
const indexDefinition = `{
  "settings": {"number_of_shards": 1, "number_of_replicas": 0},
  "mappings": {"properties": {
    "id": {"type": "keyword"},
    "url": {"type": "keyword"},
    "page": {"type": "keyword"},
    "title": {"type": "text"},
    "body": {"type": "text"},
    "html": {"type": "text", "index": false},
    "winnow_group": {"type": "keyword"},
    "winnow_winner": {"type": "boolean"},
    "winnow_removable": {"type": "boolean"},
    "winnow_probability": {"type": "float"}
  }}
}`

// solrConfigSet is the configset scripts/solr-launcher installs in the
// Solr home.
const solrConfigSet = "winnow"

// Load creates index on the engine of kind at base (an OpenSearch or
// Elasticsearch index, or a Solr core from the shipped configset),
// deleting an existing one of that name first, indexes docs and
// refreshes (commits), so that every document is searchable when Load
// returns. Any error fails the test.
func Load(t testing.TB, kind, base, index string, docs []Doc) {
	t.Helper()
	if index == "" || strings.ContainsAny(index, "/?#&% ") {
		t.Fatalf("realengine: index name %q: want a plain name", index)
	}
	base = strings.TrimSuffix(base, "/")
	switch kind {
	case "opensearch", "elasticsearch":
		if _, status := request(t, http.MethodDelete, base+"/"+index, "", nil); status != http.StatusOK && status != http.StatusNotFound {
			t.Fatalf("realengine: delete index %s: status %d", index, status)
		}
		Do(t, http.MethodPut, base+"/"+index, "application/json", []byte(indexDefinition))
		var nd bytes.Buffer
		enc := json.NewEncoder(&nd)
		for _, d := range docs {
			must(t, enc.Encode(map[string]any{"index": map[string]string{"_index": index, "_id": d.ID}}))
			must(t, enc.Encode(d.fields()))
		}
		if len(docs) > 0 {
			var r struct {
				Errors bool              `json:"errors"`
				Items  []json.RawMessage `json:"items"`
			}
			decode(t, Do(t, http.MethodPost, base+"/_bulk", "application/x-ndjson", nd.Bytes()), &r)
			if r.Errors {
				t.Fatalf("realengine: bulk load into %s: errors, first item %s", index, firstError(r.Items))
			}
		}
		Do(t, http.MethodPost, base+"/"+index+"/_refresh", "", nil)
	case "solr":
		q := url.Values{"action": {"UNLOAD"}, "core": {index}, "deleteInstanceDir": {"true"}}
		if exists := solrCoreExists(t, base, index); exists {
			Do(t, http.MethodGet, base+"/admin/cores?"+q.Encode(), "", nil)
		}
		q = url.Values{"action": {"CREATE"}, "name": {index}, "configSet": {solrConfigSet}}
		Do(t, http.MethodGet, base+"/admin/cores?"+q.Encode(), "", nil)
		all := make([]map[string]any, len(docs))
		for i, d := range docs {
			all[i] = d.fields()
		}
		b, err := json.Marshal(all)
		must(t, err)
		Do(t, http.MethodPost, base+"/"+index+"/update?commit=true", "application/json", b)
	default:
		t.Fatalf("realengine: unknown kind %q", kind)
	}
}

func solrCoreExists(t testing.TB, base, core string) bool {
	t.Helper()
	var r struct {
		Status map[string]map[string]any `json:"status"`
	}
	decode(t, Do(t, http.MethodGet, base+"/admin/cores?"+url.Values{"action": {"STATUS"}, "core": {core}}.Encode(), "", nil), &r)
	return len(r.Status[core]) > 0
}

// firstError is the first bulk item that reports an error.
func firstError(items []json.RawMessage) string {
	for _, it := range items {
		if bytes.Contains(it, []byte(`"error"`)) {
			return string(it)
		}
	}
	return "(none reported)"
}

// DocCount is the number of documents in index (a Solr core for "solr").
func DocCount(t testing.TB, kind, base, index string) int {
	t.Helper()
	base = strings.TrimSuffix(base, "/")
	switch kind {
	case "opensearch", "elasticsearch":
		var r struct{ Count int }
		decode(t, Do(t, http.MethodGet, base+"/"+index+"/_count", "", nil), &r)
		return r.Count
	case "solr":
		var r struct {
			Response struct{ NumFound int } `json:"response"`
		}
		decode(t, Do(t, http.MethodGet, base+"/"+index+"/select?q=*:*&rows=0", "", nil), &r)
		return r.Response.NumFound
	}
	t.Fatalf("realengine: unknown kind %q", kind)
	return 0
}

// Definition is what defines index on the engine, as JSON: {"mapping":
// ..., "settings": ...} for OpenSearch and Elasticsearch (GET
// index/_mapping and index/_settings), the core's schema (GET
// core/schema) for Solr. Two calls return equal bytes when nothing
// changed the index's definition in between.
func Definition(t testing.TB, kind, base, index string) []byte {
	t.Helper()
	base = strings.TrimSuffix(base, "/")
	switch kind {
	case "opensearch", "elasticsearch":
		b, err := json.Marshal(map[string]json.RawMessage{
			"mapping":  Do(t, http.MethodGet, base+"/"+index+"/_mapping", "", nil),
			"settings": Do(t, http.MethodGet, base+"/"+index+"/_settings", "", nil),
		})
		must(t, err)
		return b
	case "solr":
		var r struct {
			Schema json.RawMessage `json:"schema"`
		}
		decode(t, Do(t, http.MethodGet, base+"/"+index+"/schema", "", nil), &r)
		return r.Schema
	}
	t.Fatalf("realengine: unknown kind %q", kind)
	return nil
}

var client = &http.Client{Timeout: 2 * time.Minute}

// Do sends a request to an engine and returns the response body; a
// transport error or a status other than 2xx fails the test, naming the
// request and quoting the body. contentType may be empty when body is nil.
func Do(t testing.TB, method, u, contentType string, body []byte) []byte {
	t.Helper()
	b, status := request(t, method, u, contentType, body)
	if status/100 != 2 {
		t.Fatalf("realengine: %s %s: status %d: %s", method, u, status, trim(b))
	}
	return b
}

// request sends a request and returns the body and the status.
func request(t testing.TB, method, u, contentType string, body []byte) ([]byte, int) {
	t.Helper()
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	must(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("realengine: %s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("realengine: %s %s: reading the body: %v", method, u, err)
	}
	return b, resp.StatusCode
}

func decode(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("realengine: decoding %s: %v", trim(b), err)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("realengine: %v", err)
	}
}

func trim(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

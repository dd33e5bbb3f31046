package realengine

import (
	"bytes"
	"context"
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
	if err := Index(context.Background(), kind, base, index, docs); err != nil {
		t.Fatal(err)
	}
}

// Index is [Load] for callers without a test: `winnow bench -engine`
// loads the sample with it.
func Index(ctx context.Context, kind, base, index string, docs []Doc) error {
	if index == "" || strings.ContainsAny(index, "/?#&% ") {
		return fmt.Errorf("realengine: index name %q: want a plain name", index)
	}
	base = strings.TrimSuffix(base, "/")
	switch kind {
	case "opensearch", "elasticsearch":
		_, status, err := call(ctx, http.MethodDelete, base+"/"+index, "", nil)
		if err != nil {
			return err
		}
		if status != http.StatusOK && status != http.StatusNotFound {
			return fmt.Errorf("realengine: delete index %s: status %d", index, status)
		}
		if _, err := do(ctx, http.MethodPut, base+"/"+index, "application/json", []byte(indexDefinition)); err != nil {
			return err
		}
		var nd bytes.Buffer
		enc := json.NewEncoder(&nd)
		for _, d := range docs {
			if err := enc.Encode(map[string]any{"index": map[string]string{"_index": index, "_id": d.ID}}); err != nil {
				return err
			}
			if err := enc.Encode(d.fields()); err != nil {
				return err
			}
		}
		if len(docs) > 0 {
			b, err := do(ctx, http.MethodPost, base+"/_bulk", "application/x-ndjson", nd.Bytes())
			if err != nil {
				return err
			}
			var r struct {
				Errors bool              `json:"errors"`
				Items  []json.RawMessage `json:"items"`
			}
			if err := json.Unmarshal(b, &r); err != nil {
				return fmt.Errorf("realengine: bulk answer %s: %v", trim(b), err)
			}
			if r.Errors {
				return fmt.Errorf("realengine: bulk load into %s: errors, first item %s", index, firstError(r.Items))
			}
		}
		_, err = do(ctx, http.MethodPost, base+"/"+index+"/_refresh", "", nil)
		return err
	case "solr":
		if err := recreateCore(ctx, base, index); err != nil {
			return err
		}
		return solrAdd(ctx, base, index, docs)
	case SolrCloud:
		return cloudLoad(ctx, base, index, docs)
	}
	return fmt.Errorf("realengine: unknown kind %q", kind)
}

// recreateCore drops Solr core index if Solr has it and creates it
// afresh. Solr loads the cores it finds on disk in the background after
// it starts answering: until it has loaded one, its status does not list
// it and creating it again fails ("another core is already defined
// there"), so the steps are tried again until the core is loaded, for at
// most a minute.
func recreateCore(ctx context.Context, base, index string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		err := recreateCoreOnce(ctx, base, index)
		if err == nil || !strings.Contains(err.Error(), "already defined there") {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (Solr has not loaded the core from its files in a minute)", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func recreateCoreOnce(ctx context.Context, base, index string) error {
	b, err := do(ctx, http.MethodGet, base+"/admin/cores?"+url.Values{"action": {"STATUS"}, "core": {index}}.Encode(), "", nil)
	if err != nil {
		return err
	}
	var st struct {
		Status map[string]map[string]any `json:"status"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("realengine: core status %s: %v", trim(b), err)
	}
	if len(st.Status[index]) > 0 {
		q := url.Values{"action": {"UNLOAD"}, "core": {index}, "deleteInstanceDir": {"true"}}
		// Solr's status may still list a core it has just dropped
		// (or failed to load after a restart), and then refuses to
		// unload it as non-existent: gone is what is wanted.
		if _, err := do(ctx, http.MethodGet, base+"/admin/cores?"+q.Encode(), "", nil); err != nil && !strings.Contains(err.Error(), "non-existent core") {
			return err
		}
	}
	q := url.Values{"action": {"CREATE"}, "name": {index}, "configSet": {solrConfigSet}}
	_, err = do(ctx, http.MethodGet, base+"/admin/cores?"+q.Encode(), "", nil)
	return err
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
	case "solr", SolrCloud:
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
	case "solr", SolrCloud:
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
	b, err := do(context.Background(), method, u, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// do is [Do] returning the error.
func do(ctx context.Context, method, u, contentType string, body []byte) ([]byte, error) {
	b, status, err := call(ctx, method, u, contentType, body)
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("realengine: %s %s: status %d: %s", method, u, status, trim(b))
	}
	return b, err
}

// call sends a request and returns the body and the status.
func call(ctx context.Context, method, u, contentType string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("realengine: %v", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("realengine: %s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, 0, fmt.Errorf("realengine: %s %s: reading the body: %v", method, u, err)
	}
	return b, resp.StatusCode, nil
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

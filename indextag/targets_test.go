package indextag_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/realengine"
)

// The tests below run winnow index against targets as operators have
// them on the real engines: an alias over several indexes, a data
// stream, an index routed by another key than the _id.

// esMapping is the mapping of the documents of realengine.Sample, without
// the winnow fields (-apply adds them).
const esMapping = `{"properties":{"id":{"type":"keyword"},"url":{"type":"keyword"},"page":{"type":"keyword"},"title":{"type":"text"},"body":{"type":"text"},"html":{"type":"text","index":false}}}`

// esCreate creates index (deleting one of that name) with settings and
// mapping, and bulk-loads docs with op (index, or create for a data
// stream), each routed by routing when it is not nil.
func esCreate(t *testing.T, base, index, settings, mapping string, docs []realengine.Doc, op string, routing func(realengine.Doc) string) {
	t.Helper()
	realengine.Do(t, "DELETE", base+"/"+index+"?ignore_unavailable=true", "", nil)
	if settings != "" {
		realengine.Do(t, "PUT", base+"/"+index, "application/json", []byte(`{"settings":`+settings+`,"mappings":`+mapping+`}`))
	}
	esBulk(t, base, index, docs, op, routing, nil)
}

// esBulk indexes docs into index, with extra fields added to each.
func esBulk(t *testing.T, base, index string, docs []realengine.Doc, op string, routing func(realengine.Doc) string, extra map[string]any) {
	t.Helper()
	if len(docs) == 0 {
		return
	}
	var nd bytes.Buffer
	for _, d := range docs {
		meta := map[string]any{"_index": index, "_id": d.ID}
		if routing != nil {
			meta["routing"] = routing(d)
		}
		src := map[string]any{"id": d.ID, "url": d.URL, "page": d.Page, "title": d.Title, "body": d.Body, "html": d.HTML}
		for k, v := range extra {
			src[k] = v
		}
		b1, _ := json.Marshal(map[string]any{op: meta})
		b2, _ := json.Marshal(src)
		nd.Write(append(append(b1, '\n'), append(b2, '\n')...))
	}
	b := realengine.Do(t, "POST", base+"/_bulk?refresh=true", "application/x-ndjson", nd.Bytes())
	if bytes.Contains(b, []byte(`"errors":true`)) {
		t.Fatalf("bulk into %s: %.600s", index, b)
	}
}

// deleteIfThere deletes what u names; it may not exist.
func deleteIfThere(t *testing.T, u string) {
	t.Helper()
	req, _ := http.NewRequest("DELETE", u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 && resp.StatusCode != http.StatusNotFound {
		t.Fatalf("DELETE %s: status %d", u, resp.StatusCode)
	}
}

// sampleOn starts the engine of kind and returns its address, a name for
// the test's index and the sample's pages.
func sampleOn(t *testing.T, kind string) (base, name string, docs []realengine.Doc) {
	t.Helper()
	base = strings.TrimSuffix(realengine.Start(t, kind), "/")
	docs, err := realengine.Sample("http://127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	return base, strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), docs
}

// esKinds runs fn for OpenSearch and Elasticsearch.
func esKinds(t *testing.T, fn func(t *testing.T, kind, base, name string, docs []realengine.Doc)) {
	for _, kind := range []string{"opensearch", "elasticsearch"} {
		t.Run(kind, func(t *testing.T) {
			base, name, docs := sampleOn(t, kind)
			fn(t, kind, base, name, docs)
		})
	}
}

// applyAll runs winnow index -apply on e and checks that it wrote every
// document of e.docs and that the target holds their tags; with dedup,
// that they are winnow dedup's groups and that a collapse on them
// returns dedup's winners.
func applyAll(t *testing.T, e *engine, dedup bool) {
	t.Helper()
	o := options(t, e)
	o.Apply = true
	rep, err := indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if w := rep.Writes; w.Written != len(e.docs) || w.Missing != 0 || len(w.Failed) > 0 {
		t.Errorf("wrote %d of %d, %d missing, failed %v", w.Written, len(e.docs), w.Missing, w.Failed)
	}
	st := e.state(t)
	if len(st) != len(e.docs) {
		t.Fatalf("the target holds %d documents, want %d", len(st), len(e.docs))
	}
	var untagged []string
	for id, s := range st {
		if s.group == "" {
			untagged = append(untagged, id)
		}
	}
	if len(untagged) > 0 {
		t.Errorf("%d documents not tagged, e.g. %s", len(untagged), untagged[0])
	}
	if dedup {
		checkGroups(t, e, st, dedupGroups(t, e, st))
	}
}

// TestWhereDocumentsAre: each write goes to the index that holds the
// document, with its routing. Through an alias over two indexes (with no
// write index every write was refused; with one, the other's documents
// were counted as deleted), a data stream (which takes only new
// documents) and an index routed by a custom key over three shards (the
// update by _id went to another shard), every document is tagged with
// dedup's groups. Two indexes that share an _id are refused, not tagged
// as one document. An index of the alias without the winnow fields gets
// them even when another has them: its first write mapped winnow_group
// dynamically as text, and a collapse over the alias ignored its
// documents.
func TestWhereDocumentsAre(t *testing.T) {
	esKinds(t, func(t *testing.T, kind, base, name string, docs []realengine.Doc) {
		const shard1 = `{"number_of_shards":1,"number_of_replicas":0}`
		t.Run("alias", func(t *testing.T) {
			// a was tagged before (its mapping has the fields), b is a
			// later index (a rollover's) without them.
			a, b := name+"-a", name+"-b"
			tagged := strings.Replace(esMapping, `{"properties":{`, `{"properties":{"winnow_group":{"type":"keyword"},"winnow_winner":{"type":"boolean"},"winnow_removable":{"type":"boolean"},"winnow_probability":{"type":"float"},`, 1)
			esCreate(t, base, a, shard1, tagged, docs[:27], "index", nil)
			esCreate(t, base, b, shard1, esMapping, docs[27:], "index", nil)
			alias := name + "-alias"
			realengine.Do(t, "POST", base+"/_aliases", "application/json", []byte(`{"actions":[{"add":{"index":"`+a+`","alias":"`+alias+`"}},{"add":{"index":"`+b+`","alias":"`+alias+`"}}]}`))
			applyAll(t, &engine{kind: kind, base: base, index: alias, docs: docs}, true)

			// The same _id in both indexes.
			esBulk(t, base, b, docs[:1], "index", nil, nil)
			o := options(t, &engine{kind: kind, base: base, index: alias})
			_, err := indextag.Run(context.Background(), o)
			if err == nil || !strings.Contains(err.Error(), docs[0].ID) {
				t.Errorf("two documents of _id %s under the alias: %v, want an error naming it", docs[0].ID, err)
			}
		})
		t.Run("routing", func(t *testing.T) {
			index := name + "-routed"
			mapping := strings.Replace(esMapping, `{"properties"`, `{"_routing":{"required":true},"properties"`, 1)
			esCreate(t, base, index, `{"number_of_shards":3,"number_of_replicas":0}`, mapping, docs, "index", func(d realengine.Doc) string { return d.Page })
			applyAll(t, &engine{kind: kind, base: base, index: index, docs: docs}, false)
		})
		if kind == "opensearch" {
			// (The Elasticsearch build scripts/engine runs has no data
			// stream API to delete one: it is tried on OpenSearch.)
			t.Run("data stream", func(t *testing.T) {
				ds := name + "-ds"
				deleteIfThere(t, base+"/_data_stream/"+ds)
				mapping := strings.Replace(esMapping, `{"properties":{`, `{"properties":{"@timestamp":{"type":"date"},`, 1)
				realengine.Do(t, "PUT", base+"/_index_template/"+ds, "application/json",
					[]byte(`{"index_patterns":["`+ds+`"],"data_stream":{},"priority":500,"template":{"settings":`+shard1+`,"mappings":`+mapping+`}}`))
				stamp := map[string]any{"@timestamp": "2026-11-01T00:00:00Z"}
				esBulk(t, base, ds, docs[:27], "create", nil, stamp)
				realengine.Do(t, "POST", base+"/"+ds+"/_rollover", "", nil)
				esBulk(t, base, ds, docs[27:], "create", nil, stamp)
				applyAll(t, &engine{kind: kind, base: base, index: ds, docs: docs}, false)
			})
		}
	})
}

// TestShardFailure: an answer in which a shard failed is an error, not
// the whole index. An incremental run's -since range over an alias whose
// indexes map the field differently (a date in one, a number in the
// other) fails on one index's shard; the engine still answers 200 with
// the other's hits, which were taken as everything.
func TestShardFailure(t *testing.T) {
	esKinds(t, func(t *testing.T, kind, base, name string, docs []realengine.Doc) {
		const shard1 = `{"number_of_shards":1,"number_of_replicas":0}`
		a, b, alias := name+"-dates", name+"-numbers", name+"-alias"
		esCreate(t, base, a, shard1, strings.Replace(esMapping, `{"properties":{`, `{"properties":{"updated":{"type":"date"},`, 1), nil, "index", nil)
		esCreate(t, base, b, shard1, strings.Replace(esMapping, `{"properties":{`, `{"properties":{"updated":{"type":"long"},`, 1), nil, "index", nil)
		esBulk(t, base, a, docs[:10], "index", nil, map[string]any{"updated": "2026-11-20T00:00:00Z"})
		esBulk(t, base, b, docs[10:20], "index", nil, map[string]any{"updated": 1763596800})
		realengine.Do(t, "POST", base+"/_aliases", "application/json", []byte(`{"actions":[{"add":{"index":"`+a+`","alias":"`+alias+`"}},{"add":{"index":"`+b+`","alias":"`+alias+`"}}]}`))
		o := options(t, &engine{kind: kind, base: base, index: alias})
		o.Since = &indextag.Since{Field: "updated", Value: "2026-11-01T00:00:00Z"}
		rep, err := indextag.Run(context.Background(), o)
		if !errors.Is(err, indextag.ErrRead) || !strings.Contains(err.Error(), "shards failed") || !strings.Contains(err.Error(), b) {
			t.Errorf("a shard failed: %v (read %d documents); want a read error naming the failed shard's index %s", err, rep.Docs, b)
		}
	})
}

// solrBaseFields are the fields of the configset winnow-managed
// (scripts/engine.d/solr.sh); solrManagedCore removes any other.
var solrBaseFields = []string{"id", "_version_", "url", "page", "title", "body", "html"}

// solrManagedCore creates core name (replacing one of that name) from
// the configset winnow-managed, whose schema the Schema API changes as
// operators change theirs. A standalone node writes a core's schema
// changes to its configset, which every core made from it shares, so the
// fields earlier tests added (winnow's among them) are removed first; then
// schema (Schema API commands, "" none) is applied and docs are loaded.
func solrManagedCore(t *testing.T, base, name, schema string, docs []map[string]any) *engine {
	t.Helper()
	var st struct {
		Status map[string]map[string]any `json:"status"`
	}
	decode(t, realengine.Do(t, "GET", base+"/admin/cores?action=STATUS&wt=json&core="+name, "", nil), &st)
	if len(st.Status[name]) > 0 {
		realengine.Do(t, "GET", base+"/admin/cores?action=UNLOAD&deleteInstanceDir=true&core="+name, "", nil)
	}
	realengine.Do(t, "GET", base+"/admin/cores?action=CREATE&configSet=winnow-managed&name="+name, "", nil)
	core := base + "/" + name
	var fields struct {
		Fields []struct{ Name string } `json:"fields"`
	}
	decode(t, realengine.Do(t, "GET", core+"/schema/fields?wt=json", "", nil), &fields)
	var drop []string
	for _, f := range fields.Fields {
		if !slices.Contains(solrBaseFields, f.Name) {
			drop = append(drop, `"delete-field":{"name":"`+f.Name+`"}`)
		}
	}
	if len(drop) > 0 {
		realengine.Do(t, "POST", core+"/schema", "application/json", []byte("{"+strings.Join(drop, ",")+"}"))
	}
	if schema != "" {
		realengine.Do(t, "POST", core+"/schema", "application/json", []byte(schema))
	}
	if len(docs) > 0 {
		b, _ := json.Marshal(docs)
		realengine.Do(t, "POST", core+"/update?commit=true", "application/json", b)
	}
	return &engine{kind: "solr", base: base, index: name}
}

// solrDocs are docs as Solr documents.
func solrDocs(docs []realengine.Doc) []map[string]any {
	out := make([]map[string]any, len(docs))
	for i, d := range docs {
		out[i] = map[string]any{"id": d.ID, "url": d.URL, "page": d.Page, "title": d.Title, "body": d.Body, "html": d.HTML}
	}
	return out
}

// solrFound counts the documents q finds in the core of e.
func solrFound(t *testing.T, e *engine, q string) int {
	t.Helper()
	var r struct {
		Response struct{ NumFound int } `json:"response"`
	}
	decode(t, realengine.Do(t, "GET", e.indexURL()+"/select?rows=0&wt=json&q="+url.QueryEscape(q), "", nil), &r)
	return r.Response.NumFound
}

// TestSolrManagedSchema: on a core with a managed schema -apply adds the
// winnow fields through the Schema API and tags every document; a core
// with an indexed field neither stored nor with docValues is refused
// before anything is written: an atomic update rebuilds each document
// from its stored fields and docValues, and that field's terms were
// dropped from every document written (a search on it found 5 pages
// before -apply, none after); so is a core holding nested documents
// whose schema has no _nest_path_ (an atomic update of the parent
// deleted its child).
func TestSolrManagedSchema(t *testing.T) {
	base, name, docs := sampleOn(t, "solr")

	// _root_ as Solr's _default configset has it: indexed, neither stored
	// nor with docValues, set by Solr on every document (and again on an
	// atomic update).
	e := solrManagedCore(t, base, name, `{"add-field":{"name":"_root_","type":"string","indexed":true,"stored":false,"docValues":false}}`, solrDocs(docs))
	e.docs = docs
	applyAll(t, e, true)

	summaries := solrDocs(docs)
	for i, d := range summaries {
		d["summary"] = docs[i].Body
	}
	e = solrManagedCore(t, base, name, `{"add-field":{"name":"summary","type":"text","indexed":true,"stored":false}}`, summaries)
	e.docs = docs
	const q = "summary:benchmark"
	before := solrFound(t, e, q)
	o := options(t, e)
	o.Apply = true
	rep, err := indextag.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "summary") || rep.Writes.Written != 0 {
		t.Errorf("an unstored indexed field: %v, wrote %d; want it refused, naming summary", err, rep.Writes.Written)
	}
	if after := solrFound(t, e, q); before == 0 || after != before {
		t.Errorf("%s found %d pages before -apply, %d after", q, before, after)
	}

	// A nested document, in a schema with _root_ and no _nest_path_: the
	// atomic update of its parent deleted it.
	nested := solrDocs(docs)
	nested[0]["_childDocuments_"] = []map[string]any{{"id": "child-of-0", "html": docs[1].HTML}}
	e = solrManagedCore(t, base, name, `{"add-field":{"name":"_root_","type":"string","indexed":true,"stored":false,"docValues":false}}`, nested)
	o = options(t, e)
	o.Apply = true
	rep, err = indextag.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "nested") || rep.Writes.Written != 0 {
		t.Errorf("a nested document: %v, wrote %d; want it refused", err, rep.Writes.Written)
	}
	if n := solrFound(t, e, "id:child-of-0"); n != 1 {
		t.Errorf("the nested document: found %d, want 1", n)
	}
}

// TestSolrRereadIDs: documents changed between the read and the write
// are re-read by their IDs, whatever those hold. Solr's real-time get
// split its ids parameter on commas (a document whose ID holds one was
// counted as deleted and never tagged), and a hundred long IDs in the
// query string overflowed the request line Jetty takes (414: every
// re-read failed).
func TestSolrRereadIDs(t *testing.T) {
	base, name, docs := sampleOn(t, "solr")
	for i := range docs {
		docs[i].ID += ", copy " + strings.Repeat("x", 200)
	}
	realengine.Load(t, "solr", base, name, docs)
	e := &engine{kind: "solr", base: base, index: name, docs: docs}
	o := options(t, e)
	o.Apply = true
	var read atomic.Int64
	o.Progress = func(stage string, n int) {
		if stage == "reading" && read.Add(int64(n)) == int64(len(docs)) {
			// Every document changes (not its page) before the write.
			touch := make([]map[string]any, len(docs))
			for i, d := range docs {
				touch[i] = map[string]any{"id": d.ID, "title": map[string]any{"set": "touched"}}
			}
			b, _ := json.Marshal(touch)
			realengine.Do(t, "POST", e.indexURL()+"/update?commit=true", "application/json", b)
		}
	}
	rep, err := indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if w := rep.Writes; w.Reread != len(docs) || w.Written != len(docs) || w.Missing != 0 || len(w.Failed) > 0 {
		t.Errorf("re-read %d, wrote %d, missing %d, failed %v; want all %d re-read and written", w.Reread, w.Written, w.Missing, w.Failed, len(docs))
	}
	if n := solrFound(t, e, "title:touched"); n != len(docs) {
		t.Errorf("%d documents keep their change, want %d", n, len(docs))
	}
}

// TestSolrOneDocumentRefused: Solr refuses a request of updates at its
// first document it cannot take, with status 400 for the whole request:
// here a document indexed before its schema made a field required. The
// other documents are written and the run goes on; the refused one is
// counted by Solr's reason. The run ended at that request, every
// document counted as failed.
func TestSolrOneDocumentRefused(t *testing.T) {
	base, name, docs := sampleOn(t, "solr")
	withLang := solrDocs(docs)
	for _, d := range withLang[1:] {
		d["lang"] = "en"
	}
	e := solrManagedCore(t, base, name, `{"add-field":{"name":"lang","type":"string","stored":true}}`, withLang)
	realengine.Do(t, "POST", e.indexURL()+"/schema", "application/json", []byte(`{"replace-field":{"name":"lang","type":"string","stored":true,"required":true}}`))
	e.docs = docs
	o := options(t, e)
	o.Apply = true
	rep, err := indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// The documents Solr applied before it refused that one come back
	// as conflicts with themselves, already tagged (Unchanged).
	w := rep.Writes
	if w.Written+w.Unchanged != len(docs)-1 || w.Failed["HTTP 400: missing required field: lang"] != 1 || len(w.Failed) != 1 {
		t.Errorf("wrote %d, found %d tagged, failed %v; want %d tagged and %s refused for its missing lang", w.Written, w.Unchanged, w.Failed, len(docs)-1, docs[0].ID)
	}
	st, untagged := e.state(t), 0
	for _, d := range docs[1:] {
		if st[d.ID].group == "" {
			untagged++
		}
	}
	if untagged > 0 {
		t.Errorf("%d of the %d documents Solr takes not tagged", untagged, len(docs)-1)
	}
}

package indextag_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/realengine"
)

// The tests below run winnow index against a real SolrCloud
// (realengine.SolrCloud: ZooKeeper and Solr nodes), on what operators'
// large Solr indexes are: collections of several shards and replicas,
// IDs routed by a prefix, collections routed by a field, aliases.

// cloud loads docs into a collection of the SolrCloud named after the
// test, of realengine.CloudShards shards of realengine.CloudReplicas
// replicas.
func cloud(t *testing.T, docs []realengine.Doc) *engine {
	t.Helper()
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	e := &engine{kind: realengine.SolrCloud, base: base, index: strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name())), docs: docs}
	realengine.Load(t, realengine.SolrCloud, base, e.index, docs)
	return e
}

func sampleDocs(t *testing.T) []realengine.Doc {
	t.Helper()
	docs, err := realengine.Sample("http://127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// selected reads every document of a collection through a search (after
// the run's commit), the way a reader of the collection sees it: real-time
// get would need each document's _route_ on a collection routed by a
// field.
func (e *engine) selected(t *testing.T, collection string) map[string]stored {
	t.Helper()
	q := url.Values{"q": {"*:*"}, "rows": {"10000"}, "fl": {solrStoredFields}, "wt": {"json"}}
	return solrStored(t, realengine.Do(t, "GET", e.base+"/"+collection+"/select?"+q.Encode(), "", nil))
}

// TestSolrCloudCompositeID tags a collection of two shards of two
// replicas whose IDs carry a routing prefix (tenant!doc, compositeId):
// the cursor reads every document across the shards, each atomic update
// reaches the shard of its ID, both replicas of each shard answer with
// the tags (a second run, whose reads go to either replica, finds every
// tag in place), and the groups are winnow dedup's.
func TestSolrCloudCompositeID(t *testing.T) {
	var docs []realengine.Doc
	for _, d := range sampleDocs(t) {
		d.ID = "llvm" + strings.Split(d.ID, "/")[3] + "!" + d.ID // llvm13!sample://llvm/13/FaultMaps
		docs = append(docs, d)
	}
	e := cloud(t, docs)
	o := options(t, e)
	o.Apply = true
	o.Checkpoint = filepath.Join(t.TempDir(), "ck")
	rep, err := indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Docs != len(docs) || rep.Writes.Written != len(docs) || len(rep.Writes.Failed) > 0 {
		t.Errorf("read %d, wrote %d, failed %v; want all %d", rep.Docs, rep.Writes.Written, rep.Writes.Failed, len(docs))
	}
	st := e.selected(t, e.index)
	checkGroups(t, e, st, dedupGroups(t, e, st))
	for i := range 3 {
		o.Checkpoint = filepath.Join(t.TempDir(), "ck")
		if rep, err = indextag.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if rep.Writes.Written != 0 || rep.Writes.Unchanged != len(docs) {
			t.Errorf("run %d after: wrote %d, found %d unchanged; want 0 and %d", i+2, rep.Writes.Written, rep.Writes.Unchanged, len(docs))
		}
	}
}

// TestSolrCloudRouterField tags a collection routed by a field
// (router.field=page): SolrCloud refuses an update without that field's
// value ("No value for :page. Unable to identify shard") and finds a
// document by real-time get only on the shard its _route_ names. A
// document changed between the read and the write is re-read there and
// decided again.
func TestSolrCloudRouterField(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-router-field", docs: sampleDocs(t)}
	realengine.CreateCollection(t, base, e.index, "winnow", 2, 1, url.Values{"router.field": {"page"}})
	realengine.AddDocs(t, base, e.index, e.docs)
	const id = "sample://llvm/14/Benchmarking" // a duplicate of llvm/13's
	page := uniquePage("changed")
	o := options(t, e)
	o.Apply = true
	var read atomic.Int64
	o.Progress = func(stage string, n int) {
		if stage == "reading" && read.Add(int64(n)) == int64(len(e.docs)) {
			b, _ := json.Marshal([]map[string]any{{"id": id, "page": "Benchmarking", "html": map[string]any{"set": page}}})
			realengine.Do(t, "POST", e.indexURL()+"/update?commit=true", "application/json", b)
		}
	}
	rep, err := indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	// A document written in a batch that Solr then refused for the
	// changed one is found tagged when re-read (Unchanged).
	if w := rep.Writes; w.Written+w.Unchanged != len(e.docs) || len(w.Failed) > 0 || w.Missing > 0 || w.Changed != 1 {
		t.Errorf("wrote %d, found %d tagged, failed %v, missing %d, decided again %d; want all %d written or tagged, the changed one decided again", w.Written, w.Unchanged, w.Failed, w.Missing, w.Changed, len(e.docs))
	}
	st := e.selected(t, e.index)
	if len(st) != len(e.docs) {
		t.Fatalf("%d documents after the run, want %d", len(st), len(e.docs))
	}
	for did, s := range st {
		if s.group == "" {
			t.Errorf("%s: not tagged", did)
		}
	}
	if s := st[id]; s.html != page || !s.winner {
		t.Errorf("%s: its new page overwritten (%v) or not its own group's winner (%v)", id, s.html != page, s.winner)
	}
}

// TestSolrCloudAlias reads an alias of two collections (a dry run counts
// the documents of both) and refuses to write through it: Solr sends an
// update through an alias to its first collection only, where the
// documents of the second are not (their conditional updates failed
// as if those were deleted, and stayed untagged).
func TestSolrCloudAlias(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	docs := sampleDocs(t)
	half := len(docs) / 2
	realengine.Load(t, realengine.SolrCloud, base, "solrcloud-alias-a", docs[:half])
	realengine.Load(t, realengine.SolrCloud, base, "solrcloud-alias-b", docs[half:])
	realengine.CreateAlias(t, base, "solrcloud-alias", "solrcloud-alias-a", "solrcloud-alias-b")
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-alias", docs: docs}
	o := options(t, e)
	rep, err := indextag.Run(context.Background(), o)
	if err != nil || rep.Docs != len(docs) {
		t.Fatalf("dry run through the alias: %v, %d documents; want %d", err, rep.Docs, len(docs))
	}
	o.Apply = true
	_, err = indextag.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "alias of 2 collections") {
		t.Errorf("apply through the alias: %v; want a refusal naming the alias's collections", err)
	}
	for _, c := range []string{"solrcloud-alias-a", "solrcloud-alias-b"} {
		for id, s := range e.selected(t, c) {
			if s.group != "" {
				t.Errorf("%s: %s tagged through the alias", c, id)
			}
		}
	}
}

// TestSolrCloudLeaderLost loses the node holding both shards' leaders
// (node 3) while winnow index -apply writes: SolrCloud elects the
// replicas on node 0, and the run finishes, every document written or
// found tagged (a batch Solr could not forward to the lost leader, a
// 500, is sent again: it stopped the run, 49 of 53 documents failed);
// the same command again (its checkpoint) writes nothing, and every
// document has winnow dedup's group.
func TestSolrCloudLeaderLost(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-leader-lost", docs: sampleDocs(t)}
	// The replicas on node 3 first: they lead.
	realengine.CreateCollection(t, base, e.index, "winnow", 2, 1, url.Values{"createNodeSet": {"EMPTY"}})
	for _, node := range []int{3, 0} {
		for _, shard := range []string{"shard1", "shard2"} {
			realengine.AddReplica(t, base, e.index, shard, node)
		}
	}
	realengine.AddDocs(t, base, e.index, e.docs)
	leaders := realengine.CloudLeaders(t, base, e.index)
	node3 := realengine.CloudNode(base, 3)
	for shard, port := range leaders {
		if !strings.HasSuffix(node3, fmt.Sprintf(":%d/solr", port)) {
			t.Fatalf("%s's leader on port %d, want node 3 (%s)", shard, port, node3)
		}
	}
	o := options(t, e)
	o.Apply, o.Batch, o.Rate = true, 4, 40
	o.Checkpoint = filepath.Join(t.TempDir(), "ck")
	var once sync.Once
	stopped := make(chan struct{})
	o.Progress = func(stage string, n int) {
		if stage == "writing" && n > 0 {
			once.Do(func() {
				go func() {
					realengine.StopNode(t, base, 3)
					close(stopped)
				}()
			})
		}
	}
	t.Cleanup(func() { realengine.StartNode(t, base, 3) })
	rep, err := indextag.Run(context.Background(), o)
	<-stopped
	if err != nil {
		t.Fatalf("the run with the leaders lost: %v", err)
	}
	t.Logf("the run with the leaders lost: wrote %d, found %d tagged, retries %v", rep.Writes.Written, rep.Writes.Unchanged, rep.Writes.Retries)
	if w := rep.Writes; w.Written+w.Unchanged != len(e.docs) || len(w.Failed) > 0 || w.Missing > 0 {
		t.Errorf("the run with the leaders lost: wrote %d, found %d tagged, failed %v, missing %d; want all %d written or tagged", w.Written, w.Unchanged, w.Failed, w.Missing, len(e.docs))
	}
	// Node 0's replicas take over (after Solr's leader vote wait).
	for deadline := time.Now().Add(time.Minute); len(realengine.CloudLeaders(t, base, e.index)) != 2; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no leaders a minute after node 3 was lost: %v", realengine.CloudLeaders(t, base, e.index))
		}
	}
	o.Progress = nil
	rep, err = indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("again: %v", err)
	}
	if rep.Writes.Written != 0 || len(rep.Writes.Failed) > 0 || rep.Writes.Missing > 0 {
		t.Errorf("again: wrote %d, failed %v, missing %d; want nothing to do", rep.Writes.Written, rep.Writes.Failed, rep.Writes.Missing)
	}
	st := e.selected(t, e.index)
	if len(st) != len(e.docs) {
		t.Fatalf("%d documents after the runs, want %d", len(st), len(e.docs))
	}
	checkGroups(t, e, st, dedupGroups(t, e, st))
}

// TestSolrCloudLaggingReplicas reads a collection whose shards each have
// a TLOG replica (the leader) and a PULL replica, which copies the
// leader's index every few seconds, right after the documents were
// committed: every run reads them all (a read spread over the replicas
// missed those a PULL replica had not copied yet: 19 of 53).
func TestSolrCloudLaggingReplicas(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-lagging-replicas", docs: sampleDocs(t)}
	realengine.CreateCollection(t, base, e.index, "winnow", 2, 0, url.Values{"nrtReplicas": {"0"}, "tlogReplicas": {"1"}, "pullReplicas": {"1"}})
	realengine.AddDocs(t, base, e.index, e.docs)
	o := options(t, e)
	for i := range 4 {
		rep, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Docs != len(e.docs) {
			t.Errorf("read %d: %d documents, want all %d", i+1, rep.Docs, len(e.docs))
		}
	}
}

// TestSolrCloudImplicitRouter: a collection of two shards with the
// implicit router and no router.field holds each document on the shard
// it was sent to (_route_=a); Solr puts an update on a shard of the node
// that receives it, so -apply is refused (half the documents were
// counted deleted and left untagged, the others tagged), and a dry run
// reads them all.
func TestSolrCloudImplicitRouter(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	docs := sampleDocs(t)
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-implicit", docs: docs}
	realengine.CreateCollection(t, base, e.index, "winnow", 2, 1, url.Values{"router.name": {"implicit"}, "shards": {"a,b"}, "numShards": nil})
	for i, shard := range []string{"a", "b"} {
		var all []map[string]any
		for _, d := range docs[i*len(docs)/2 : (i+1)*len(docs)/2] {
			all = append(all, map[string]any{"id": d.ID, "url": d.URL, "page": d.Page, "html": d.HTML})
		}
		b, _ := json.Marshal(all)
		realengine.Do(t, "POST", e.indexURL()+"/update?commit=true&_route_="+shard, "application/json", b)
	}
	o := options(t, e)
	if rep, err := indextag.Run(context.Background(), o); err != nil || rep.Docs != len(docs) {
		t.Fatalf("dry run: %v, %d documents; want %d", err, rep.Docs, len(docs))
	}
	o.Apply = true
	if _, err := indextag.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "implicit router") {
		t.Errorf("apply: %v; want a refusal naming the implicit router", err)
	}
	for id, s := range e.selected(t, e.index) {
		if s.group != "" {
			t.Errorf("%s tagged", id)
		}
	}
}

// TestSolrCloudFieldsOfEveryShard: a field indexed but neither stored
// nor with docValues, which an atomic update drops, is held only by the
// documents of the shard on node 1; the Luke handler of the collection
// describes the index of the core that answers (node 0's shard), so the
// run did not see the field and -apply erased it from those documents.
// Every shard's core is asked now, and -apply refuses.
func TestSolrCloudFieldsOfEveryShard(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-fields", docs: sampleDocs(t)}
	realengine.CreateCollection(t, base, e.index, "winnow-managed", 2, 1, url.Values{"createNodeSet": {"EMPTY"}})
	realengine.AddReplica(t, base, e.index, "shard1", 0)
	realengine.AddReplica(t, base, e.index, "shard2", 1)
	// The configset in ZooKeeper keeps the field from an earlier run.
	if b, status := post(t, e.indexURL()+"/schema", `{"add-field":{"name":"secret","type":"text","indexed":true,"stored":false,"docValues":false}}`); status != 200 && !strings.Contains(b, "already exists") {
		t.Fatalf("adding the field: %d %s", status, b)
	}
	realengine.AddDocs(t, base, e.index, e.docs)
	var r struct {
		Response struct {
			Docs []struct {
				ID string `json:"id"`
			} `json:"docs"`
		} `json:"response"`
	}
	decode(t, realengine.Do(t, "GET", e.indexURL()+"/select?q=*:*&rows=100&fl=id&shards=shard2&wt=json", "", nil), &r)
	var secret []realengine.Doc
	for _, d := range e.docs {
		for _, x := range r.Response.Docs {
			if x.ID == d.ID {
				secret = append(secret, d)
			}
		}
	}
	var all []map[string]any
	for _, d := range secret {
		all = append(all, map[string]any{"id": d.ID, "url": d.URL, "page": d.Page, "title": d.Title, "body": d.Body, "html": d.HTML, "secret": "classified words"})
	}
	b, _ := json.Marshal(all)
	realengine.Do(t, "POST", e.indexURL()+"/update?commit=true", "application/json", b)
	count := func() int {
		var c struct {
			Response struct{ NumFound int } `json:"response"`
		}
		decode(t, realengine.Do(t, "GET", e.indexURL()+"/select?q=secret:classified&rows=0&wt=json", "", nil), &c)
		return c.Response.NumFound
	}
	if n := count(); n == 0 || n != len(secret) {
		t.Fatalf("%d documents find the field, want shard2's %d", n, len(secret))
	}
	o := options(t, e)
	o.Apply = true
	if _, err := indextag.Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "secret") {
		t.Errorf("apply: %v; want a refusal naming the field secret", err)
	}
	if n := count(); n != len(secret) {
		t.Errorf("after the run %d documents find the field, want %d", n, len(secret))
	}
}

// post sends a JSON body and returns the answer and its status.
func post(t *testing.T, u, body string) (string, int) {
	t.Helper()
	resp, err := http.Post(u, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

// TestSolrCloudShardDown reads a collection whose /select answers with
// the shards that answered (shards.tolerant=true in its defaults, the
// configset winnow-tolerant) while the node of one of its two shards is
// lost: Solr's answer is a 200 with partialResults, which the run took
// for the whole collection (it read 34 of 53 documents and would have
// tagged them, winners elected without the other shard's pages). The
// run ends with an error instead, as on an Elasticsearch shard failure:
// here from the cluster state, which says the shard has no active
// replica, before the read (TestSolrPartial: the answer itself, for a
// shard lost during a read or a cluster state winnow may not read).
func TestSolrCloudShardDown(t *testing.T) {
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	e := &engine{kind: realengine.SolrCloud, base: base, index: "solrcloud-shard-down", docs: sampleDocs(t)}
	realengine.CreateCollection(t, base, e.index, "winnow-tolerant", 2, 1, url.Values{"createNodeSet": {"EMPTY"}})
	realengine.AddReplica(t, base, e.index, "shard1", 0)
	realengine.AddReplica(t, base, e.index, "shard2", 3)
	realengine.AddDocs(t, base, e.index, e.docs)
	realengine.StopNode(t, base, 3)
	t.Cleanup(func() { realengine.StartNode(t, base, 3) })
	o := options(t, e)
	o.RetryFor = 5 * time.Second
	rep, err := indextag.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "partial results") && !strings.Contains(err.Error(), "no active replica") {
		t.Errorf("read with a shard down: %v, %d documents; want an error saying a shard is missing", err, rep.Docs)
	}
	o.Apply = true
	if _, err := indextag.Run(context.Background(), o); err == nil {
		t.Errorf("apply with a shard down: no error")
	}
	realengine.StartNode(t, base, 3)
	for id, s := range e.selected(t, e.index) {
		if s.group != "" {
			t.Errorf("%s tagged", id)
		}
	}
}

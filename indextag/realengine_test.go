package indextag_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	wopts "github.com/winnow-search/winnow/options"

	"github.com/winnow-search/winnow/config"
	"github.com/winnow-search/winnow/fetch"
	"github.com/winnow-search/winnow/indextag"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/offline"
)

// The tests below run against real engines (internal/realengine): each
// loads the demo's 53 LLVM pages into an index of its own, tags it and
// reads back what the engine holds.

// builtDir holds the binary built by binary, "" until then.
var builtDir string

// binary builds cmd/winnow once for the tests that run it as a process.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "winnow-index-test")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "winnow")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/winnow-search/winnow/cmd/winnow").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v: %s", err, out)
	}
	return bin, nil
})

// TestMain removes the binary built for the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

func winnowBin(t *testing.T) string {
	t.Helper()
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// engine is one real engine with an index of the sample's pages.
type engine struct {
	kind, base, index string
	docs              []realengine.Doc
}

// indexURL is the URL winnow index takes.
func (e *engine) indexURL() string { return e.base + "/" + e.index }

func (e *engine) solr() bool { return e.kind == "solr" || e.kind == realengine.SolrCloud }

// winnowKind is winnow's -kind of a realengine kind: a SolrCloud is Solr.
func winnowKind(kind string) string {
	if kind == realengine.SolrCloud {
		return "solr"
	}
	return kind
}

// load starts the engine of kind and loads the sample into a fresh index
// named after the test.
func load(t *testing.T, kind string) *engine {
	t.Helper()
	base := realengine.Start(t, kind)
	docs, err := realengine.Sample("http://127.0.0.1:8081")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	e := &engine{kind: kind, base: strings.TrimSuffix(base, "/"), index: name, docs: docs}
	realengine.Load(t, kind, e.base, name, docs)
	return e
}

// stored is what the engine holds of one document.
type stored struct {
	version     int64
	seqNo       int64
	html        string
	group       string
	winner      bool
	removable   bool
	probability *float64
}

// state reads every document of the index.
func (e *engine) state(t *testing.T) map[string]stored {
	t.Helper()
	out := map[string]stored{}
	if e.solr() {
		// Real-time get, which sees writes not yet committed.
		ids := []string{"new/near", "new/alone"}
		for _, d := range e.docs {
			ids = append(ids, d.ID)
		}
		q := url.Values{"ids": {strings.Join(ids, ",")}, "fl": {solrStoredFields}, "wt": {"json"}}
		return solrStored(t, realengine.Do(t, "GET", e.indexURL()+"/get?"+q.Encode(), "", nil))
	}
	realengine.Do(t, "POST", e.indexURL()+"/_refresh", "", nil)
	body := `{"size":10000,"version":true,"seq_no_primary_term":true,"query":{"match_all":{}}}`
	b := realengine.Do(t, "POST", e.indexURL()+"/_search", "application/json", []byte(body))
	var r struct {
		Hits struct {
			Hits []struct {
				ID      string `json:"_id"`
				Version int64  `json:"_version"`
				SeqNo   int64  `json:"_seq_no"`
				Source  struct {
					HTML        string   `json:"html"`
					Group       string   `json:"winnow_group"`
					Winner      bool     `json:"winnow_winner"`
					Removable   bool     `json:"winnow_removable"`
					Probability *float64 `json:"winnow_probability"`
				} `json:"_source"`
			} `json:"hits"`
		} `json:"hits"`
	}
	decode(t, b, &r)
	for _, h := range r.Hits.Hits {
		s := h.Source
		out[h.ID] = stored{version: h.Version, seqNo: h.SeqNo, html: s.HTML, group: s.Group, winner: s.Winner, removable: s.Removable, probability: s.Probability}
	}
	return out
}

// solrStoredFields are the fields of a document solrStored reads.
const solrStoredFields = "id,_version_,html,winnow_group,winnow_winner,winnow_removable,winnow_probability"

// solrStored reads the documents (of solrStoredFields) of a Solr answer
// (select, or real-time get of several ids).
func solrStored(t *testing.T, b []byte) map[string]stored {
	t.Helper()
	var r struct {
		Response struct {
			Docs []struct {
				ID          string   `json:"id"`
				Version     int64    `json:"_version_"`
				HTML        string   `json:"html"`
				Group       string   `json:"winnow_group"`
				Winner      bool     `json:"winnow_winner"`
				Removable   bool     `json:"winnow_removable"`
				Probability *float64 `json:"winnow_probability"`
			} `json:"docs"`
		} `json:"response"`
	}
	decode(t, b, &r)
	out := map[string]stored{}
	for _, d := range r.Response.Docs {
		out[d.ID] = stored{version: d.Version, html: d.HTML, group: d.Group, winner: d.Winner, removable: d.Removable, probability: d.Probability}
	}
	return out
}

// collapsed returns the IDs of the hits of a search collapsed on
// winnow_group, the winner of each group first.
func (e *engine) collapsed(t *testing.T) []string {
	t.Helper()
	var ids []string
	if e.solr() {
		q := url.Values{"q": {"*:*"}, "fq": {"{!collapse field=winnow_group sort='winnow_winner desc'}"}, "rows": {"10000"}, "fl": {"id"}, "wt": {"json"}}
		if e.kind == realengine.SolrCloud {
			// Solr collapses within each shard: a group whose documents
			// lie on two shards is collapsed on each. Result grouping
			// groups across shards.
			q.Del("fq")
			for k, v := range map[string]string{"group": "true", "group.field": "winnow_group", "group.sort": "winnow_winner desc", "group.main": "true", "group.limit": "1"} {
				q.Set(k, v)
			}
		}
		var r struct {
			Response struct {
				Docs []struct {
					ID string `json:"id"`
				} `json:"docs"`
			} `json:"response"`
		}
		decode(t, realengine.Do(t, "GET", e.indexURL()+"/select?"+q.Encode(), "", nil), &r)
		for _, d := range r.Response.Docs {
			ids = append(ids, d.ID)
		}
	} else {
		body := `{"size":10000,"_source":false,"query":{"match_all":{}},"collapse":{"field":"winnow_group"},"sort":[{"winnow_winner":"desc"}]}`
		var r struct {
			Hits struct {
				Hits []struct {
					ID string `json:"_id"`
				} `json:"hits"`
			} `json:"hits"`
		}
		decode(t, realengine.Do(t, "POST", e.indexURL()+"/_search", "application/json", []byte(body)), &r)
		for _, h := range r.Hits.Hits {
			ids = append(ids, h.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// update replaces a document's html.
func (e *engine) update(t *testing.T, id, html string) {
	t.Helper()
	if e.solr() {
		b, _ := json.Marshal([]map[string]any{{"id": id, "html": map[string]any{"set": html}}})
		realengine.Do(t, "POST", e.indexURL()+"/update?commit=true", "application/json", b)
		return
	}
	b, _ := json.Marshal(map[string]any{"doc": map[string]any{"html": html}})
	realengine.Do(t, "POST", e.indexURL()+"/_update/"+url.PathEscape(id)+"?refresh=true", "application/json", b)
}

// add indexes new documents.
func (e *engine) add(t *testing.T, docs map[string]string) {
	t.Helper()
	if e.solr() {
		var all []map[string]any
		for id, html := range docs {
			all = append(all, map[string]any{"id": id, "html": html})
		}
		b, _ := json.Marshal(all)
		realengine.Do(t, "POST", e.indexURL()+"/update?commit=true", "application/json", b)
		return
	}
	for id, html := range docs {
		b, _ := json.Marshal(map[string]any{"id": id, "html": html})
		realengine.Do(t, "PUT", e.indexURL()+"/_doc/"+url.PathEscape(id)+"?refresh=true", "application/json", b)
	}
}

// remove deletes a document.
func (e *engine) remove(t *testing.T, id string) {
	t.Helper()
	if e.solr() {
		b, _ := json.Marshal(map[string]any{"delete": map[string]any{"id": id}})
		realengine.Do(t, "POST", e.indexURL()+"/update?commit=true", "application/json", b)
		return
	}
	realengine.Do(t, "DELETE", e.indexURL()+"/_doc/"+url.PathEscape(id)+"?refresh=true", "", nil)
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decoding %.300s: %v", b, err)
	}
}

// options (benchOptions) are the run options of the default configuration, as
// cmd/winnow builds them.
func options(t *testing.T, e *engine) indextag.Options { return benchOptions(t, e) }

func benchOptions(t testing.TB, e *engine) indextag.Options {
	t.Helper()
	c := config.Default()
	group, remove, err := wopts.Decisions(c)
	if err != nil {
		t.Fatal(err)
	}
	rank, err := wopts.Winners(c)
	if err != nil {
		t.Fatal(err)
	}
	target, err := indextag.ParseTarget(e.indexURL(), winnowKind(e.kind))
	if err != nil {
		t.Fatal(err)
	}
	return indextag.Options{Target: target, Signer: wopts.Signer(c), Group: group, Remove: remove, Rank: rank,
		Fields: wopts.CorpusOptions(c).Fields, MaxBackoff: 300 * time.Millisecond, RetryFor: 2 * time.Minute}
}

// expected are winnow dedup's groups of the same pages: each document's
// group ID and whether it wins, singletons included as groups of one
// (the ID of their own key, as dedup names a cluster).
type expected struct {
	group  map[string]string
	winner map[string]bool
}

// dedupGroups writes the pages to JSON Lines, runs winnow dedup on them
// and reads its clusters.
func dedupGroups(t *testing.T, e *engine, st map[string]stored) expected {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "pages.jsonl")
	f, err := os.Create(in)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]realengine.Doc{}
	for _, d := range e.docs {
		byID[d.ID] = d
	}
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range st {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		b, _ := json.Marshal(map[string]any{"id": id, "url": byID[id].URL, "html": st[id].html})
		f.Write(append(b, '\n'))
	}
	f.Close()
	out := filepath.Join(dir, "clusters.jsonl")
	cmd := exec.Command(winnowBin(t), "dedup", "-o", out, in)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("winnow dedup: %v: %s", err, b)
	}
	x := expected{group: map[string]string{}, winner: map[string]bool{}}
	rf, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	sc := bufio.NewScanner(rf)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var l offline.Line
		decode(t, sc.Bytes(), &l)
		for i, m := range l.Members {
			x.group[m.ID], x.winner[m.ID] = l.ID, i == 0
		}
	}
	for _, id := range ids {
		if _, ok := x.group[id]; !ok {
			x.group[id], x.winner[id] = fmt.Sprintf("%016x", offline.ClusterID(id)), true
		}
	}
	return x
}

// checkGroups checks that the index carries dedup's groups and that a
// collapse on winnow_group returns exactly their winners.
func checkGroups(t *testing.T, e *engine, st map[string]stored, x expected) {
	t.Helper()
	var winners []string
	for id, s := range st {
		if s.group != x.group[id] || s.winner != x.winner[id] {
			t.Errorf("%s: group %q winner %v, winnow dedup: %q winner %v", id, s.group, s.winner, x.group[id], x.winner[id])
		}
		if x.winner[id] {
			winners = append(winners, id)
		}
	}
	slices.Sort(winners)
	if got := e.collapsed(t); !slices.Equal(got, winners) {
		t.Errorf("collapse on winnow_group: %d hits %v\nwant dedup's %d winners %v", len(got), got, len(winners), winners)
	}
}

func forEachKind(t *testing.T, fn func(t *testing.T, kind string)) {
	for _, kind := range realengine.AllKinds() {
		t.Run(kind, func(t *testing.T) { fn(t, kind) })
	}
}

func TestApplyGivesDedupGroups(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		e := load(t, kind)
		before := e.state(t)
		o := options(t, e)
		if !e.solr() {
			// The kind is told by the engine itself.
			tg := o.Target
			tg.Kind = ""
			got, err := indextag.Detect(context.Background(), tg, o)
			if err != nil || got.Kind != kind {
				t.Errorf("Detect = %q, %v; want %q", got.Kind, err, kind)
			}
		}

		// A dry run writes nothing.
		rep, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatalf("dry run: %v", err)
		}
		if rep.Docs != len(e.docs) || rep.Writes.Planned != len(e.docs) || rep.Writes.Written != 0 {
			t.Errorf("dry run: %d docs, %d planned, %d written; want %d, %d, 0", rep.Docs, rep.Writes.Planned, rep.Writes.Written, len(e.docs), len(e.docs))
		}
		if after := e.state(t); !maps(before, after) {
			t.Errorf("dry run changed documents")
		}

		o.Apply = true
		o.Checkpoint = filepath.Join(t.TempDir(), "ck")
		if rep, err = indextag.Run(context.Background(), o); err != nil {
			t.Fatalf("apply: %v", err)
		}
		if rep.Writes.Written != len(e.docs) || len(rep.Writes.Failed) > 0 {
			t.Errorf("apply wrote %d of %d, failed %v", rep.Writes.Written, len(e.docs), rep.Writes.Failed)
		}
		st := e.state(t)
		checkGroups(t, e, st, dedupGroups(t, e, st))
		for id, s := range st {
			if s.winner && s.removable {
				t.Errorf("%s: a winner marked removable", id)
			}
			if s.probability == nil || *s.probability <= 0 || *s.probability > 1 {
				t.Errorf("%s: probability %v", id, s.probability)
			}
		}

		// A second run finds every tag in place and writes nothing.
		o.Checkpoint = filepath.Join(t.TempDir(), "ck2")
		if rep, err = indextag.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if rep.Writes.Written != 0 || rep.Writes.Unchanged != len(e.docs) {
			t.Errorf("second run wrote %d, found %d unchanged; want 0 and %d", rep.Writes.Written, rep.Writes.Unchanged, len(e.docs))
		}
	})
}

// maps reports whether two states hold the same documents at the same
// versions.
func maps(a, b map[string]stored) bool {
	if len(a) != len(b) {
		return false
	}
	for id, s := range a {
		if b[id].version != s.version || b[id].seqNo != s.seqNo || b[id].group != s.group {
			return false
		}
	}
	return true
}

// TestKillResume kills winnow index -apply with SIGKILL after it wrote a
// few batches; the same command again finishes the job: every document
// written once, with dedup's groups.
func TestKillResume(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		e := load(t, kind)
		before := e.state(t)
		dir := t.TempDir()
		ck := filepath.Join(dir, "ck")
		args := []string{"index", "-kind", winnowKind(kind), "-apply", "-checkpoint", ck, "-o", filepath.Join(dir, "first.json"), "-rate", "8", "-batch", "4", e.indexURL()}
		cmd := exec.Command(winnowBin(t), args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Wait for two acknowledged batches in the checkpoint.
		deadline := time.Now().Add(3 * time.Minute)
		for wroteLines(ck) < 2 {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no batch written within 3 minutes: %s", stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		cmd.Process.Kill()
		cmd.Wait()
		firstIDs := wroteIDs(t, ck)
		mid := e.state(t)
		tagged := 0
		for _, s := range mid {
			if s.group != "" {
				tagged++
			}
		}
		if tagged == 0 || tagged == len(e.docs) {
			t.Fatalf("after kill -9: %d of %d documents tagged; want some, not all", tagged, len(e.docs))
		}

		// The same command, without the rate, resumes.
		args = []string{"index", "-kind", winnowKind(kind), "-apply", "-checkpoint", ck, "-o", filepath.Join(dir, "second.json"), e.indexURL()}
		if out, err := exec.Command(winnowBin(t), args...).CombinedOutput(); err != nil {
			t.Fatalf("rerun: %v: %s", err, out)
		}
		var rep indextag.Report
		b, err := os.ReadFile(filepath.Join(dir, "second.json"))
		if err != nil {
			t.Fatal(err)
		}
		decode(t, b, &rep)
		if rep.Read != "checkpoint" {
			t.Errorf("rerun read by %q, want the checkpoint", rep.Read)
		}
		allIDs := wroteIDs(t, ck)
		secondIDs := allIDs[len(firstIDs):]
		for _, id := range secondIDs {
			if slices.Contains(firstIDs, id) {
				t.Errorf("%s written by both runs", id)
			}
		}
		w := rep.Writes
		if w.Resumed != len(firstIDs) || w.Written != len(secondIDs) || w.Resumed+w.Written+w.Unchanged != len(e.docs) || len(w.Failed) > 0 {
			t.Errorf("rerun: resumed %d (first run's log %d), written %d (log %d), unchanged %d, failed %v; want the %d documents once",
				w.Resumed, len(firstIDs), w.Written, len(secondIDs), w.Unchanged, w.Failed, len(e.docs))
		}
		st := e.state(t)
		if !e.solr() {
			// _version counts the writes of a document: one each.
			for id, s := range st {
				if s.version != before[id].version+1 {
					t.Errorf("%s: version %d, want %d (written once)", id, s.version, before[id].version+1)
				}
			}
		}
		checkGroups(t, e, st, dedupGroups(t, e, st))
	})
}

// wroteLines counts the acknowledged batches in a checkpoint.
func wroteLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte(`{"k":"wrote"`))
}

// wroteIDs lists the documents a checkpoint records as written, in order.
func wroteIDs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(line, []byte(`{"k":"wrote"`)) {
			continue
		}
		var l struct{ IDs []string }
		if json.Unmarshal(line, &l) == nil {
			ids = append(ids, l.IDs...)
		}
	}
	return ids
}

// uniquePage is an HTML page of words no other page holds.
func uniquePage(seed string) string {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><title>" + seed + "</title></head><body><main><p>")
	for i := range 300 {
		fmt.Fprintf(&b, "%s%d word%d ", seed, i, i*7919%1000)
	}
	b.WriteString("</p></main></body></html>")
	return b.String()
}

// TestChangedDocumentNotOverwritten changes a duplicate between the read
// and the write: its write conflicts, it is re-read, decided on its new
// page (now a group of its own) and its new page stays.
func TestChangedDocumentNotOverwritten(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		e := load(t, kind)
		const id = "sample://llvm/14/Benchmarking" // a duplicate of llvm/13's
		page := uniquePage("changed")
		o := options(t, e)
		o.Apply = true
		var read atomic.Int64
		o.Progress = func(stage string, n int) {
			if stage == "reading" && read.Add(int64(n)) == int64(len(e.docs)) {
				e.update(t, id, page)
			}
		}
		rep, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Writes.Reread < 1 || rep.Writes.Changed != 1 {
			t.Errorf("re-read %d, decided again %d; want the changed document once", rep.Writes.Reread, rep.Writes.Changed)
		}
		st := e.state(t)
		s := st[id]
		if s.html != page {
			t.Errorf("%s: its new page was overwritten", id)
		}
		if want := fmt.Sprintf("%016x", offline.ClusterID(id)); s.group != want || !s.winner {
			t.Errorf("%s: group %s winner %v; want a group of its own %s", id, s.group, s.winner, want)
		}
		if st["sample://llvm/13/Benchmarking"].group == "" {
			t.Errorf("its former winner was not tagged")
		}
	})
}

// TestBackPressure puts a loopback proxy that answers 429 to the first
// requests of every kind in front of the engine: the run retries and tags
// every document.
func TestBackPressure(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		e := load(t, kind)
		target, _ := url.Parse(e.base)
		target.Path = ""
		rp := httputil.NewSingleHostReverseProxy(target)
		var refused, itemsRejected atomic.Int64
		storm := map[string]int{} // requests refused by route
		var mu sync.Mutex
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route := r.Method + " " + lastSegment(r.URL.Path)
			mu.Lock()
			n := storm[route]
			storm[route]++
			mu.Unlock()
			if n < 3 && r.Method != "DELETE" { // a DELETE is a best-effort cleanup, not retried
				refused.Add(1)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusTooManyRequests)
				fmt.Fprint(w, `{"error":{"type":"es_rejected_execution_exception","reason":"test storm"},"status":429}`)
				return
			}
			if n == 3 && lastSegment(r.URL.Path) == "_bulk" {
				// Then every item of one bulk request rejected, as a busy
				// write pool answers.
				body, _ := io.ReadAll(r.Body)
				items := (bytes.Count(body, []byte("\n")) + 1) / 2
				itemsRejected.Add(int64(items))
				var b strings.Builder
				b.WriteString(`{"took":1,"errors":true,"items":[`)
				for i := range items {
					if i > 0 {
						b.WriteString(",")
					}
					b.WriteString(`{"update":{"status":429,"error":{"type":"es_rejected_execution_exception","reason":"rejected execution (queue capacity 1)"}}}`)
				}
				b.WriteString("]}")
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, b.String())
				return
			}
			rp.ServeHTTP(w, r)
		}))
		defer srv.Close()
		rep, err := applyThrough(t, e, srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Writes.Written != len(e.docs) || len(rep.Writes.Failed) > 0 {
			t.Errorf("wrote %d of %d, failed %v", rep.Writes.Written, len(e.docs), rep.Writes.Failed)
		}
		if got := rep.Writes.Retries["HTTP 429"]; got != int(refused.Load()) || got < 6 {
			t.Errorf("retries %v; the proxy refused %d requests", rep.Writes.Retries, refused.Load())
		}
		if !e.solr() {
			if got := rep.Writes.Retries["rejected or re-read item"]; got < int(itemsRejected.Load()) || got == 0 {
				t.Errorf("item retries %d; the proxy rejected %d bulk items", got, itemsRejected.Load())
			}
		}
		st := e.state(t)
		checkGroups(t, e, st, dedupGroups(t, e, st))
	})
}

// TestReadAnswerCut cuts one answer of the read mid-body, as a proxy, a
// load balancer or a network that drops the connection does, in front of
// each real engine holding four copies of the pages (212 documents, three
// pages of 100). A cut first page is read again whole: no document kept
// twice (they were: the cut answer's hits stayed and the retry's were
// added, and the job failed on "two documents of _id"). A cut later page
// is read again where the cursor can be asked for the same page again
// (point in time with search_after, cursorMark); a scroll continuation
// cannot (the engine moved the scroll when it served the lost answer, so
// the same request reads the next page: a page of documents was lost,
// silently), and the job stops with an error that says so.
func TestReadAnswerCut(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		base := realengine.Start(t, kind)
		sample, err := realengine.Sample("http://127.0.0.1:8081")
		if err != nil {
			t.Fatal(err)
		}
		var docs []realengine.Doc
		for c := range 4 {
			for _, d := range sample {
				d.ID = fmt.Sprintf("%s#copy%d", d.ID, c)
				docs = append(docs, d)
			}
		}
		for _, page := range []int{1, 2} {
			t.Run(fmt.Sprintf("page%d", page), func(t *testing.T) {
				name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
				e := &engine{kind: kind, base: strings.TrimSuffix(base, "/"), index: name, docs: docs}
				realengine.Load(t, kind, e.base, name, docs)
				target, _ := url.Parse(e.base)
				var reads atomic.Int64
				var cutPath atomic.Value
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					body, _ := io.ReadAll(r.Body)
					read := strings.HasSuffix(r.URL.Path, "/_search/scroll") ||
						strings.HasSuffix(r.URL.Path, "/_search") && bytes.Contains(body, []byte(`"size":100`)) ||
						strings.HasSuffix(r.URL.Path, "/select") && r.URL.Query().Has("cursorMark")
					u := *target
					u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
					req, _ := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
					req.Header = r.Header.Clone()
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						http.Error(w, err.Error(), http.StatusBadGateway)
						return
					}
					ans, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					for k, v := range resp.Header {
						w.Header()[k] = v
					}
					w.Header().Set("Content-Length", fmt.Sprint(len(ans)))
					w.WriteHeader(resp.StatusCode)
					if read && reads.Add(1) == int64(page) {
						cutPath.Store(r.URL.Path)
						w.Write(ans[:len(ans)/2])
						panic(http.ErrAbortHandler) // the connection dropped mid-answer
					}
					w.Write(ans)
				}))
				defer srv.Close()
				rep, err := applyThrough(t, e, srv.URL)
				cut, _ := cutPath.Load().(string)
				if cut == "" {
					t.Fatalf("no read answer was cut (%d reads)", reads.Load())
				}
				if strings.HasSuffix(cut, "/_search/scroll") {
					if err == nil || !strings.Contains(err.Error(), "run the job again") {
						t.Fatalf("a cut scroll continuation: err = %v, want the error that the scroll moved past the lost page (report %+v)", err, rep)
					}
					return
				}
				if err != nil {
					t.Fatalf("cut %s answer %d: %v", cut, page, err)
				}
				if rep.Writes.Written != len(docs) || len(rep.Writes.Failed) > 0 {
					t.Errorf("cut %s answer %d: wrote %d of %d, failed %v", cut, page, rep.Writes.Written, len(docs), rep.Writes.Failed)
				}
			})
		}
	})
}

// applyThrough runs winnow index -apply on e's index through the proxy
// at proxyURL (scheme and host), which stands in front of e's engine.
func applyThrough(t *testing.T, e *engine, proxyURL string) (*indextag.Report, error) {
	t.Helper()
	target, _ := url.Parse(e.base)
	proxied := *e
	proxied.base = proxyURL + strings.TrimPrefix(e.base, target.Scheme+"://"+target.Host)
	o := options(t, &proxied)
	o.Apply = true
	return indextag.Run(context.Background(), o)
}

func lastSegment(p string) string {
	p = strings.TrimSuffix(p, "/")
	return p[strings.LastIndex(p, "/")+1:]
}

// TestSince tags new documents incrementally: a near-duplicate joins its
// page's existing group, a new page founds its own, and a group whose
// winner was deleted elects a new one.
func TestSince(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		e := load(t, kind)
		o := options(t, e)
		o.Apply = true
		if _, err := indextag.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		st := e.state(t)
		// The sequence number (Solr: _version_) after tagging.
		field, last := "_seq_no", int64(0)
		for _, s := range st {
			last = max(last, s.seqNo)
			if e.solr() {
				last = max(last, s.version)
			}
		}
		if e.solr() {
			field = "_version_"
		}
		const winner = "sample://llvm/13/FaultMaps"
		if !st[winner].winner {
			t.Fatalf("%s is not a winner: %+v", winner, st[winner])
		}
		group := st[winner].group
		near := strings.Replace(st[winner].html, "</body>", "<p>One more closing sentence for this copy of the page.</p></body>", 1)
		// The winner of another group is deleted.
		const gone = "sample://llvm/13/CommandGuide/llvm-as"
		if !st[gone].winner {
			t.Fatalf("%s is not a winner", gone)
		}
		goneGroup := st[gone].group
		e.remove(t, gone)
		e.add(t, map[string]string{"new/near": near, "new/alone": uniquePage("alone")})

		o.Since = &indextag.Since{Field: field, Value: fmt.Sprint(last)}
		rep, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Assigned != 1 || rep.Replaced != 1 {
			t.Errorf("assigned %d, replaced %d; want 1 and 1", rep.Assigned, rep.Replaced)
		}
		st = e.state(t)
		if s := st["new/near"]; s.group != group || s.winner {
			t.Errorf("new/near: group %s winner %v; want %s's group %s", s.group, s.winner, winner, group)
		}
		if s, want := st["new/alone"], fmt.Sprintf("%016x", offline.ClusterID("new/alone")); s.group != want || !s.winner {
			t.Errorf("new/alone: group %s winner %v; want its own %s", s.group, s.winner, want)
		}
		var members, winners []string
		newGroup := ""
		for id, s := range st {
			if !strings.Contains(id, "CommandGuide/llvm-as") {
				continue
			}
			members = append(members, id)
			if s.winner {
				winners = append(winners, id)
				newGroup = s.group
			}
			if s.group == goneGroup {
				t.Errorf("%s still in the deleted winner's group", id)
			}
		}
		if len(winners) != 1 || newGroup != fmt.Sprintf("%016x", offline.ClusterID(winners[0])) {
			t.Errorf("llvm-as pages %v: winners %v (group %s); want one new winner", members, winners, newGroup)
		}
	})
}

// TestInterrupt stops winnow index -apply with SIGINT (Ctrl-C): it exits
// non-zero with its summary, its checkpoint ends on a complete line, and
// the same command resumes it.
func TestInterrupt(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		e := load(t, kind)
		dir := t.TempDir()
		ck := filepath.Join(dir, "ck")
		cmd := exec.Command(winnowBin(t), "index", "-kind", winnowKind(kind), "-apply", "-checkpoint", ck, "-rate", "8", "-batch", "4", e.indexURL())
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(3 * time.Minute)
		for wroteLines(ck) < 1 {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("no batch written within 3 minutes: %s", stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute): // far beyond the second it takes; a hang fails
			cmd.Process.Kill()
			t.Fatalf("still running a minute after SIGINT: %s", stderr.String())
		}
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Errorf("exit after SIGINT: %v, want status 1", err)
		}
		for _, want := range []string{"winnow index: wrote ", "pages/s", "the checkpoint " + ck + " resumes the run"} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
			}
		}
		b, _ := os.ReadFile(ck)
		if len(b) == 0 || b[len(b)-1] != '\n' || bytes.Contains(b, []byte(`{"k":"done"}`)) {
			t.Errorf("checkpoint after SIGINT does not end on a complete line, or says done")
		}
		logged := len(wroteIDs(t, ck))
		out := filepath.Join(dir, "rerun.json")
		if b, err := exec.Command(winnowBin(t), "index", "-kind", winnowKind(kind), "-apply", "-checkpoint", ck, "-o", out, e.indexURL()).CombinedOutput(); err != nil {
			t.Fatalf("rerun: %v: %s", err, b)
		}
		var rep indextag.Report
		rb, _ := os.ReadFile(out)
		decode(t, rb, &rep)
		if w := rep.Writes; w.Resumed != logged || w.Resumed+w.Written+w.Unchanged != len(e.docs) {
			t.Errorf("rerun: resumed %d (logged %d), written %d, unchanged %d; want the %d documents", w.Resumed, logged, w.Written, w.Unchanged, len(e.docs))
		}
		st := e.state(t)
		checkGroups(t, e, st, dedupGroups(t, e, st))
	})
}

// TestFetch indexes only the pages' addresses: with a fetcher the pages
// are fetched (from a loopback site the fetcher is opened to) and grouped
// as winnow dedup groups the pages themselves; with the SSRF guard closed,
// as it is by default, every fetch is refused and counted.
func TestFetch(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		base := realengine.Start(t, kind)
		pages := map[string]string{}
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			html, ok := pages[r.URL.Path]
			if !ok {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, html)
		}))
		defer site.Close()
		docs, err := realengine.Sample(site.URL)
		if err != nil {
			t.Fatal(err)
		}
		bare := make([]realengine.Doc, len(docs))
		for i, d := range docs {
			u, _ := url.Parse(d.URL)
			pages[u.Path] = d.HTML
			bare[i] = realengine.Doc{ID: d.ID, URL: d.URL}
		}
		name := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
		e := &engine{kind: kind, base: strings.TrimSuffix(base, "/"), index: name, docs: docs}
		realengine.Load(t, kind, e.base, name, bare)

		o := options(t, e)
		guarded, err := fetch.New(fetch.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer guarded.Close()
		o.Fetch = guarded
		rep, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Docs != 0 || rep.Skipped["fetch: refused by SSRF guard"] != len(docs) {
			t.Errorf("behind the SSRF guard: %d signed, skipped %v; want every fetch refused", rep.Docs, rep.Skipped)
		}

		open, err := fetch.New(fetch.Options{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
		if err != nil {
			t.Fatal(err)
		}
		defer open.Close()
		o.Fetch, o.Apply = open, true
		if rep, err = indextag.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if rep.Fetched != len(docs) || rep.Writes.Written != len(docs) {
			t.Errorf("fetched %d, wrote %d; want %d", rep.Fetched, rep.Writes.Written, len(docs))
		}
		st := e.state(t)
		for id := range st {
			s := st[id]
			s.html = pages[mustPath(t, docURL(docs, id))] // dedup reads the pages as fetched
			st[id] = s
		}
		checkGroups(t, e, st, dedupGroups(t, e, st))
	})
}

func docURL(docs []realengine.Doc, id string) string {
	for _, d := range docs {
		if d.ID == id {
			return d.URL
		}
	}
	return ""
}

func mustPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Path
}

// TestMapping: -apply adds the fields to a mapping that lacks them, and
// refuses, before writing anything, an index where a field of that name
// has another type or whose _source leaves fields out.
func TestMapping(t *testing.T) {
	for _, kind := range []string{"opensearch", "elasticsearch"} {
		t.Run(kind, func(t *testing.T) {
			base := strings.TrimSuffix(realengine.Start(t, kind), "/")
			docs, err := realengine.Sample("")
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name, mapping, wantErr string
			}{
				{"bare", `{"properties":{"id":{"type":"keyword"},"html":{"type":"text","index":false}}}`, ""},
				{"clash", `{"properties":{"id":{"type":"keyword"},"html":{"type":"text","index":false},"winnow_group":{"type":"long"}}}`, "not winnow's field"},
				// An update indexes a document again from its _source: the
				// id left out of it would no longer be found.
				{"excludes", `{"_source":{"excludes":["id"]},"properties":{"id":{"type":"keyword"},"html":{"type":"text","index":false}}}`, "would be lost"},
			} {
				index := "mapping-" + tc.name + "-" + kind
				realengine.Do(t, "DELETE", base+"/"+index+"?ignore_unavailable=true", "", nil)
				realengine.Do(t, "PUT", base+"/"+index, "application/json", []byte(`{"settings":{"number_of_shards":1,"number_of_replicas":0},"mappings":`+tc.mapping+`}`))
				var nd bytes.Buffer
				for _, d := range docs[:10] {
					b1, _ := json.Marshal(map[string]any{"index": map[string]any{"_index": index, "_id": d.ID}})
					b2, _ := json.Marshal(map[string]any{"id": d.ID, "html": d.HTML})
					nd.Write(append(append(b1, '\n'), append(b2, '\n')...))
				}
				realengine.Do(t, "POST", base+"/_bulk?refresh=true", "application/x-ndjson", nd.Bytes())
				e := &engine{kind: kind, base: base, index: index}
				o := options(t, e)
				o.Apply = true
				rep, err := indextag.Run(context.Background(), o)
				if tc.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tc.wantErr) || rep.Writes.Written != 0 {
						t.Errorf("%s: err %v, wrote %d; want %q and nothing written", tc.name, err, rep.Writes.Written, tc.wantErr)
					}
					continue
				}
				if err != nil || rep.Writes.Written != 10 {
					t.Fatalf("%s: %v, wrote %d", tc.name, err, rep.Writes.Written)
				}
				var m map[string]struct {
					Mappings struct {
						Properties map[string]struct{ Type string } `json:"properties"`
					} `json:"mappings"`
				}
				decode(t, realengine.Do(t, "GET", base+"/"+index+"/_mapping", "", nil), &m)
				want := map[string]string{"winnow_group": "keyword", "winnow_winner": "boolean", "winnow_removable": "boolean", "winnow_probability": "float"}
				for f, typ := range want {
					if got := m[index].Mappings.Properties[f].Type; got != typ {
						t.Errorf("%s: %s mapped as %q, want %q", tc.name, f, got, typ)
					}
				}
			}
		})
	}
}

// TestWritesRefused: an engine that refuses every write past the retry
// time ends the run without an error (the index was read), every
// document counted as failed by the reason.
func TestWritesRefused(t *testing.T) {
	e := load(t, "opensearch")
	target, _ := url.Parse(e.base)
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lastSegment(r.URL.Path) == "_bulk" {
			http.Error(w, `{"error":"busy"}`, http.StatusServiceUnavailable)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer srv.Close()
	proxied := *e
	proxied.base = srv.URL
	o := options(t, &proxied)
	o.Apply, o.RetryFor, o.Batch = true, time.Second, 10
	rep, err := indextag.Run(context.Background(), o)
	if err != nil {
		t.Fatalf("Run: %v; want no error, the index was read", err)
	}
	if got := rep.Writes.Failed["HTTP 503"]; got != len(e.docs) || rep.Writes.Written != 0 {
		t.Errorf("failed %v, written %d; want all %d failed with HTTP 503", rep.Writes.Failed, rep.Writes.Written, len(e.docs))
	}
}

// TestSourceWholeOrFields: an Elasticsearch or OpenSearch read asks for
// the whole _source while the fields it reads are most of it (the
// engine then sends the stored bytes as they are instead of parsing and
// writing each document again), and for its fields once the documents
// carry a large field it does not read; both find the same groups.
func TestSourceWholeOrFields(t *testing.T) {
	forEachKind(t, func(t *testing.T, kind string) {
		if kind == "solr" || kind == realengine.SolrCloud {
			t.Skip("Solr returns the stored fields fl names; there is no _source")
		}
		e := load(t, kind)
		o := options(t, e)
		whole, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if whole.Source != "whole" {
			t.Errorf("pages alone: source %q, want whole", whole.Source)
		}
		big := strings.Repeat("an attachment winnow does not read ", 8<<10)
		var bulk bytes.Buffer
		for _, d := range e.docs {
			action, _ := json.Marshal(map[string]any{"update": map[string]any{"_index": e.index, "_id": d.ID}})
			doc, _ := json.Marshal(map[string]any{"doc": map[string]any{"attachment": big}})
			bulk.Write(action)
			bulk.WriteByte('\n')
			bulk.Write(doc)
			bulk.WriteByte('\n')
		}
		realengine.Do(t, "POST", e.base+"/_bulk?refresh=true", "application/x-ndjson", bulk.Bytes())
		fields, err := indextag.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if fields.Source != "fields" {
			t.Errorf("with a large unread field: source %q, want fields", fields.Source)
		}
		if fields.Docs != whole.Docs || fields.Clusters != whole.Clusters || fields.Duplicates != whole.Duplicates || fields.Removable != whole.Removable {
			t.Errorf("fields read: %d docs, %d clusters, %d duplicates, %d removable; whole: %d, %d, %d, %d",
				fields.Docs, fields.Clusters, fields.Duplicates, fields.Removable, whole.Docs, whole.Clusters, whole.Duplicates, whole.Removable)
		}
	})
}

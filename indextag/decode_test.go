package indextag

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/winnow-search/winnow/corpus"
)

// TestDecodeStream checks that the answers decoded as they stream give
// the pages, IDs, versions and tags that encoding/json's decoding of the
// same answers gives: strings with escapes, invalid UTF-8, duplicate
// names, numbers, nulls and Solr's lists.
func TestDecodeStream(t *testing.T) {
	src := `{"id":"a\u00e9","url":"http://x/\"q\"","html":"<p>caf\u00e9 \ud83d\ude00 \ud800 \n` + "\xff" + `</p>","popularity":2.5,"html":"<p>last \\ wins</p>",` +
		`"winnow_group":"00ff","winnow_winner":true,"winnow_removable":"true","winnow_probability":0.75,"nested":{"a":[1,"b"]}}`
	es := `{"pit_id":"P1","took":3,"_shards":{"total":1},"hits":{"total":{"value":3},"max_score":null,"hits":[` +
		`{"_index":"i","_id":"1","_score":null,"_seq_no":17,"_primary_term":2,"_source":` + src + `,"sort":[5,"x"]},` +
		`{"_id":"2","_seq_no":0,"_primary_term":1,"_source":{"text":"plain","winnow_group":["g",1]},"sort":[6]},` +
		`{"_id":"3","_source":{}}]}}`
	var got searchAnswer
	if err := decodeStream(strings.NewReader(es), &got); err != nil {
		t.Fatal(err)
	}
	var want struct {
		PitID string `json:"pit_id"`
		Hits  struct {
			Hits []struct {
				ID          string                     `json:"_id"`
				Source      map[string]json.RawMessage `json:"_source"`
				SeqNo       int64                      `json:"_seq_no"`
				PrimaryTerm int64                      `json:"_primary_term"`
				Sort        json.RawMessage            `json:"sort"`
			} `json:"hits"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(es), &want); err != nil {
		t.Fatal(err)
	}
	if got.PitID != want.PitID || len(got.Hits) != len(want.Hits.Hits) {
		t.Fatalf("pit %q, %d hits; want %q, %d", got.PitID, len(got.Hits), want.PitID, len(want.Hits.Hits))
	}
	for i, w := range want.Hits.Hits {
		g := got.Hits[i]
		if g.ID != w.ID || g.SeqNo != w.SeqNo || g.PrimaryTerm != w.PrimaryTerm || !bytes.Equal(g.Sort, w.Sort) {
			t.Errorf("hit %d: %q %d %d %s; want %q %d %d %s", i, g.ID, g.SeqNo, g.PrimaryTerm, g.Sort, w.ID, w.SeqNo, w.PrimaryTerm, w.Sort)
		}
		sameStored(t, g.Source, rawFields(w.Source))
	}
	if got.Hits[0].Source["html"].Str != "<p>last \\ wins</p>" {
		t.Errorf("duplicate name: %q, want the last", got.Hits[0].Source["html"].Str)
	}

	// Solr: a list of one value reads as that value.
	solrBody := `{"responseHeader":{"status":0},"response":{"numFound":2,"start":0,"docs":[` +
		`{"id":"d1","_version_":1850000000000000001,"html":["<p>one \"v\"</p>"],"url":"http://x/1","winnow_group":["g1"],"winnow_winner":[true]},` +
		`{"id":7,"_version_":3,"text":["a","b"],"html":"<p>\u00e9</p>"}]},"nextCursorMark":"AoE="}`
	var sa solrAnswer
	if err := decodeStream(strings.NewReader(solrBody), &sa); err != nil {
		t.Fatal(err)
	}
	if sa.NumFound != 2 || sa.NextCursorMark != "AoE=" || len(sa.Docs) != 2 {
		t.Fatalf("solr answer %d %q %d docs", sa.NumFound, sa.NextCursorMark, len(sa.Docs))
	}
	h, err := solrHit("id", "", sa.Docs[0])
	if err != nil || h.id != "d1" || h.ver.Version != 1850000000000000001 {
		t.Errorf("solr hit %q %d, %v", h.id, h.ver.Version, err)
	}
	d, err := corpus.DefaultJSONLFields.Object(h.source, 0)
	if err != nil || string(d.Body) != `<p>one "v"</p>` || d.URL != "http://x/1" {
		t.Errorf("solr doc %+v, %v", d, err)
	}
	if tags, ok := storedTags(h.source); !ok || tags.Group != "g1" || !tags.Winner {
		t.Errorf("solr tags %+v %v", tags, ok)
	}
	h, err = solrHit("id", "", sa.Docs[1])
	if err != nil || h.id != "7" || h.ver.Version != 3 {
		t.Errorf("solr hit %q %d, %v", h.id, h.ver.Version, err)
	}
	if v := h.source["text"]; string(v.Raw) != `["a","b"]` {
		t.Errorf("a list of two: %+v", v)
	}

	for _, bad := range []string{`{"hits":{"hits":[{"_id":"1","_source":{"html":"x}]}}`, `{"hits":{"hits":[{"_seq_no":"x"}]}}`, `[1]`} {
		var a searchAnswer
		if err := decodeStream(strings.NewReader(bad), &a); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if _, err := solrHit("id", "", map[string]corpus.Field{"html": {Str: "x"}}); err == nil {
		t.Error("a Solr document without its key: no error")
	}
}

// sameStored checks that two readings of a stored document give the same
// page and tags.
func sameStored(t *testing.T, got, want map[string]corpus.Field) {
	t.Helper()
	f := corpus.DefaultJSONLFields
	gd, gerr := f.Object(got, 0)
	wd, werr := f.Object(want, 0)
	if !reflect.DeepEqual(gd, wd) || (gerr == nil) != (werr == nil) {
		t.Errorf("page %+v, %v; want %+v, %v", gd, gerr, wd, werr)
	}
	gt, gok := storedTags(got)
	wt, wok := storedTags(want)
	if !reflect.DeepEqual(gt, wt) || gok != wok {
		t.Errorf("tags %+v %v; want %+v %v", gt, gok, wt, wok)
	}
}

// TestSolrGetOne decodes Solr's real-time get of one id, which answers
// with the document alone ({"doc": ...}, null when there is none), not a
// list: a lone document re-read after a conflict was taken for deleted
// and left untagged. The answers are Solr 9.10.1's, to
// /get?id=sample://llvm/13/FaultMaps&fl=id,_version_,page and /get?id=nope.
func TestSolrGetOne(t *testing.T) {
	var one solrAnswer
	body := "{\n  \"doc\":\n  {\n    \"id\":\"sample://llvm/13/FaultMaps\",\n    \"page\":\"FaultMaps\",\n    \"_version_\":1883219243156111360}}"
	if err := decodeStream(strings.NewReader(body), &one); err != nil {
		t.Fatal(err)
	}
	if len(one.Docs) != 1 {
		t.Fatalf("one document read as %d", len(one.Docs))
	}
	if h, err := solrHit("id", "page", one.Docs[0]); err != nil || h.id != "sample://llvm/13/FaultMaps" || h.routing != "FaultMaps" || h.ver.Version != 1883219243156111360 {
		t.Errorf("solr hit %q routing %q version %d, %v", h.id, h.routing, h.ver.Version, err)
	}
	var none solrAnswer
	if err := decodeStream(strings.NewReader("{\n  \"doc\":null}"), &none); err != nil || len(none.Docs) != 0 {
		t.Errorf("no document: %d read, %v", len(none.Docs), err)
	}
}

// solrPartialAnswer is Solr 9.10.1's answer to a read by cursorMark of a
// SolrCloud collection one of whose two shards was down, its /select
// defaulting to shards.tolerant=true: 34 of 53 documents, a 200.
const solrPartialAnswer = `{
  "responseHeader":{
    "zkConnected":true,
    "partialResults":true,
    "status":0,
    "QTime":59,
    "params":{
      "q":"*:*",
      "fl":"id,_version_",
      "cursorMark":"*",
      "sort":"id asc",
      "rows":"1",
      "wt":"json"}},
  "response":{"numFound":34,"start":0,"numFoundExact":true,"docs":[
      {
        "id":"sample://llvm/13/Benchmarking",
        "_version_":1883221990746095616}]
  },
  "nextCursorMark":"AoE9c2FtcGxlOi8vbGx2bS8xMy9CZW5jaG1hcmtpbmc="}`

// TestSolrPartial: a read whose answer says partialResults (a shard that
// did not answer, tolerated; a time limit) ends with an error: it was
// taken for the whole index, and its documents grouped and tagged
// without the missing shard's.
func TestSolrPartial(t *testing.T) {
	var a solrAnswer
	if err := decodeStream(strings.NewReader(solrPartialAnswer), &a); err != nil || !a.Partial || len(a.Docs) != 1 {
		t.Fatalf("partial answer: partial %v, %d docs, %v", a.Partial, len(a.Docs), err)
	}
	var whole solrAnswer
	if err := decodeStream(strings.NewReader(strings.Replace(solrPartialAnswer, `"partialResults":true,`, "", 1)), &whole); err != nil || whole.Partial {
		t.Fatalf("whole answer: partial %v, %v", whole.Partial, err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/solr/c/schema/uniquekey":
			io.WriteString(w, `{"uniqueKey":"id"}`)
		case "/solr/c/select":
			io.WriteString(w, solrPartialAnswer)
		default:
			http.Error(w, `{"error":{"msg":"Solr instance is not running in SolrCloud mode.","code":400}}`, 400)
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/solr")
	s := &solr{c: newConn(u, Options{}), core: "c"}
	if _, err := s.count(context.Background(), selector{}); err == nil || !strings.Contains(err.Error(), "partial results") {
		t.Errorf("count: %v; want partial results refused", err)
	}
	n := 0
	err := s.scan(context.Background(), selector{}, nil, 1, func(hit) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "partial results") || n != 0 {
		t.Errorf("scan: %v, %d documents; want partial results refused before any", err, n)
	}
}

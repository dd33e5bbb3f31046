package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/winnow-search/winnow/proxy/engine"
)

// probe is one request sent byte for byte to the gateway.
type probe struct {
	method, uri string
	ctype, body string
}

// esWriteProbes are requests to an Elasticsearch- or OpenSearch-shaped
// engine that are not searches, each a way found to slip a write, an
// admin call or a second engine request past a gateway that looked at
// the method and the last path segment only.
var esWriteProbes = []probe{
	{method: "POST", uri: "/idx/_doc/scroll", body: `{"a":1}`},
	{method: "POST", uri: "/_security/user/scroll", body: `{"password":"x12345","roles":["superuser"]}`},
	{method: "POST", uri: "/idx/_doc/_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc/_count", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc/_msearch", body: `{"a":1}`},
	{method: "PUT", uri: "/idx/_doc/1", body: `{"a":1}`},
	{method: "DELETE", uri: "/idx"},
	{method: "GET", uri: "/idx"},
	{method: "POST", uri: "/_bulk", body: "{\"index\":{\"_index\":\"idx\"}}\n{\"a\":1}\n"},
	{method: "PUT", uri: "/_cluster/settings", body: `{}`},
	{method: "GET", uri: "/_cat/indices"},
	{method: "GET", uri: "/_nodes"},
	{method: "GET", uri: "/idx/_doc/1"},
	{method: "GET", uri: "/idx/_mapping"},
	{method: "POST", uri: "/idx/_delete_by_query", body: `{"query":{"match_all":{}}}`},
	{method: "POST", uri: "/idx/_update_by_query", body: `{}`},
	{method: "POST", uri: "/idx/_async_search", body: `{}`},
	{method: "POST", uri: "/_search/template", body: `{}`},
	{method: "PUT", uri: "/_search/scroll", body: `{}`},
	{method: "DELETE", uri: "/idx/_search"},
	{method: "PUT", uri: "/idx/_search", body: `{}`},
	{method: "post", uri: "/idx/_doc", body: `{}`},
	{method: "POST", uri: "/idx/_search/../_doc", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc/../_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx/%2e%2e/_doc/_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc/%2e%2e/_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx%2F_doc/_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc%2f_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx%252F_doc/_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc%5C_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx;/_search", body: `{"a":1}`},
	{method: "POST", uri: "/idx/_doc;/_search", body: `{"a":1}`},
	{method: "POST", uri: "//_search", body: `{}`},
	{method: "POST", uri: "/idx//_search", body: `{}`},
	{method: "POST", uri: "/idx/_search/", body: `{}`},
	{method: "POST", uri: "/IDX/_search", body: `{}`},
	{method: "POST", uri: "/idx/_SEARCH", body: `{}`},
	{method: "POST", uri: "/_Search", body: `{}`},
	{method: "POST", uri: "/.security/_search", body: `{}`},
	{method: "POST", uri: "/%2esecurity-7/_search", body: `{}`},
	{method: "POST", uri: "/_security/_search", body: `{}`},
	{method: "POST", uri: "/%5fsecurity/_search", body: `{}`},
	{method: "POST", uri: "/idx%00/_search", body: `{}`},
	{method: "POST", uri: "/idx%20x/_search", body: `{}`},
	{method: "POST", uri: "http://127.0.0.1/idx/_doc", body: `{}`},
	{method: "DELETE", uri: "/_search/scroll/..%2f..%2fidx"},
	{method: "DELETE", uri: "/_search/scroll/../../idx"},
	{method: "GET", uri: "/_search/scroll/a/b"},
	{method: "POST", uri: "/idx/_pit/x", body: `{}`},
	{method: "PUT", uri: "/idx/_pit"},
	{method: "DELETE", uri: "/idx/_pit"},
	{method: "POST", uri: "/_pit"},
	{method: "OPTIONS", uri: "/_search"},
	{method: "PATCH", uri: "/_search", body: `{}`},
	// Clearing every client's scrolls or points in time, not one's own.
	{method: "DELETE", uri: "/_search/scroll/_all"},
	{method: "DELETE", uri: "/_search/scroll/abc,_all"},
	{method: "DELETE", uri: "/_search/scroll?scroll_id=_all"},
	{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":"_all"}`},
	{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":["_all"]}`},
	{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":/**/"_all"}`},
	{method: "DELETE", uri: "/_search/scroll", ctype: "application/yaml", body: "scroll_id: _all\n"},
	{method: "DELETE", uri: "/_search/point_in_time/_all"},
	{method: "GET", uri: "/_search/point_in_time/_all"},
	{method: "DELETE", uri: "/_search/point_in_time", body: `{"pit_id":["_all"]}`},
	{method: "DELETE", uri: "/_pit", body: `{"id":"_all"}`},
	// System and hidden indices named in a multi-search or opened by
	// expand_wildcards.
	{method: "POST", uri: "/_msearch", body: "{\"index\":\".security\"}\n{}\n"},
	{method: "POST", uri: "/idx/_msearch", body: "{\"indices\":\".security\"}\n{}\n"},
	{method: "POST", uri: "/_msearch", body: "{\"index\":[\"idx\",\".security\"]}\r\n{}\r\n"},
	{method: "POST", uri: "/_msearch", body: "{\"index\":\".security\",\"index\":\"idx\"}\n{}\n"},
	{method: "POST", uri: "/_msearch", body: "{\"index\":/**/\".security\"}\n{}\n"},
	{method: "POST", uri: "/_msearch", body: "\n{}\n{\"index\":\".security\"}\n{}\n"},
	{method: "POST", uri: "/_msearch", body: "{\"index\":\"idx\"}\n{}\n{\"index\":\"idx*\",\"expand_wildcards\":\"all\"}\n{}\n"},
	{method: "POST", uri: "/_msearch", body: "{\"index\":\"idx\"} {\"index\":\".security\"}\n{}\n"},
	{method: "GET", uri: "/idx*/_search?expand_wildcards=all"},
	{method: "GET", uri: "/_count?expand_wildcards=open,hidden"},
	// A body in the query string, past the gate's look at the body.
	{method: "DELETE", uri: "/_search/scroll?source=%7B%22scroll_id%22:%22_all%22%7D&source_content_type=application/json"},
	// Cross-cluster and selector expressions: with no remote cluster,
	// Elasticsearch 8.19 searches every local index, dot-named ones
	// too, for "*:x" and "_all::data".
	{method: "GET", uri: "/*:.security/_search"},
	{method: "GET", uri: "/*:idx/_search"},
	{method: "GET", uri: "/idx,*:idx/_count"},
	{method: "GET", uri: "/_all::data/_search"},
	{method: "GET", uri: "/idx::failures/_search"},
	{method: "POST", uri: "/_msearch", body: "{\"index\":\"*:idx\"}\n{}\n"},
	// A search body reading another index: a yes/no answer on its
	// documents (terms lookup, more_like_this, geo_shape, percolate,
	// pinned), its fields in the hits (a lookup runtime field), or
	// whether it exists (indices_boost).
	{method: "POST", uri: "/idx/_search", body: `{"query":{"terms":{"user":{"index":".security","id":"1","path":"p"}}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"terms":{"user":{"id":"1","path":"p","ind\u0065x":".security"}}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"terms":{"user":{"index":"*","id":"1","path":"p"}}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"terms":{"user":{"index":"idx","index":".security","id":"1","path":"p"}}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"bool":{"filter":[{"terms":{"user":{"index":"r:idx","id":"1","path":"p"}}}]}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"more_like_this":{"fields":["body"],"like":[{"_index":".security","_id":"1"}]}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"geo_shape":{"loc":{"indexed_shape":{"index":".security","id":"1","path":"shape"}}}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"percolate":{"field":"q","index":".security","id":"1"}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"query":{"pinned":{"docs":[{"_index":".security","_id":"1"}],"organic":{"match_all":{}}}}}`},
	{method: "POST", uri: "/idx/_search", body: `{"runtime_mappings":{"x":{"type":"lookup","target_index":".security","input_field":"a","target_field":"b","fetch_fields":["c"]}},"fields":["x"]}`},
	{method: "POST", uri: "/idx/_search", body: `{"indices_boost":[{".security":2}]}`},
	{method: "POST", uri: "/idx/_search", body: `{"indices_boost":{".security":2}}`},
	{method: "POST", uri: "/idx/_count", body: `{"query":{"terms":{"user":{"index":".security","id":"1","path":"p"}}}}`},
	{method: "POST", uri: "/idx/_count", body: `{"query":/**/{"terms":{"user":{"index":".security","id":"1","path":"p"}}}}`},
	{method: "POST", uri: "/idx/_pit?keep_alive=1m", body: `{"index_filter":{"terms":{"user":{"index":".security","id":"1","path":"p"}}}}`},
	{method: "POST", uri: "/_msearch", body: "{\"index\":\"idx\"}\n{\"query\":{\"terms\":{\"user\":{\"index\":\".security\",\"id\":\"1\",\"path\":\"p\"}}}}\n"},
}

// solrWriteProbes are requests to a Solr core that are not searches:
// handlers Solr routes another way than their last segment suggests,
// admin and config APIs, and parameters reaching beyond one search.
var solrWriteProbes = []probe{
	{method: "POST", uri: "/solr/core/update/select?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "GET", uri: "/solr/admin/cores/select?action=UNLOAD&core=core"},
	{method: "GET", uri: "/solr/admin/select?action=UNLOAD&core=core"},
	{method: "POST", uri: "/solr/core/config/select", ctype: "application/json", body: `{"set-property":{"a":1}}`},
	{method: "POST", uri: "/solr/core/schema/select", ctype: "application/json", body: `{"add-field":{"name":"x"}}`},
	{method: "POST", uri: "/solr/core/update;/select?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "POST", uri: "/solr/core/update/..;/select?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "POST", uri: "/solr/core/update%2Fselect?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "POST", uri: "/solr/core/select/../update?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "POST", uri: "/solr/core/update?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "GET", uri: "/solr/core/select?qt=/update&commit=true"},
	{method: "GET", uri: "/solr/core/select?q=*:*&stream.body=%3Cdelete%3E%3Cquery%3E*:*%3C/query%3E%3C/delete%3E"},
	{method: "GET", uri: "/solr/core/select?q=*:*&stream.url=http://127.0.0.1:1/x"},
	{method: "GET", uri: "/solr/core/select?q=*:*&stream.file=/etc/passwd"},
	{method: "GET", uri: "/solr/core/select?q=*:*&shards=127.0.0.1:1/solr/core"},
	{method: "GET", uri: "/solr/core/select?q=*:*&shards.qt=/update"},
	{method: "GET", uri: "/solr/core/select?q=*:*&shards.info=true"},
	{method: "GET", uri: "/solr/core/select?q=*:*&collection=other"},
	{method: "GET", uri: "/solr/core/select?q=*:*&wt=velocity&v.template=custom"},
	{method: "GET", uri: "/solr/core/select?q=*:*&wt=xslt&tr=x.xsl"},
	{method: "GET", uri: "/solr/core/select?q=*:*&json=%7B%22params%22:%7B%22qt%22:%22/update%22%7D%7D"},
	{method: "POST", uri: "/solr/core/select", ctype: "application/x-www-form-urlencoded", body: "q=*:*&stream.body=%3Cdelete%3E%3Cquery%3E*:*%3C/query%3E%3C/delete%3E"},
	{method: "POST", uri: "/solr/core/select", ctype: "application/json", body: `{"query":"*:*","params":{"qt":"/update"}}`},
	{method: "POST", uri: "/solr/core/select", ctype: "application/json", body: `{"add":{"doc":{"id":"x"}}}`},
	{method: "POST", uri: "/solr/core/select", ctype: "application/xml", body: `<delete><query>*:*</query></delete>`},
	{method: "POST", uri: "/solr/core/select", ctype: "multipart/form-data; boundary=x", body: "--x--"},
	{method: "DELETE", uri: "/solr/core/select"},
	{method: "GET", uri: "/solr/core/Select?q=x"},
	{method: "GET", uri: "/solr/core/select//?q=x"},
	{method: "POST", uri: "/solr/core/update/?commit=true", ctype: "application/json", body: `[{"id":"x"}]`},
	{method: "GET", uri: "/solr/core/select/./?q=x"},
	{method: "GET", uri: "/solr//select?q=x"},
	{method: "GET", uri: "/solr/core/select;x?q=x"},
	{method: "GET", uri: "/solr/core/select?q=x&q%00=y;z"},
	{method: "GET", uri: "/api/cores/core/select?q=x"},
	{method: "GET", uri: "/solr/core/a/select?q=x"},
	// Solr reads a GET's body as a POST's, and a form in the charset its
	// Content-Type names anywhere, or the query string in ie's.
	{method: "GET", uri: "/solr/core/select?q=x", ctype: "application/x-www-form-urlencoded", body: "shards=127.0.0.1:1/solr/core"},
	{method: "GET", uri: "/solr/core/select?q=x", ctype: "application/json", body: `{"params":{"shards":"127.0.0.1:1/solr/core"}}`},
	{method: "GET", uri: "/solr/core/select?q=x", body: "shards=127.0.0.1:1/solr/core"},
	{method: "POST", uri: "/solr/core/select", ctype: "application/x-www-form-urlencoded; charset=UTF-16LE", body: utf16Form("q", "*:*", "shards", "127.0.0.1:1/solr/core")},
	{method: "POST", uri: "/solr/core/select", ctype: `application/x-www-form-urlencoded; x="charset=UTF-16LE"`, body: utf16Form("q", "*:*", "shards", "127.0.0.1:1/solr/core")},
	{method: "POST", uri: "/solr/core/select", ctype: "application/x-www-form-urlencoded; charset=UTF-16LE; x", body: utf16Form("q", "*:*", "shards", "127.0.0.1:1/solr/core")},
	{method: "GET", uri: "/solr/core/select?" + utf16Form("q", "*:*", "shards", "127.0.0.1:1/solr/core") + "&ie=UTF-16LE"},
	// A [subquery] document transformer's own request, to the handler
	// its qt names, and a search that rebuilds a dictionary.
	{method: "GET", uri: "/solr/core/select?q=x&fl=id,x:%5Bsubquery%5D&x.q=*:*&x.qt=/update&x.optimize=true"},
	{method: "GET", uri: "/solr/core/select?q=x&fl=id,x:%5Bsubquery%5D&x.q=*:*&x.fl=y:%5Bsubquery%5D&x.y.qt=/update"},
	{method: "GET", uri: "/solr/core/select?q=x&fl=id,x:%5Bsubquery%5D&x.q=*:*&x.shards=127.0.0.1:1/solr/core"},
	{method: "POST", uri: "/solr/core/select", ctype: "application/json", body: `{"query":"x","fields":"id,x:[subquery]","params":{"x.q":"*:*","x.qt":"/update"}}`},
	{method: "GET", uri: "/solr/core/select?q=x&spellcheck=true&spellcheck.build=true"},
	// JSONP: any web page a user's browser opens could read the
	// answers by a <script> tag, past the browser's same-origin rule.
	{method: "GET", uri: "/solr/core/select?q=x&json.wrf=steal"},
	{method: "GET", uri: "/solr/core/select?q=x&wt=geojson&json.wrf=steal"},
	{method: "POST", uri: "/solr/core/select", ctype: "application/x-www-form-urlencoded", body: "q=x&json.wrf=steal"},
	{method: "POST", uri: "/solr/core/select", ctype: "application/json", body: `{"query":"x","params":{"json.wrf":"steal"}}`},
}

// utf16Form is a form of the names and values given in turn, each in
// UTF-16LE, percent-encoded: what Solr reads as those parameters under
// charset=UTF-16LE (or ie=UTF-16LE), and UTF-8 as others.
func utf16Form(kv ...string) string {
	enc := func(s string) string {
		var b strings.Builder
		for _, c := range s {
			fmt.Fprintf(&b, "%%%02X%%%02X", c&0xff, c>>8)
		}
		return b.String()
	}
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, enc(kv[i])+"="+enc(kv[i+1]))
	}
	return strings.Join(parts, "&")
}

// recorder is a loopback engine that counts what reaches it and answers
// every request with an empty search answer of kind.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func startRecorder(t *testing.T, kind string) *recorder {
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Method+" "+r.URL.RequestURI())
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if kind == "solr" {
			io.WriteString(w, `{"responseHeader":{"status":0,"QTime":1},"response":{"numFound":0,"start":0,"docs":[]}}`)
			return
		}
		w.Header().Set("X-Elastic-Product", "Elasticsearch")
		answer := `{"took":1,"timed_out":false,"hits":{"total":{"value":0,"relation":"eq"},"max_score":null,"hits":[]}}`
		if strings.HasSuffix(r.URL.Path, "/_msearch") {
			// The probes' multi-searches hold one search each.
			answer = `{"took":1,"responses":[` + answer + `]}`
		}
		io.WriteString(w, answer)
	}))
	t.Cleanup(rec.Close)
	return rec
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen
	r.seen = nil
	return s
}

// sendRaw writes p to the proxy at addr exactly as given (no client
// normalises its target) and returns the status and body.
func sendRaw(t *testing.T, addr string, p probe) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\nAccept: application/json\r\nConnection: close\r\n", p.method, p.uri, addr)
	if p.ctype != "" {
		fmt.Fprintf(c, "Content-Type: %s\r\n", p.ctype)
	} else if p.body != "" {
		io.WriteString(c, "Content-Type: application/json\r\n")
	}
	fmt.Fprintf(c, "Content-Length: %d\r\n\r\n%s", len(p.body), p.body)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", p.method, p.uri, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestGatewayAllowList sends each probe byte for byte through a
// read-only gateway: no request that is not a search reaches the engine
// (counted at a loopback recorder), each is refused with 403 in the
// engine's own error shape, and every search route passes, once, to the
// route the gateway checked.
func TestGatewayAllowList(t *testing.T) {
	cases := []struct {
		kind, path string
		refused    []probe
		// allowed maps a probe that must pass to what the engine must
		// see (method and path; "" for the probe's own).
		allowed map[probe]string
		shape   string // of the refusal
	}{
		{kind: "elasticsearch", path: "/_search", refused: append(esWriteProbes,
			probe{method: "POST", uri: "/idx/_search/point_in_time"},
			probe{method: "DELETE", uri: "/_search/point_in_time"}),
			allowed: map[probe]string{
				{method: "GET", uri: "/"}:  "",
				{method: "HEAD", uri: "/"}: "",
				// Whether one index exists (Spring Data Elasticsearch's
				// start): a search of it shows as much.
				{method: "HEAD", uri: "/idx"}:                             "",
				{method: "GET", uri: "/_search?q=x"}:                      "GET /" + undotted("") + "/_search?from=0&q=x&size=30",
				{method: "POST", uri: "/idx/_search", body: `{"size":2}`}: "",
				// A lookup of an index the path rules let through, and a
				// field named index.
				{method: "POST", uri: "/idx/_search", body: `{"query":{"terms":{"user":{"index":"other","id":"1","path":"p"}}}}`}: "",
				{method: "POST", uri: "/idx/_count", body: `{"query":{"match":{"index":"Some Text"}}}`}:                           "",
				{method: "GET", uri: "/idx,other/_search?q=x&size=2"}:                                                             "GET /idx,other/_search?from=0&q=x&size=6",
				{method: "GET", uri: "/idx%2Cother/_search?q=x&size=2"}:                                                           "GET /idx,other/_search?from=0&q=x&size=6",
				{method: "GET", uri: "/logs-*,-logs-old/_count"}:                                                                  "GET /logs-%2A,-logs-old/_count",
				{method: "GET", uri: "/_all/_search?q=x&size=1&winnow_mode=remove"}:                                               "GET /" + undotted("") + "/_search?from=0&q=x&size=3",
				{method: "GET", uri: "/*/_count"}:                                                                                 "GET /" + undotted("") + "/_count",
				{method: "GET", uri: "/**/_count"}:                                                                                "GET /" + undotted("") + "/_count",
				{method: "GET", uri: "/idx,*log*,-*old/_count"}:                                                                   "GET /idx," + undotted("log*") + ",-%2Aold/_count",
				{method: "GET", uri: "/*-x/_count"}:                                                                               "GET /" + undotted("-x") + "/_count",
				{method: "GET", uri: "/_count"}:                                                                                   "GET /" + undotted("") + "/_count",
				{method: "POST", uri: "/*/_pit?keep_alive=1m"}:                                                                    "POST /" + undotted("") + "/_pit?keep_alive=1m",
				{method: "POST", uri: "/_msearch", body: "{}\n{}\n"}:                                                              "POST /" + undotted("") + "/_msearch",
				{method: "POST", uri: "/idx/_msearch", body: "{}\n{}\n"}:                                                          "",
				{method: "POST", uri: "/_msearch", body: "{\"index\":[\"idx\",\"logs-*\"],\"expand_wildcards\":\"open\"}\n{\"query\":{\"match_all\":{}}}\n"}: "POST /" + undotted("") + "/_msearch",
				{method: "GET", uri: "/idx*/_search?expand_wildcards=open,closed&size=2"}:                                                                    "GET /idx%2A/_search?expand_wildcards=open%2Cclosed&from=0&size=6",
				{method: "POST", uri: "/_count", body: `{}`}:                                                                                                 "POST /" + undotted("") + "/_count",
				{method: "GET", uri: "/_search/scroll/" + sealed("abc-_=")}:                                                                                  "GET /_search/scroll/abc-_=",
				{method: "POST", uri: "/_search/scroll", body: `{"scroll_id":"` + sealed("a") + `"}`}:                                                        "POST /_search/scroll",
				{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":"` + sealed("a") + `"}`}:                                                      "DELETE /_search/scroll",
				{method: "DELETE", uri: "/_search/scroll", body: `{"scroll_id":["` + sealed("a") + `","` + sealed("b") + `"]}`}:                              "DELETE /_search/scroll",
				{method: "DELETE", uri: "/_search/scroll/" + sealed("a", "b")}:                                                                               "DELETE /_search/scroll/a,b",
				{method: "POST", uri: "/idx/_pit?keep_alive=1m"}:                                                                                             "",
				{method: "DELETE", uri: "/_pit", body: `{"id":"` + sealed("a") + `"}`}:                                                                       "DELETE /_pit",
				{method: "POST", uri: "/_search?scroll=1m", body: `{"size":4}`}:                                                                              "POST /" + undotted("") + "/_search?scroll=1m",
				// A point in time names its indices when it is opened.
				{method: "POST", uri: "/_search", body: `{"pit":{"id":"` + sealed("a") + `"}}`}: "POST /_search",
			},
			shape: `"type":"security_exception"`},
		{kind: "opensearch", path: "/_search", refused: append(esWriteProbes,
			probe{method: "POST", uri: "/idx/_pit"},
			probe{method: "DELETE", uri: "/_pit"}),
			allowed: map[probe]string{
				{method: "POST", uri: "/idx/_search/point_in_time?keep_alive=1m"}:                             "",
				{method: "DELETE", uri: "/_search/point_in_time", body: `{"pit_id":["` + sealed("a") + `"]}`}: "DELETE /_search/point_in_time",
				{method: "GET", uri: "/_search/scroll/" + sealed("abc")}:                                      "GET /_search/scroll/abc",
			},
			shape: `"type":"security_exception"`},
		{kind: "solr", path: "/solr/core/select", refused: solrWriteProbes,
			allowed: map[probe]string{
				{method: "GET", uri: "/solr/core/select?q=x&rows=2"}:   "GET /solr/core/select?q=x&rows=6&start=0&wt=json",
				{method: "GET", uri: "/solr/other/select?q=x&rows=2"}:  "GET /solr/other/select?q=x&rows=6&start=0&wt=json",
				{method: "GET", uri: "/solr/core/%73elect?q=x&rows=2"}: "GET /solr/core/select?q=x&rows=6&start=0&wt=json",
				// A format winnow does not refine: sent once, as asked.
				{method: "GET", uri: "/solr/core/select?q=x&wt=xml&fl=id"}:                                                                                                 "GET /solr/core/select?fl=id&q=x&wt=xml",
				{method: "GET", uri: "/solr/core/select?q=x&shards.tolerant=true"}:                                                                                         "GET /solr/core/select?q=x&rows=30&shards.tolerant=true&start=0&wt=json",
				{method: "GET", uri: "/solr/core/select?q=x&facet=true&facet.field=page&f.page.facet.limit=5&hl=true&hl.fl=title&fl=id,x:%5Bsubquery%5D&x.q=*:*&x.rows=2"}: "GET /solr/core/select?f.page.facet.limit=5&facet=true&facet.field=page&fl=id%2Cx%3A%5Bsubquery%5D&hl=true&hl.fl=title&q=x&rows=30&start=0&wt=json&x.q=%2A%3A%2A&x.rows=2",
				{method: "POST", uri: "/solr/core/select", ctype: "application/x-www-form-urlencoded", body: "q=x"}:                                                        "POST /solr/core/select?rows=30&start=0&wt=json",
				// pysolr's form: one trailing '/', which Solr ignores.
				{method: "GET", uri: "/solr/core/select/?q=x&rows=2&wt=json"}: "GET /solr/core/select?q=x&rows=6&start=0&wt=json",
			},
			shape: `"metadata":["error-class","org.apache.solr.common.SolrException"]`},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			rec := startRecorder(t, c.kind)
			e := Engine{Name: c.kind, URL: rec.URL, Adapter: engine.Config{Kind: c.kind, Path: c.path}}
			_, base := startProxy(t, Options{Engines: []Engine{e}})
			addr := strings.TrimPrefix(base, "http://")
			for _, p := range c.refused {
				code, body := sendRaw(t, addr, p)
				seen := rec.take()
				if len(seen) != 0 {
					t.Errorf("%s %s reached the engine: %q", p.method, p.uri, seen)
				}
				// fasthttp itself refuses some targets (400) before
				// winnow sees them; that too keeps them from the engine.
				if code == 400 && !strings.Contains(body, "winnow") {
					continue
				}
				if code != 403 || !strings.Contains(body, c.shape) {
					t.Errorf("%s %s = %d %s, want 403 with %s", p.method, p.uri, code, body, c.shape)
				}
			}
			for p, want := range c.allowed {
				code, body := sendRaw(t, addr, p)
				seen := rec.take()
				if want == "" {
					want = p.method + " " + p.uri
				}
				if code/100 != 2 || len(seen) != 1 || seen[0] != want {
					t.Errorf("%s %s = %d %s; the engine saw %q, want once %q", p.method, p.uri, code, body, seen, want)
				}
			}
		})
	}
}

// undotted is the comma list of index patterns the gateway sends for a
// pattern "*" + rest (rest "" for "*", "_all" or no index), as the
// engine sees it in the path: the same names but those starting with
// '.', the dot-named ones excluded when rest ends with a character no
// data stream's backing index ends with (not a digit or '*'), else one
// pattern per first character an index name may have through the
// gateway, rest itself when it is a pattern that can start a name.
func undotted(rest string) string {
	if n := len(rest); n > 0 && rest[n-1] != '*' && (rest[n-1] < '0' || rest[n-1] > '9') {
		return "%2A" + rest + ",-.%2A" + rest
	}
	var pats []string
	if strings.Contains(rest, "*") && strings.IndexByte("abcdefghijklmnopqrstuvwxyz0123456789", rest[0]) >= 0 {
		pats = append(pats, rest)
	}
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789" {
		pats = append(pats, string(c)+"*"+rest)
	}
	return strings.ReplaceAll(strings.Join(pats, ","), "*", "%2A")
}

// startClosingEngine serves an Elasticsearch answer on loopback and
// closes each connection after its first answer, without saying so
// (no Connection: close): the next request on it, kept alive by the
// client, finds it closed, as after an engine's idle timeout. It
// returns the engine's URL and the request targets it answered.
func startClosingEngine(t *testing.T, answer string) (string, func() []string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var seen []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				mu.Lock()
				seen = append(seen, req.Method+" "+req.URL.RequestURI())
				mu.Unlock()
				fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Elastic-Product: Elasticsearch\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer)
			}()
		}
	}()
	return "http://" + ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		s := seen
		seen = nil
		return s
	}
}

// threeHits is an Elasticsearch answer of three distinct hits, each
// with its page's text (signed from text_field "text": nothing fetched).
const threeHits = `{"took":1,"timed_out":false,"hits":{"total":{"value":3,"relation":"eq"},"max_score":1,"hits":[` +
	`{"_index":"idx","_id":"a","_score":1,"_source":{"url":"http://127.0.0.1:1/a","title":"A","text":"the first page tells how the compiler lowers a switch statement into a jump table when the cases are dense"}},` +
	`{"_index":"idx","_id":"b","_score":0.9,"_source":{"url":"http://127.0.0.1:1/b","title":"B","text":"the second page lists the options of the linker and what each of them does to the output file it writes"}},` +
	`{"_index":"idx","_id":"c","_score":0.8,"_source":{"url":"http://127.0.0.1:1/c","title":"C","text":"the third page explains how to report a bug with a reduced test case and the exact command that fails"}}]}}`

// TestClosedKeepAliveRetried checks that a POST search whose pooled
// connection the engine had closed is sent again, rewritten, and its
// answer refined: never passed through unrefined, never sent as the
// client's own request.
func TestClosedKeepAliveRetried(t *testing.T) {
	url, seen := startClosingEngine(t, threeHits)
	e := Engine{Name: "es", URL: url, Adapter: engine.Config{Kind: "elasticsearch", TextField: "text"}}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	for i := range 3 {
		resp, err := http.Post(base+"/idx/_search", "application/json", strings.NewReader(`{"size":2,"query":{"match_all":{}}}`))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get(refinedHeader) != "yes" {
			t.Errorf("search %d: %d, %s %q; want 200 and a refined answer", i, resp.StatusCode, refinedHeader, resp.Header.Get(refinedHeader))
		}
		if s := seen(); len(s) != 1 || s[0] != "POST /idx/_search" {
			t.Errorf("search %d: the engine answered %q, want the rewritten search once", i, s)
		}
		time.Sleep(20 * time.Millisecond) // the engine closes its side
	}
}

// TestNotRefinedSaysSo checks that an answer winnow cannot refine comes
// with X-Winnow-Refined: no and its reason, and is counted.
func TestNotRefinedSaysSo(t *testing.T) {
	engineSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"hits":{"total":3,"hits":"not a list"}}`)
	}))
	t.Cleanup(engineSrv.Close)
	e := Engine{Name: "es", URL: engineSrv.URL, Adapter: engine.Config{Kind: "elasticsearch"}}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	for _, tc := range []struct{ method, path, body, want string }{
		{"GET", "/idx/_search?q=x", "", "no; reason=parse"},
		{"GET", "/idx/_search?q=x&winnow_mode=off", "", "no; reason=off"},
		{"POST", "/idx/_msearch", "{}\n{}\n", "no; reason=parse"},
		{"POST", "/_search?scroll=1m", `{"size":2}`, "no; reason=parse"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := resp.Header.Get(refinedHeader); resp.StatusCode != 200 || got != tc.want || !strings.Contains(string(b), "not a list") {
			t.Errorf("%s %s: %d %s=%q %s; want 200, %q and the engine's answer", tc.method, tc.path, resp.StatusCode, refinedHeader, got, b, tc.want)
		}
	}
	_, metrics := get(t, base+"/metrics")
	if !strings.Contains(metrics, `winnow_answers_unrefined_total{reason="parse"} 3`) {
		t.Errorf("metrics lack the unrefined answers by reason:\n%s", grepLines(metrics, "unrefined"))
	}
}

// TestBrokenAnswerPassesThrough: when the engine's answer to the
// rewritten (over-fetched) search is broken, in a member winnow reads or
// in one it would copy byte for byte, the client gets the engine's
// answer to its own request, as the engine gave it, marked unrefined;
// never a rendering that carries the break.
func TestBrokenAnswerPassesThrough(t *testing.T) {
	good, err := os.ReadFile("engine/testdata/demo-es-53.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, old, new string }{
		{"cut", `"hits":[`, `"hits":[{"_id":"x","_sc`},
		{"a skipped string's quote escaped", `LLVM 15 documentation"`, `LLVM 15 documentation\"`},
		{"a skipped array closed by a brace", `are"]}},`, `are"}}},`},
		{"a bare word in a skipped array", `"text":["`, `"text":[tru,"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := bytes.Index(good, []byte(tc.old))
			if i < 0 {
				t.Fatalf("%q not in the demo answer", tc.old)
			}
			broken := append(append(append([]byte(nil), good[:i]...), tc.new...), good[i+len(tc.old):]...)
			if tc.name == "cut" {
				broken = broken[:i+len(tc.new)]
			}
			engineSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Query().Get("size") == "50" {
					w.Write(good) // the client's own request
					return
				}
				w.Write(broken) // the over-fetch
			}))
			t.Cleanup(engineSrv.Close)
			e := Engine{Name: "es", URL: engineSrv.URL, Adapter: engine.Config{Kind: "elasticsearch"}}
			_, base := startProxy(t, Options{Engines: []Engine{e}})
			resp, err := http.Get(base + "/llvm/_search?q=the&size=50")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := resp.Header.Get(refinedHeader); resp.StatusCode != 200 || got != "no; reason=parse" || !bytes.Equal(b, good) {
				t.Errorf("%d %s=%q, %d bytes (engine's answer: %d); want 200, no; reason=parse and the engine's answer to the client's request",
					resp.StatusCode, refinedHeader, got, len(b), len(good))
			}
		})
	}
}

func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestClientLeavesCompressedStream checks that a client that asks for a
// compressed answer streamed from the engine (winnow_mode=off) and goes
// away in the middle of it does not bring the proxy down: fasthttp
// compresses in a goroutine that may still read the engine's answer
// when the stream is closed.
func TestClientLeavesCompressedStream(t *testing.T) {
	srv := startLargeEngine(t)
	e := Engine{Name: "es", URL: srv.URL, Adapter: engine.Config{Kind: "elasticsearch"}}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	addr := strings.TrimPrefix(base, "http://")
	for range 8 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET /8000000/_search?q=x&winnow_mode=off HTTP/1.1\r\nHost: %s\r\nAccept-Encoding: gzip\r\n\r\n", addr)
		buf := make([]byte, 4096)
		if _, err := io.ReadAtLeast(c, buf, 1); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	time.Sleep(100 * time.Millisecond) // the streams notice
	if code, body := get(t, base+"/healthz"); code != 200 {
		t.Fatalf("after clients left: /healthz %d %s", code, body)
	}
}

// TestUnsignedAnswerSaysSo: an answer none of whose results could be
// signed (no text field; the pages' addresses refused by the SSRF guard)
// is not called refined: X-Winnow-Refined says why, X-Winnow-Signed
// says 0 of 3, and the metric counts it.
func TestUnsignedAnswerSaysSo(t *testing.T) {
	url, _ := startClosingEngine(t, threeHits)
	e := Engine{Name: "es", URL: url, Adapter: engine.Config{Kind: "elasticsearch"}}
	_, base := startProxy(t, Options{Engines: []Engine{e}})
	resp, err := http.Post(base+"/idx/_search", "application/json", strings.NewReader(`{"size":3,"query":{"match_all":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get(refinedHeader); got != "no; reason=unsigned" {
		t.Errorf("%s = %q, want no; reason=unsigned", refinedHeader, got)
	}
	if got := resp.Header.Get("X-Winnow-Signed"); got != "0/3" {
		t.Errorf("X-Winnow-Signed = %q, want 0/3", got)
	}
	if !strings.Contains(string(body), `"_id":"c"`) {
		t.Errorf("answer %s: the engine's hits should all be there", body)
	}
	if _, m := get(t, base+"/metrics"); !strings.Contains(m, `winnow_answers_unrefined_total{reason="unsigned"} 1`) || !strings.Contains(m, `winnow_answers_unrefined_total{reason="budget"} 0`) {
		t.Errorf("/metrics: want reason unsigned at 1 and the other reasons at 0 from the start")
	}
}

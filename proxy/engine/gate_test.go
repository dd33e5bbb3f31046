package engine

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestGateSolrHandlers: the configured Solr handlers (and the search
// path's last segment) are searches, under the configured core or
// /solr/{core}; others, and Solr's own handlers, are refused, and New
// refuses a handler name that is not a plain search handler.
func TestGateSolrHandlers(t *testing.T) {
	g := NewGate(Config{Kind: "solr", Path: "/solr/core/select", SolrHandlers: []string{"select", "search"}})
	for _, c := range []struct {
		uri string
		ok  bool
	}{
		{"/solr/core/select?q=x", true},
		{"/solr/core/search?q=x", true},
		{"/solr/other/search?q=x", true},
		{"/solr/core/browse?q=x", false},
		{"/solr/core/update?q=x", false},
		{"/solr/core/search?q=x&qt=/update", false},
		{"/solr/core/search?q=x&stream.url=http://127.0.0.1/", false},
		{"/solr/core/search?q=x&shards=a/solr/b", false},
		{"/solr/core/update/search?q=x", false},
		{"/solr/core,.system/select?q=x", false}, // SolrCloud reads every collection of a list
		{"/solr/.system/select?q=x", false},
	} {
		rt, err := g.Check(GateRequest{Method: "GET", URI: c.uri})
		if c.ok && (err != nil || rt.Kind != RouteSearch) {
			t.Errorf("%s: %v, %v; want a search", c.uri, rt.Kind, err)
		}
		if !c.ok && !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v, %v; want refused", c.uri, rt.Kind, err)
		}
	}
	// The default is select only; the path's own handler is added.
	g = NewGate(Config{Kind: "solr", Path: "/solr/core/query"})
	for uri, ok := range map[string]bool{"/solr/core/select": true, "/solr/core/query": true, "/solr/core/search": false} {
		if _, err := g.Check(GateRequest{Method: "GET", URI: uri}); (err == nil) != ok {
			t.Errorf("default handlers: %s: %v, want allowed %v", uri, err, ok)
		}
	}
	for _, cfg := range []Config{
		{Kind: "solr", SolrHandlers: []string{"update"}},
		{Kind: "solr", SolrHandlers: []string{"admin"}},
		{Kind: "solr", SolrHandlers: []string{"a/b"}},
		{Kind: "solr", SolrHandlers: []string{""}},
		{Kind: "solr", SolrHandlers: []string{"export"}},
		{Kind: "elasticsearch", SolrHandlers: []string{"select"}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error, want the handler refused", cfg.SolrHandlers)
		}
	}
}

// TestGateUndotted: a multi-search line naming "*", "_all" or a pattern
// starting with '*' is sent narrowed to the names not starting with
// '.', its other members as they were; a body whose lines need nothing
// is sent as the client sent it.
// TestGateIndexExists: HEAD of one index by its plain name passes (Spring
// Data Elasticsearch asks it for each repository when it starts; a
// search of the index shows as much), on both kinds; HEAD of anything
// else, a pattern, a list or a dot-named index is refused.
func TestGateIndexExists(t *testing.T) {
	for _, kind := range []string{"elasticsearch", "opensearch"} {
		g := NewGate(Config{Kind: kind})
		if rt, err := g.Check(GateRequest{Method: "HEAD", URI: "/idx"}); err != nil || rt.Kind != RouteIndexExists || rt.Path != "/idx" {
			t.Errorf("%s HEAD /idx: %+v, %v", kind, rt, err)
		}
		for _, uri := range []string{"/.security", "/%2esecurity-7", "/idx*", "/idx,other", "/_all", "/_security", "/idx/_doc/1", "/idx/_alias/a", "/idx/_mapping"} {
			if rt, err := g.Check(GateRequest{Method: "HEAD", URI: uri}); !errors.Is(err, ErrRefused) {
				t.Errorf("%s HEAD %s: %+v, %v; want refused", kind, uri, rt, err)
			}
		}
		if _, err := g.Check(GateRequest{Method: "GET", URI: "/idx"}); !errors.Is(err, ErrRefused) {
			t.Errorf("%s GET /idx: %v; want refused (the index's definition)", kind, err)
		}
	}
}

func TestGateUndotted(t *testing.T) {
	g := NewGate(Config{Kind: "elasticsearch"})
	all := "a*,b*,c*,d*,e*,f*,g*,h*,i*,j*,k*,l*,m*,n*,o*,p*,q*,r*,s*,t*,u*,v*,w*,x*,y*,z*,0*,1*,2*,3*,4*,5*,6*,7*,8*,9*"
	for _, c := range []struct{ body, want string }{
		{"{\"index\":\"idx\"}\n{}\n", ""},
		{"{\"index\":\"*\",\"preference\":\"x\"}\n{\"query\":{\"match_all\":{}}}\n",
			"{\"index\":\"" + all + "\",\"preference\":\"x\"}\n{\"query\":{\"match_all\":{}}}\n"},
		{"{}\n{}\r\n{\"indices\":[\"idx\",\"_all\"]}\n{}\n", "{}\n{}\r\n{\"indices\":\"idx," + all + "\"}\n{}\n"},
		{"{\"index\":\"*x\"}\n{}\n", "{\"index\":\"*x,-.*x\"}\n{}\n"},
		{"{\"index\":\"*x*\"}\n{}\n", "{\"index\":\"x*," + strings.ReplaceAll(all, "*", "*x*") + "\"}\n{}\n"},
		{"{\"index\":\"*-x\"}\n{}\n", "{\"index\":\"*-x,-.*-x\"}\n{}\n"},
	} {
		rt, err := g.Check(GateRequest{Method: "POST", URI: "/idx/_msearch", Body: []byte(c.body)})
		if err != nil || string(rt.Body) != c.want {
			t.Errorf("%q: %q, %v; want %q", c.body, rt.Body, err, c.want)
		}
	}
}

// TestGateUndottedExact: a pattern "*" + rest names no index the engine
// may not have: rest itself is sent as a group of wildcards, first in
// the expression, that matches rest alone ("*rest" with no index named
// rest failed 404 index_not_found_exception through the gateway), or
// the dot-named ones are excluded.
func TestGateUndottedExact(t *testing.T) {
	g := NewGate(Config{Kind: "elasticsearch"})
	var group, pats []string
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789-_+." {
		group = append(group, "-log2"+string(c)+"*")
	}
	for _, c := range "abcdefghijklmnopqrstuvwxyz0123456789" {
		pats = append(pats, string(c)+"*log2")
	}
	exact := "log2*," + strings.Join(group, ",")
	for expr, want := range map[string]string{
		"*mylogs":          "*mylogs,-.*mylogs",
		"idx,*mylogs,-old": "idx,*mylogs,-.*mylogs,-old",
		"*log2":            exact + "," + strings.Join(pats, ","),
		"l*,*log2":         exact + ",l*," + strings.Join(pats, ","),
		"*log*":            "log*," + strings.ReplaceAll(strings.Join(pats, ","), "log2", "log*"),
		"*-2":              strings.ReplaceAll(strings.Join(pats, ","), "log2", "-2"),
		"logs-*,*.x,x-*":   "logs-*,*.x,-.*.x,x-*",
	} {
		rt, err := g.Check(GateRequest{Method: "GET", URI: "/" + expr + "/_search"})
		if want = "/" + want + "/_search"; err != nil || rt.Path != want {
			t.Errorf("%s: %q, %v; want %q", expr, rt.Path, err, want)
		}
	}
	// expand_wildcards=none: a wildcard matches nothing, and the engine
	// is sent the client's expression (narrowed, "_all" failed 404).
	for uri, want := range map[string]string{
		"/_search?expand_wildcards=none":           "/_search",
		"/*x/_search?expand_wildcards=none,none":   "/*x/_search",
		"/*x/_search?expand_wildcards=none,open":   "/*x,-.*x/_search",
		"/*x/_search?expand_wildcards=none&q=none": "/*x/_search",
	} {
		if rt, err := g.Check(GateRequest{Method: "GET", URI: uri}); err != nil || rt.Path != want {
			t.Errorf("%s: %q, %v; want %q", uri, rt.Path, err, want)
		}
	}
	// A pattern per wildcard of a long name: the engines refuse a
	// request line over 4 KB.
	long := "/*" + strings.Repeat("x", 40) + "1,*" + strings.Repeat("y", 40) + "1/_search"
	if _, err := g.Check(GateRequest{Method: "GET", URI: long}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "request line") {
		t.Errorf("%s: %v, want refused for its length", long, err)
	}
	short := "/*" + strings.Repeat("x", 30) + "1/_search"
	if _, err := g.Check(GateRequest{Method: "GET", URI: short}); err != nil {
		t.Errorf("%s: %v, want it passed", short, err)
	}
}

// TestGateUndottedAllowNoIndices: a client's allow_no_indices=false is
// sent true where the gateway narrowed the indices (the engine fails
// when any one of the patterns matches nothing), in the query and in a
// multi-search header line, and kept where it did not narrow.
func TestGateUndottedAllowNoIndices(t *testing.T) {
	g := NewGate(Config{Kind: "elasticsearch"})
	all := "a*,b*,c*,d*,e*,f*,g*,h*,i*,j*,k*,l*,m*,n*,o*,p*,q*,r*,s*,t*,u*,v*,w*,x*,y*,z*,0*,1*,2*,3*,4*,5*,6*,7*,8*,9*"
	for uri, want := range map[string]string{
		"/_search?allow_no_indices=false":                                "true",
		"/*/_search?allow_no_indices=false&ignore_unavailable=true":      "true",
		"/*x/_count?allow_no_indices=false":                              "true",
		"/idx,logs-*/_search?allow_no_indices=false":                     "false",
		"/_all/_search?allow_no_indices=true":                            "true",
		"/logs-*/_search":                                                "",
		"/*/_search?allow_no_indices=false&expand_wildcards=open,closed": "true",
	} {
		rt, err := g.Check(GateRequest{Method: "GET", URI: uri})
		if got := rt.Query.Get("allow_no_indices"); err != nil || got != want {
			t.Errorf("%s: allow_no_indices=%q, %v; want %q", uri, got, err, want)
		}
	}
	// The proxy asks the engine whether each of the client's wildcards
	// matches an index, narrowed, as the engine would have checked.
	rt, err := g.Check(GateRequest{Method: "GET", URI: "/idx,*x,logs-*,-old*/_search?allow_no_indices=false&expand_wildcards=open,closed&q=a"})
	const probe = "/_search?allow_no_indices=true&expand_wildcards=open%2Cclosed&filter_path=_shards.total&size=0&track_total_hits=false"
	want := []StrictWildcard{
		{"no such index [*x]", "/*x,-.*x" + probe},
		{"no such index [logs-*]", "/logs-*" + probe},
		{"no such index [old*]", "/old*" + probe},
	}
	if err != nil || !(rt.Strict != nil && slices.Equal(*rt.Strict, want)) {
		t.Errorf("strict wildcards %+v, %v; want %+v", rt.Strict, err, want)
	}
	rt, err = g.Check(GateRequest{Method: "POST", URI: "/_count?allow_no_indices=false", Body: []byte(`{}`)})
	if want := []StrictWildcard{{"no such index [_all] and no indices exist", "/" + all + "/_search?allow_no_indices=true&filter_path=_shards.total&size=0&track_total_hits=false"}}; err != nil || !(rt.Strict != nil && slices.Equal(*rt.Strict, want)) {
		t.Errorf("no index: strict wildcards %+v, %v; want %+v", rt.Strict, err, want)
	}
	for _, uri := range []string{"/*/_search", "/*/_search?allow_no_indices=true", "/idx,logs-*/_search?allow_no_indices=false", "/_msearch?allow_no_indices=false"} {
		var body []byte
		if strings.Contains(uri, "_msearch") {
			body = []byte("{}\n{}\n")
		}
		if rt, err := g.Check(GateRequest{Method: "POST", URI: uri, Body: body}); err != nil || rt.Strict != nil {
			t.Errorf("%s: strict wildcards %+v, %v; want none", uri, rt.Strict, err)
		}
	}
	for _, c := range []struct{ uri, body, want, query string }{
		{"/idx/_msearch", "{\"index\":\"*x\",\"allow_no_indices\":false}\n{}\n",
			"{\"index\":\"*x,-.*x\",\"allow_no_indices\":true}\n{}\n", ""},
		{"/idx/_msearch", "{\"index\":\"*x\",\"allow_no_indices\":\"false\"}\n{}\n",
			"{\"index\":\"*x,-.*x\",\"allow_no_indices\":true}\n{}\n", ""},
		{"/idx/_msearch?allow_no_indices=false", "{\"index\":\"*x\"}\n{}\n{}\n{}\n",
			"{\"index\":\"*x,-.*x\",\"allow_no_indices\":true}\n{}\n{}\n{}\n", "false"},
		{"/_msearch?allow_no_indices=false", "{\"index\":\"logs-*\"}\n{}\n{}\n{}\n{\"index\":\"*\"}\n{}\n",
			"{\"index\":\"logs-*\",\"allow_no_indices\":false}\n{}\n{}\n{}\n{\"index\":\"" + strings.Join(strings.Split("abcdefghijklmnopqrstuvwxyz0123456789", ""), "*,") + "*\"}\n{}\n", "true"},
		{"/idx/_msearch", "{\"index\":\"logs-*\",\"allow_no_indices\":false}\n{}\n", "", ""},
	} {
		rt, err := g.Check(GateRequest{Method: "POST", URI: c.uri, Body: []byte(c.body)})
		if err != nil || string(rt.Body) != c.want || rt.Query.Get("allow_no_indices") != c.query {
			t.Errorf("%s %q: %q, allow_no_indices=%q, %v; want %q, %q", c.uri, c.body, rt.Body, rt.Query.Get("allow_no_indices"), err, c.want, c.query)
		}
	}
}

// TestGateSolrJSONP: JSONP (json.wrf) is refused unless the engine's
// configuration allows it, and only Solr's may.
func TestGateSolrJSONP(t *testing.T) {
	r := GateRequest{Method: "GET", URI: "/solr/core/select?q=x&json.wrf=cb"}
	if _, err := NewGate(Config{Kind: "solr"}).Check(r); !errors.Is(err, ErrRefused) {
		t.Errorf("json.wrf by default: %v, want refused", err)
	}
	if _, err := NewGate(Config{Kind: "solr", SolrJSONP: true}).Check(r); err != nil {
		t.Errorf("json.wrf with SolrJSONP: %v, want a search", err)
	}
	if _, err := New(Config{Kind: "elasticsearch", SolrJSONP: true}); err == nil {
		t.Error("New(elasticsearch, SolrJSONP) = nil error, want it refused")
	}
}

// TestGateSolrJoinReach: Solr's join reads another core or collection
// (fromIndex) and its cross-collection method connects to the cluster
// or Solr a caller names (zkHost, solrUrl): in a query, a filter, a
// parameter a query dereferences, a form body or the JSON Request API,
// those are refused; a search for the words, a join within the
// collection and SolrCloud's _route_ and shards.tolerant pass.
func TestGateSolrJoinReach(t *testing.T) {
	g := NewGate(Config{Kind: "solr", Path: "/solr/coll/select"})
	join := "{!join method=crossCollection fromIndex=x from=id to=id zkHost=10.0.0.5:2181}*:*"
	for _, c := range []struct {
		uri, ct, body string
		ok            bool
	}{
		{uri: "/solr/coll/select?q=" + url.QueryEscape(join)},
		{uri: "/solr/coll/select?q=*:*&fq=" + url.QueryEscape("{!join fromIndex=secrets from=id to=id}body:x")},
		{uri: "/solr/coll/select?q=" + url.QueryEscape("{!join v=$j}") + "&j=" + url.QueryEscape("{!join FROMINDEX = secrets from=id to=id}*:*")},
		{uri: "/solr/coll/select?q=" + url.QueryEscape(`_query_:"{!join method=crossCollection solrUrl=http://10.0.0.5/solr fromIndex=x from=id to=id}*:*"`)},
		{uri: "/solr/coll/select", ct: "application/x-www-form-urlencoded", body: "q=" + url.QueryEscape(join)},
		{uri: "/solr/coll/select", ct: "application/json", body: `{"query":{"join":{"from":"id","to":"id","fromIndex":"secrets","query":"*:*"}}}`},
		{uri: "/solr/coll/select", ct: "application/json", body: `{"query":"*:*","filter":["` + join + `"]}`},
		{uri: "/solr/coll/select", ct: "application/json", body: `{"query":"*:*","params":{"fq":"{!join zkHost=10.0.0.5:2181 fromIndex=x from=id to=id}*:*"}}`},
		{uri: "/solr/coll/select?q=" + url.QueryEscape("{!join from=id to=id}*:*") + "&fromIndex=secrets"},
		{uri: "/solr/coll/select?q=x&sub.zkhost=10.0.0.5:2181"},
		{uri: "/solr/coll/select?q=*:*&json.query=" + url.QueryEscape(`{"join":{"from":"id","to":"id","fromIndex":"secrets","query":"*:*"}}`)},
		{uri: "/solr/coll/select?q=fromIndex+zkHost+solrUrl", ok: true},
		{uri: "/solr/coll/select?q=" + url.QueryEscape("title:fromIndex=x"), ok: true},
		{uri: "/solr/coll/select?q=" + url.QueryEscape("{!join from=parent to=id}type:child"), ok: true},
		{uri: "/solr/coll/select?q=x&_route_=tenant!&shards.tolerant=true", ok: true},
	} {
		rt, err := g.Check(GateRequest{Method: "POST", URI: c.uri, ContentType: c.ct, Body: []byte(c.body)})
		if c.ok && (err != nil || rt.Kind != RouteSearch) {
			t.Errorf("%s %s: %v, %v; want a search", c.uri, c.body, rt.Kind, err)
		}
		if !c.ok && !errors.Is(err, ErrRefused) {
			t.Errorf("%s %s: %v, %v; want refused", c.uri, c.body, rt.Kind, err)
		}
	}
}

package proxy

import (
	"encoding/json"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/winnow-search/winnow/internal/demo"
	"github.com/winnow-search/winnow/internal/realengine"
	"github.com/winnow-search/winnow/proxy/engine"
)

// TestSolrCloudGateway puts the gateway (kind solr) in front of a real
// SolrCloud (realengine.SolrCloud): a collection of two shards of two
// replicas read through an alias of it (the configured path) and by its
// own name, paged by cursorMark across the shards in every mode; a
// collection with a shard whose node is down answers a search with
// shards.tolerant=true from the other shard, and its partialResults
// passes through; a cross-collection join naming another cluster's
// ZooKeeper is refused, where Solr would connect to it.
func TestSolrCloudGateway(t *testing.T) {
	d := startDemo(t, demo.Options{})
	docs, err := realengine.Sample(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(realengine.Start(t, realengine.SolrCloud), "/")
	const coll, alias = "solrcloud_gateway", "solrcloud_gateway_alias"
	realengine.Load(t, realengine.SolrCloud, base, coll, docs)
	realengine.CreateAlias(t, base, alias, coll)
	// The gateway of the alias (its configured path), and one of any
	// collection (no path).
	e := Engine{Name: "solrcloud", URL: base, Adapter: engine.Config{Kind: "solr", TextField: "body", Path: "/" + alias + "/select"}, Timeout: 30 * time.Second}
	_, aliasURL := startProxy(t, Options{Engines: []Engine{e}, Budget: 5 * time.Second})
	e.Adapter.Path = ""
	_, proxyURL := startProxy(t, Options{Engines: []Engine{e}, Budget: 5 * time.Second})
	for _, mode := range clientModes {
		t.Run(mode+"/alias", func(t *testing.T) {
			pageAll(t, &solrReal{base: aliasURL, mode: mode, index: alias}, "cursorMark", mode, len(docs))
		})
		t.Run(mode+"/collection", func(t *testing.T) {
			pageAll(t, &solrReal{base: proxyURL, mode: mode, index: coll}, "cursorMark", mode, len(docs))
		})
	}

	t.Run("shards.tolerant", func(t *testing.T) {
		// One replica a shard, the second shard's on node 2, which is
		// then lost.
		const down = "solrcloud_gateway_down"
		realengine.CreateCollection(t, base, down, "winnow", 2, 1, url.Values{"createNodeSet": {"EMPTY"}})
		realengine.AddReplica(t, base, down, "shard1", 0)
		realengine.AddReplica(t, base, down, "shard2", 2)
		realengine.AddDocs(t, base, down, docs)
		realengine.StopNode(t, base, 2)
		t.Cleanup(func() { realengine.StartNode(t, base, 2) })
		for _, mode := range []string{"group", "off"} {
			code, body := get(t, proxyURL+"/"+down+"/select?q=*:*&rows=50&shards.tolerant=true&wt=json", "X-Winnow-Mode", mode)
			var a struct {
				Header struct {
					Partial bool `json:"partialResults"`
				} `json:"responseHeader"`
				Response struct {
					NumFound int `json:"numFound"`
				} `json:"response"`
			}
			if err := json.Unmarshal([]byte(body), &a); code != 200 || err != nil {
				t.Fatalf("%s: %d %.300s", mode, code, body)
			}
			if !a.Header.Partial || a.Response.NumFound == 0 || a.Response.NumFound >= len(docs) {
				t.Errorf("%s: partialResults %v, %d found; want true and the live shard's documents (of %d)", mode, a.Header.Partial, a.Response.NumFound, len(docs))
			}
			// Without shards.tolerant Solr's error passes as it is.
			if code, body := get(t, proxyURL+"/"+down+"/select?q=*:*&wt=json", "X-Winnow-Mode", mode); code < 500 || !strings.Contains(body, "servers hosting") {
				t.Errorf("%s: without shards.tolerant %d %.300s; want Solr's error", mode, code, body)
			}
		}
	})

	t.Run("crossCollection", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		dialed := make(chan struct{}, 1)
		go func() {
			if c, err := ln.Accept(); err == nil {
				dialed <- struct{}{}
				c.Close()
			}
		}()
		q := "{!join method=crossCollection fromIndex=x from=id to=id zkHost=" + ln.Addr().String() + "}*:*"
		code, body := get(t, proxyURL+"/"+coll+"/select?wt=json&q="+url.QueryEscape(q))
		if code != 403 {
			t.Errorf("cross-collection join through the gateway: %d %.300s; want 403", code, body)
		}
		select {
		case <-dialed:
			t.Errorf("Solr connected to the ZooKeeper the query named")
		case <-time.After(2 * time.Second):
		}
	})
}

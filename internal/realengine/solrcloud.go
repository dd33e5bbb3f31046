package realengine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SolrCloud is the kind of the SolrCloud scripts/engine starts
// (scripts/engine.d/solrcloud.sh): ZooKeeper and four Solr nodes on
// loopback, the first at the address [Start] returns
// (http://127.0.0.1:18984/solr), the others on the next three ports. It is
// not in [Kinds], so that the tests that run on every kind do not all
// run on it too (its start and its collections' creation are slow); a
// test asks for it by name.
//
// On it [Load] (and [Index]) creates a collection of [CloudShards]
// shards of [CloudReplicas] replicas each, on the first two nodes, from
// the configset winnow, compositeId routing; [DocCount] and [Definition]
// read it as a Solr core. Nodes 2 and 3 hold only what a test puts on
// them ([CreateCollection] with nodes, [AddReplica]), so that [StopNode]
// of one, as a host is lost, leaves the other tests' collections whole:
// proxy's tests stop node 2, indextag's node 3 (test binaries of several
// packages run at once).
const SolrCloud = "solrcloud"

// CloudShards and CloudReplicas are the shape of the collections [Load]
// creates on the SolrCloud.
const (
	CloudShards   = 2
	CloudReplicas = 2
)

// cloudNodes is the number of nodes solrcloud.sh starts; the control
// port follows the last node's.
const cloudNodes = 4

// CloudNode is the address of node i (from 0) of the SolrCloud whose
// first node is at base: http://127.0.0.1:PORT+i/solr.
func CloudNode(base string, i int) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	p, _ := strconv.Atoi(u.Port())
	u.Host = u.Hostname() + ":" + strconv.Itoa(p+i)
	return strings.TrimSuffix(u.String(), "/")
}

// cloudNodeName is the live node name of node i, as the Collections
// API's createNodeSet names it: 127.0.0.1:18985_solr.
func cloudNodeName(base string, i int) string {
	u, err := url.Parse(CloudNode(base, i))
	if err != nil {
		return ""
	}
	return u.Host + "_" + strings.Trim(u.Path, "/")
}

// CreateCollection creates (or creates again) collection name on the
// SolrCloud at base from configset (winnow or winnow-managed), of shards
// shards and replicas replicas each, with the Collections API's CREATE
// parameters in extra (router.field, ...; may be nil), placed on the
// nodes numbered in nodes (from 0; nil: the first two), and waits until
// every replica is active. An alias of that name is deleted first.
func CreateCollection(t testing.TB, base, name, configset string, shards, replicas int, extra url.Values, nodes ...int) {
	t.Helper()
	must(t, createCollection(context.Background(), base, name, configset, shards, replicas, extra, nodes))
}

// AddDocs indexes docs into a Solr core or collection and commits.
func AddDocs(t testing.TB, base, index string, docs []Doc) {
	t.Helper()
	must(t, solrAdd(context.Background(), strings.TrimSuffix(base, "/"), index, docs))
}

func createCollection(ctx context.Context, base, name, configset string, shards, replicas int, extra url.Values, nodes []int) error {
	base = strings.TrimSuffix(base, "/")
	if nodes == nil {
		nodes = []int{0, 1}
	}
	var set []string
	for _, i := range nodes {
		set = append(set, cloudNodeName(base, i))
	}
	if err := collectionsAPI(ctx, base, url.Values{"action": {"DELETEALIAS"}, "name": {name}}, "not found", "does not exist"); err != nil {
		return err
	}
	if err := collectionsAPI(ctx, base, url.Values{"action": {"DELETE"}, "name": {name}}, "Could not find collection"); err != nil {
		return err
	}
	q := url.Values{
		"action": {"CREATE"}, "name": {name}, "collection.configName": {configset},
		"numShards": {strconv.Itoa(shards)}, "replicationFactor": {strconv.Itoa(replicas)},
		"createNodeSet": {strings.Join(set, ",")}, "waitForFinalState": {"true"},
	}
	for k, vs := range extra {
		q[k] = vs
	}
	return collectionsAPI(ctx, base, q)
}

// AddReplica adds a replica of shard (shard1, shard2, ...) of collection
// on node i (from 0) of the SolrCloud at base, as with a collection
// created with createNodeSet=EMPTY each shard is placed where a test
// wants it.
func AddReplica(t testing.TB, base, collection, shard string, i int) {
	t.Helper()
	must(t, collectionsAPI(context.Background(), strings.TrimSuffix(base, "/"), url.Values{
		"action": {"ADDREPLICA"}, "collection": {collection}, "shard": {shard},
		"node": {cloudNodeName(base, i)}, "waitForFinalState": {"true"},
	}))
}

// CreateAlias points alias on the SolrCloud at base to collections (a
// read of the alias reads them all; Solr sends an update to the first).
func CreateAlias(t testing.TB, base, alias string, collections ...string) {
	t.Helper()
	must(t, collectionsAPI(context.Background(), strings.TrimSuffix(base, "/"), url.Values{
		"action": {"CREATEALIAS"}, "name": {alias}, "collections": {strings.Join(collections, ",")},
	}))
}

// collectionsAPI calls the Collections API; an error whose body holds
// one of ok (a collection to delete that is not there) is no error.
func collectionsAPI(ctx context.Context, base string, q url.Values, ok ...string) error {
	q.Set("wt", "json")
	b, status, err := call(ctx, http.MethodGet, base+"/admin/collections?"+q.Encode(), "", nil)
	if err != nil {
		return err
	}
	if status/100 == 2 && !strings.Contains(string(b), `"failure"`) {
		return nil
	}
	for _, s := range ok {
		if strings.Contains(string(b), s) {
			return nil
		}
	}
	return fmt.Errorf("realengine: collections API %s %s: status %d: %s", q.Get("action"), q.Get("name"), status, trim(b))
}

// CloudLeaders maps each shard of collection to the port of its leader's
// node.
func CloudLeaders(t testing.TB, base, collection string) map[string]int {
	t.Helper()
	var r struct {
		Cluster struct {
			Collections map[string]struct {
				Shards map[string]struct {
					Replicas map[string]struct {
						BaseURL string `json:"base_url"`
						Leader  string `json:"leader"`
						State   string `json:"state"`
					} `json:"replicas"`
				} `json:"shards"`
			} `json:"collections"`
		} `json:"cluster"`
	}
	q := url.Values{"action": {"CLUSTERSTATUS"}, "collection": {collection}, "wt": {"json"}}
	decode(t, Do(t, http.MethodGet, strings.TrimSuffix(base, "/")+"/admin/collections?"+q.Encode(), "", nil), &r)
	out := map[string]int{}
	for shard, s := range r.Cluster.Collections[collection].Shards {
		for _, rep := range s.Replicas {
			if rep.Leader == "true" && rep.State == "active" {
				u, err := url.Parse(rep.BaseURL)
				if err == nil {
					out[shard], _ = strconv.Atoi(u.Port())
				}
			}
		}
	}
	return out
}

// StopNode stops node i (from 0) of the SolrCloud at base, as a host is
// lost (its replicas go down; ZooKeeper and the other nodes stay), and
// StartNode starts it again, returning once it is live. They are for
// nodes 2 and 3, which hold only what the calling package's tests put on
// them (see [SolrCloud]): the others serve the collections of the tests
// that run beside it. A test that stops a node starts it again
// (t.Cleanup).
func StopNode(t testing.TB, base string, i int) { t.Helper(); nodeControl(t, base, i, "stop") }

// StartNode starts node i again; see [StopNode].
func StartNode(t testing.TB, base string, i int) { t.Helper(); nodeControl(t, base, i, "start") }

func nodeControl(t testing.TB, base string, i int, what string) {
	t.Helper()
	node, err := url.Parse(CloudNode(base, i))
	must(t, err)
	control, err := url.Parse(CloudNode(base, cloudNodes))
	must(t, err)
	control.Path = "/nodes/" + node.Port() + "/" + what
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err = do(ctx, http.MethodPost, control.String(), "", nil)
	must(t, err)
}

// cloudLoad is [Index] for the SolrCloud: a collection, then the
// documents.
func cloudLoad(ctx context.Context, base, index string, docs []Doc) error {
	if err := createCollection(ctx, base, index, solrConfigSet, CloudShards, CloudReplicas, nil, nil); err != nil {
		return err
	}
	return solrAdd(ctx, base, index, docs)
}

// solrAdd indexes docs into a Solr core or collection and commits.
func solrAdd(ctx context.Context, base, index string, docs []Doc) error {
	all := make([]map[string]any, len(docs))
	for i, d := range docs {
		all[i] = d.fields()
	}
	b, err := json.Marshal(all)
	if err != nil {
		return err
	}
	_, err = do(ctx, http.MethodPost, base+"/"+index+"/update?commit=true", "application/json", b)
	return err
}

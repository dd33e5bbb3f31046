// Package realengine gives tests real search engines: OpenSearch,
// Elasticsearch and Solr, started on loopback by the project's own
// scripts/engine (which downloads each from Maven Central once), and the
// demo's LLVM pages loaded into them.
//
// [Start] returns an engine's base address: the URL in WINNOW_<KIND>_URL
// when set (e.g. WINNOW_OPENSEARCH_URL), else what `scripts/engine start
// KIND` prints, run once per test binary (the script is idempotent and
// serializes concurrent starts, so test binaries share one engine, which
// stays running: `scripts/engine stop KIND` ends it). When the engine
// cannot be started (no Java, no Maven and nothing downloaded, a failed
// start) the test is skipped with the reason, or fails when CI is "true".
//
// For OpenSearch and Elasticsearch the address is http://127.0.0.1:PORT
// and an index is a name; for Solr it is http://127.0.0.1:PORT/solr and an
// index is a core, created by [Load] from the configset the project ships
// (scripts/solr-launcher/configset), so the core's URL is base + "/" + name.
//
// [Load] creates an index (replacing one of the same name) whose fields
// are the same on every kind: id, url and page (keyword), title and body
// (text), html (stored, not indexed), and the fields winnow's index
// pipeline writes, winnow_group (keyword, doc values), winnow_winner and
// winnow_removable (boolean) and winnow_probability (float). It bulk-loads
// documents ([Sample] gives the demo's pages) and refreshes, so they are
// searchable when it returns. [DocCount] counts an index's documents and
// [Definition] returns its mapping and settings (OpenSearch,
// Elasticsearch) or schema (Solr), for checks that something left an
// index unchanged.
//
// [SolrCloud] is a kind of its own, outside [Kinds]: a real SolrCloud
// (ZooKeeper and four Solr nodes) where [Load] creates a collection of
// two shards of two replicas; [CreateCollection], [AddReplica],
// [CreateAlias], [StopNode] and [StartNode] shape the rest.
//
// Only the standard library's net/http speaks to the engines.
package realengine

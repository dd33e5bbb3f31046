# SolrCloud 9.10.1 on loopback: ZooKeeper and four Solr nodes in one JVM
# (scripts/solr-launcher's winnow.SolrCloudLauncher, Solr's own
# MiniSolrCloudCluster from solr-test-framework, the cluster Solr's
# SolrCloud tests run), from the Maven artifacts solr.sh resolves.
# Nodes serve http://127.0.0.1:PORT/solr to PORT+3 (the address is the
# first); PORT+4 is a control port that stops and starts a node
# (POST /nodes/NODEPORT/stop, /nodes/NODEPORT/start), as a host is lost.
# The configsets winnow, winnow-managed (solr.sh) and winnow-tolerant
# (winnow's, its /select with shards.tolerant=true) are uploaded to
# ZooKeeper on every start; the cluster starts with no collection (its
# directory DIR/cluster is emptied). Create one with the Collections API:
#   curl 'http://127.0.0.1:18984/solr/admin/collections?action=CREATE&name=llvm&numShards=2&replicationFactor=2&collection.configName=winnow'
# Heap: WINNOW_SOLRCLOUD_HEAP (default 768m, for the four nodes). The JIT
# is C1 only: the start takes half the CPU (5 s, not 10-11 s; the
# queries of tests are few).
# shellcheck source=solr.sh
source "$here/engine.d/solr.sh"

engine_port() { echo 18984; }

engine_launch() {
  local dir="$1" port="$2" heap="${WINNOW_SOLRCLOUD_HEAP:-768m}"
  mkdir -p "$dir/configsets/winnow" "$dir/logs"
  rm -rf "$dir/configsets/winnow/conf"
  cp -r "$solr_launcher/configset/conf" "$dir/configsets/winnow/conf"
  solr_managed_configset "$dir/configsets/winnow-managed"
  # winnow-tolerant: /select answers with the shards that answered
  # (shards.tolerant=true in its defaults, as some operators set it).
  rm -rf "$dir/configsets/winnow-tolerant" && mkdir -p "$dir/configsets/winnow-tolerant"
  cp -r "$solr_launcher/configset/conf" "$dir/configsets/winnow-tolerant/conf"
  sed -i '0,/<str name="df">body<\/str>/s||<str name="df">body</str>\n      <str name="shards.tolerant">true</str>|' \
    "$dir/configsets/winnow-tolerant/conf/solrconfig.xml"
  grep -q '"shards.tolerant"' "$dir/configsets/winnow-tolerant/conf/solrconfig.xml" || die "solrconfig.xml: no /select defaults to extend"
  spawn "$(java_home 17)/bin/java" "-Xmx$heap" -XX:+UseG1GC -XX:TieredStopAtLevel=1 \
    -Dsolr.log.dir="$dir/logs" -Dsolr.install.dir="$dir" \
    -cp "$dir/classes:$(cat "$dir/classpath")" winnow.SolrCloudLauncher "$dir/cluster" "$port" 4 \
    "$dir/configsets/winnow" "$dir/configsets/winnow-managed" "$dir/configsets/winnow-tolerant"
}

# Healthy: the first node answers the Collections API with the last
# configset uploaded (a node the tests stopped does not make it
# unhealthy: start would then restart the cluster under other tests).
engine_healthy() {
  curl -fsS -m 5 "http://127.0.0.1:$1/solr/admin/configs?action=LIST&wt=json" 2>/dev/null | grep -q '"winnow-tolerant"'
}

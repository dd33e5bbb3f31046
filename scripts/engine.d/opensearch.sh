# OpenSearch, single node on loopback: the integration-test distribution
# (the server and its core modules, no plugins, no bundled JDK) from Maven
# Central, run on the machine's Java 17 or newer.
# Heap: WINNOW_OPENSEARCH_HEAP (default 512m). Data: DIR/data, kept
# between starts (scripts/engine stop leaves it; delete DIR to reset).
opensearch_version=2.19.6

engine_port() { echo 19200; }

engine_fetch() {
  local zip
  zip="$(maven_fetch "org.opensearch.distribution.integ-test-zip:opensearch:$opensearch_version:zip")"
  unpack_zip "$zip" "$1/dist-$opensearch_version"
}

engine_launch() {
  local dir="$1" port="$2" heap="${WINNOW_OPENSEARCH_HEAP:-512m}"
  local home="$dir/dist-$opensearch_version/opensearch-$opensearch_version"
  mkdir -p "$dir/data" "$dir/logs"
  OPENSEARCH_JAVA_HOME="$(java_home 17)" \
  OPENSEARCH_JAVA_OPTS="-Xms$heap -Xmx$heap" \
  spawn_unprivileged "$home/bin/opensearch" \
    -Ecluster.name=winnow-test -Enode.name=winnow \
    -Enetwork.host=127.0.0.1 -Ehttp.port="$port" -Etransport.port=$((port + 100)) \
    -Ediscovery.type=single-node \
    -Epath.data="$dir/data" -Epath.logs="$dir/logs" \
    -Ecluster.routing.allocation.disk.threshold_enabled=false \
    -Eaction.auto_create_index=true
}

engine_healthy() {
  curl -fsS -m 5 "http://127.0.0.1:$1/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1
}

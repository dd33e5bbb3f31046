# Elasticsearch, single node on loopback: the integration-test
# distribution (the server and its core modules, no bundled JDK) from
# Maven Central, run on the machine's Java 17 or newer, security off.
# Heap: WINNOW_ELASTICSEARCH_HEAP (default 512m). Data: DIR/data, kept
# between starts (scripts/engine stop leaves it; delete DIR to reset).
elasticsearch_version=8.19.21

engine_port() { echo 19201; }

engine_fetch() {
  local zip
  zip="$(maven_fetch "org.elasticsearch.distribution.integ-test-zip:elasticsearch:$elasticsearch_version:zip")"
  unpack_zip "$zip" "$1/dist-$elasticsearch_version"
}

engine_launch() {
  local dir="$1" port="$2" heap="${WINNOW_ELASTICSEARCH_HEAP:-512m}"
  local home="$dir/dist-$elasticsearch_version/elasticsearch-$elasticsearch_version"
  mkdir -p "$dir/data" "$dir/logs"
  ES_JAVA_HOME="$(java_home 17)" \
  ES_JAVA_OPTS="-Xms$heap -Xmx$heap" \
  spawn_unprivileged "$home/bin/elasticsearch" \
    -Ecluster.name=winnow-test -Enode.name=winnow \
    -Enetwork.host=127.0.0.1 -Ehttp.port="$port" -Etransport.port=$((port + 100)) \
    -Ediscovery.type=single-node \
    -Epath.data="$dir/data" -Epath.logs="$dir/logs" \
    -Ecluster.routing.allocation.disk.threshold_enabled=false \
    -Expack.security.enabled=false
}

engine_healthy() {
  curl -fsS -m 5 "http://127.0.0.1:$1/_cluster/health?wait_for_status=yellow&timeout=1s" >/dev/null 2>&1
}

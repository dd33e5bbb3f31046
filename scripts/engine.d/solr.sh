# Solr 9.10.1, one standalone node on loopback. Solr publishes no
# distribution on Maven Central, so scripts/solr-launcher (a pom and one
# class) runs a node with Solr's own JettySolrRunner from solr-core and
# solr-test-framework; Maven resolves their classpath into its cache once.
# The address is http://127.0.0.1:PORT/solr (a core's URL is that plus
# "/NAME"); create a core with the shipped configset through CoreAdmin:
#   curl 'http://127.0.0.1:18983/solr/admin/cores?action=CREATE&name=llvm&configSet=winnow'
# Heap: WINNOW_SOLR_HEAP (default 512m). Solr home: DIR/home (solr.xml and
# configsets/winnow are copied from scripts/solr-launcher on every start,
# with configsets/winnow-managed made from it (solr_managed_configset);
# cores under DIR/home stay between starts).
solr_launcher="$here/solr-launcher"

engine_port() { echo 18983; }

engine_address() { echo "http://127.0.0.1:$1/solr"; }

engine_fetch() {
  local dir="$1"
  command -v mvn >/dev/null || die "mvn not found: install Maven to build the Solr launcher"
  if [ ! -s "$dir/classpath" ] || [ "$solr_launcher/pom.xml" -nt "$dir/classpath" ]; then
    echo "engine: resolving Solr's classpath (scripts/solr-launcher/pom.xml)" >&2
    mvn -q -B -f "$solr_launcher/pom.xml" dependency:build-classpath \
      -Dmaven.repo.local="${WINNOW_M2_REPO:-$HOME/.m2/repository}" \
      -Dmdep.outputFile="$dir/classpath.tmp" >&2 || die "could not resolve Solr's classpath"
    mv "$dir/classpath.tmp" "$dir/classpath"
  fi
  # The launchers (SolrLauncher, SolrCloudLauncher for solrcloud.sh),
  # compiled again when a source or the classpath is newer.
  local srcs=("$solr_launcher"/src/main/java/winnow/*.java) stamp="$dir/classes/.compiled" f stale=
  [ -f "$stamp" ] && [ ! "$dir/classpath" -nt "$stamp" ] || stale=1
  for f in "${srcs[@]}"; do [ "$f" -nt "$stamp" ] && stale=1; done
  if [ -n "$stale" ]; then
    "$(java_home 17)/bin/javac" -nowarn -d "$dir/classes" -cp "$(cat "$dir/classpath")" "${srcs[@]}" ||
      die "could not compile ${srcs[*]}"
    touch "$stamp"
  fi
}

# solr_managed_configset DIR: the configset winnow-managed, the shipped
# one with a managed schema (the Schema API can change it, as operators'
# cores do) that lacks the winnow fields (winnow index -apply adds them).
# In a standalone node a core's schema changes are written to its
# configset, shared by every core made from it: this is remade on every
# start.
solr_managed_configset() {
  local out="$1/conf"
  rm -rf "$out"
  mkdir -p "$out"
  sed 's|<schemaFactory class="ClassicIndexSchemaFactory"/>|<schemaFactory class="ManagedIndexSchemaFactory"/>|' \
    "$solr_launcher/configset/conf/solrconfig.xml" >"$out/solrconfig.xml"
  grep -q ManagedIndexSchemaFactory "$out/solrconfig.xml" || die "solrconfig.xml: no schemaFactory to replace"
  grep -v '<field name="winnow_' "$solr_launcher/configset/conf/schema.xml" >"$out/managed-schema.xml"
}

engine_launch() {
  local dir="$1" port="$2" heap="${WINNOW_SOLR_HEAP:-512m}"
  mkdir -p "$dir/home/configsets/winnow" "$dir/logs"
  cp "$solr_launcher/solr.xml" "$dir/home/solr.xml"
  rm -rf "$dir/home/configsets/winnow/conf"
  cp -r "$solr_launcher/configset/conf" "$dir/home/configsets/winnow/conf"
  solr_managed_configset "$dir/home/configsets/winnow-managed"
  spawn "$(java_home 17)/bin/java" "-Xmx$heap" -XX:+UseG1GC \
    -Dsolr.log.dir="$dir/logs" -Dsolr.install.dir="$dir" \
    -cp "$dir/classes:$(cat "$dir/classpath")" winnow.SolrLauncher "$dir/home" "$port"
}

engine_healthy() {
  curl -fsS -m 5 "http://127.0.0.1:$1/solr/admin/cores?action=STATUS&wt=json" >/dev/null 2>&1
}

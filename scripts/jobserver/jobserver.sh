# Shared by scripts/engine.d/{flink,spark}.sh (sourced by scripts/engine).

# jobserver_classpath KIND DIR: resolves scripts/jobserver/KIND/pom.xml
# with Maven into DIR/classpath once (again when the pom changes).
jobserver_classpath() {
  local pom="$here/jobserver/$1/pom.xml" out="$2/classpath"
  [ -s "$out" ] && [ "$out" -nt "$pom" ] && return 0
  command -v java >/dev/null || die "java is not installed (apt-get install openjdk-17-jre-headless)"
  command -v mvn >/dev/null || die "mvn is not installed (apt-get install maven)"
  echo "engine: resolving the $1 job server's classpath with Maven (once)" >&2
  mvn -q -B -f "$pom" dependency:build-classpath -Dmdep.outputFile="$out.tmp" >&2 ||
    die "mvn could not resolve $pom"
  mv "$out.tmp" "$out"
}

# grpc_listening PORT: something accepts connections on the job port.
grpc_listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# jobserver_artifacts DIR: the job server's artifact staging directory,
# DIR/artifacts, emptied: Beam 2.62's job servers keep every job's staged
# artifacts (apache/beam#19076; the winnow-beam binary, 155 MB, for each
# EXTERNAL or DOCKER job) in /tmp/beam-artifact-staging by default, which
# had grown to 9.4 GB here. Under DIR they go with each start.
jobserver_artifacts() {
  rm -rf "$1/artifacts" && mkdir -p "$1/artifacts"
  echo "$1/artifacts"
}

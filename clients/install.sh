#!/usr/bin/env bash
# clients/install.sh: installs the official clients that
# proxy/officialclients_test.go (TestOfficialClients) runs against winnow
# in front of the real engines:
#
#   clients/js      @elastic/elasticsearch, @opensearch-project/opensearch,
#                   @searchkit/api
#                   (npm ci: the versions of package-lock.json, into
#                   clients/js/node_modules)
#   clients/python  elasticsearch-py, opensearch-py, pysolr (the versions
#                   of requirements.txt, into a virtual environment at
#                   WINNOW_CLIENTS_VENV, default
#                   ${XDG_CACHE_HOME:-~/.cache}/winnow/clients/venv, where
#                   the test looks for it)
#   clients/java    elasticsearch-java, opensearch-java, SolrJ (the versions
#                   of pom.xml, resolved into Maven's local repository and
#                   compiled, so TestOfficialClients builds it offline,
#                   mvn -o); only when java and mvn are on PATH
#
# Needs node and npm (Node.js 20 or later) and python3 (3.10 or later, with
# venv); reaches the npm registry and PyPI, and Maven Central for the Java
# clients. Safe to run again.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
die() { echo "clients/install.sh: $*" >&2; exit 1; }
for c in node npm python3; do
  command -v "$c" >/dev/null || die "$c not found on PATH"
done
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old: @elastic/elasticsearch 8.19 needs Node.js 20 or later (Debian 12's nodejs is 18; NodeSource has 20)"
venv="${WINNOW_CLIENTS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/winnow/clients/venv}"

(cd "$here/js" && npm ci --no-audit --no-fund --loglevel=error)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || die "python3 -m venv $venv failed (on Debian: apt-get install python3-venv)"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/python/requirements.txt"
"$venv/bin/python" -c "import elasticsearch, opensearchpy, pysolr" || die "the Python clients do not import from $venv"
if command -v java >/dev/null && command -v mvn >/dev/null; then
  (cd "$here/java" && mvn -q -B -Dstyle.color=never compile dependency:build-classpath -Dmdep.outputFile=target/classpath) ||
    die "mvn could not resolve and build clients/java"
  java_note="; Java clients in $here/java"
else
  java_note="; java or mvn not on PATH: the Java clients are not built"
fi
echo "clients: node $(node --version) in $here/js; $("$venv/bin/python" --version) at $venv$java_note"

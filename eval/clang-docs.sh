#!/bin/sh
# clang-docs.sh OUT_DIR builds clang-docs, an HTML set of the same kind as
# llvm-docs that no decision was fitted on: the Clang documentation of
# Debian's clang-13-doc ... clang-22-doc (Apache-2.0 WITH LLVM-exception),
# labelled from the page sources exactly as llvm-docs is. It runs the
# llvm-docs recipe (../shared/eval/llvm-docs/build.py) with the package
# names changed and every page kept (llvm-docs keeps its dev split; no
# Clang page is in any split). About a minute; needs apt-get and dpkg-deb.
#
#   sh eval/clang-docs.sh /tmp/clang-docs
#   go run ./cmd/winnow eval -thresholds-from /tmp/llvm-docs /tmp/clang-docs
set -eu
out=${1:?usage: clang-docs.sh OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
recipe=${LLVM_DOCS_BUILD:-$here/../../shared/eval/llvm-docs/build.py}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e 's/llvm-{v}-doc/clang-{v}-doc/g' \
    -e 's/llvm-\*-doc/clang-*-doc/g' \
    -e 's/llvm-\*\/html/clang-*\/html/g' \
    -e 's/split = "dev" if bucket(min(d\["page"\] for d in g)) < 40 else "test"/split = "dev"/' \
    "$recipe" >"$tmp/build.py"
# The recipe must have changed where we expect, or the set would silently
# be llvm-docs again.
grep -q 'clang-{v}-doc' "$tmp/build.py"
grep -q '^        split = "dev"$' "$tmp/build.py"
python3 "$tmp/build.py" "$out"

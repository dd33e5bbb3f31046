#!/usr/bin/env bash
# scripts/engine-compare/run.sh [REV]: parse and render random answers
# with proxy/engine as it was at REV (default main) and as it is in the
# work tree, and report any difference in results, totals, errors or
# rendered bytes (TestOldNew in oldnew_test.go.txt, which lists the
# deliberate differences it allows). The old package is copied from REV
# into proxy/engine/oldcmp for the run and removed afterwards; nothing is
# committed. Run from the repository's root. SEED=N varies the answers
# (default 1).
set -euo pipefail
rev="${1:-main}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dir="$root/proxy/engine/oldcmp"
if [ -e "$dir" ]; then
  echo "engine-compare: $dir exists; remove it first" >&2
  exit 1
fi
trap 'rm -rf "$dir"' EXIT
mkdir "$dir"
# Its Go files and its assembly (the structural index), not its tests.
for f in $(git -C "$root" ls-tree --name-only "$rev" proxy/engine/ | grep -E '\.(go|s)$' | grep -v '_test\.go$'); do
  git -C "$root" show "$rev:$f" | sed 's/^package engine$/package oldcmp/' >"$dir/$(basename "$f")"
done
cp "$here/oldnew_test.go.txt" "$dir/oldnew_test.go"
cd "$root" && go test -count=1 -v -run '^TestOldNew$' ./proxy/engine/oldcmp/

#!/bin/bash
# A real crawl of several releases of the same documentation sets, for
# bench/peers/run.py (see docs/peers.md, "A larger real crawl").
#
#   bench/peers/debian-crawl.sh OUTDIR [PACKAGES...]
#
# Downloads the named Debian doc packages into OUTDIR/debs (apt-get download;
# a .deb already there is reused), unpacks each into OUTDIR/unpacked/PACKAGE
# (dpkg-deb -x), links each package's documentation root (the shallowest
# index.html under usr/share/doc) as OUTDIR/root/NAME (the package name
# without "-doc": llvm-13, clang-16, python3.11, postgresql-15), serves
# OUTDIR/root with python3 -m http.server on a free loopback port, and
# crawls every http://127.0.0.1:PORT/NAME/index.html with one wget
# (--recursive --level=inf --no-parent --page-requisites) into
# OUTDIR/crawl.warc.gz. The server is stopped on exit and on Ctrl-C.
# Finally run.py prep-warc writes the HTML pages' text to OUTDIR/crawl.jsonl
# and the script prints the records and HTML pages of each documentation set.
set -euo pipefail

DEFAULT_PACKAGES=(llvm-13-doc llvm-16-doc llvm-19-doc llvm-22-doc
	clang-13-doc clang-16-doc clang-19-doc clang-22-doc
	python3.11-doc postgresql-doc-15)

if [ $# -lt 1 ] || [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
	echo "usage: $0 OUTDIR [PACKAGES...]   (default: ${DEFAULT_PACKAGES[*]})" >&2
	exit 2
fi
out=$1
shift
if [ $# -gt 0 ]; then
	packages=("$@")
else
	packages=("${DEFAULT_PACKAGES[@]}")
fi
for cmd in apt-get dpkg-deb wget python3; do
	command -v "$cmd" >/dev/null || {
		echo "$0: $cmd not found" >&2
		exit 1
	}
done
here=$(cd "$(dirname "$0")" && pwd)

mkdir -p "$out/debs" "$out/unpacked" "$out/root"
out=$(cd "$out" && pwd)
server=
stop() {
	if [ -n "$server" ]; then
		kill "$server" 2>/dev/null || true
		wait "$server" 2>/dev/null || true
		server=
	fi
}
trap stop EXIT
trap 'stop; exit 130' INT
trap 'stop; exit 143' TERM

names=()
for pkg in "${packages[@]}"; do
	case $pkg in
	*[!A-Za-z0-9.+-]* | -*)
		echo "$0: $pkg: not a Debian package name" >&2
		exit 2
		;;
	esac
	deb=$(find "$out/debs" -maxdepth 1 -name "${pkg}_*.deb" | head -n 1)
	if [ -z "$deb" ]; then
		(cd "$out/debs" && apt-get download "$pkg")
		deb=$(find "$out/debs" -maxdepth 1 -name "${pkg}_*.deb" | head -n 1)
		[ -n "$deb" ] || {
			echo "$0: apt-get download $pkg left no ${pkg}_*.deb" >&2
			exit 1
		}
	fi
	rm -rf "${out:?}/unpacked/$pkg"
	dpkg-deb -x "$deb" "$out/unpacked/$pkg"
	index=$(find "$out/unpacked/$pkg/usr/share/doc" -name index.html -printf '%d %p\n' 2>/dev/null |
		sort -n | head -n 1 | cut -d' ' -f2-)
	[ -n "$index" ] || {
		echo "$0: $pkg has no index.html under usr/share/doc" >&2
		exit 1
	}
	name=${pkg/-doc/}
	ln -sfn "$(dirname "$index")" "$out/root/$name"
	names+=("$name")
	echo "$pkg: $(basename "$deb"), root $(dirname "${index#"$out"/unpacked/}") as /$name/"
done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$out/root" "$port" >"$out/http.log" 2>&1 &
server=$!
for _ in $(seq 50); do
	if wget -q -O /dev/null "http://127.0.0.1:$port/"; then
		break
	fi
	kill -0 "$server" 2>/dev/null || {
		echo "$0: the http.server on port $port exited: $(tail -n 3 "$out/http.log")" >&2
		exit 1
	}
	sleep 0.2
done

urls=()
for name in "${names[@]}"; do
	urls+=("http://127.0.0.1:$port/$name/index.html")
done
rm -rf "$out/mirror" "$out/crawl.warc.gz"
echo "crawling ${urls[*]} (log: $out/wget.log)"
status=0
wget --recursive --level=inf --no-parent --page-requisites \
	--warc-file="$out/crawl" --directory-prefix="$out/mirror" \
	--no-verbose --output-file="$out/wget.log" "${urls[@]}" || status=$?
# 8: the server answered some request with an error (a missing link target: a 404)
if [ "$status" -ne 0 ] && [ "$status" -ne 8 ]; then
	echo "$0: wget failed with status $status; see $out/wget.log" >&2
	exit 1
fi
stop

python3 "$here/run.py" prep-warc "$out/crawl.warc.gz" "$out/crawl.jsonl"
python3 - "$out/crawl.jsonl" "$out/crawl.warc.gz" <<'EOF'
import collections, json, os, sys
sets = collections.Counter()
with open(sys.argv[1]) as f:
    for line in f:
        sets[json.loads(line)["id"].split("://", 1)[1].split("/")[1]] += 1
for name, n in sorted(sets.items()):
    print(f"{name}: {n} HTML pages")
print(f"{sum(sets.values())} HTML pages in {len(sets)} documentation sets; "
      f"{sys.argv[2]} is {os.path.getsize(sys.argv[2]) / 1e6:.1f} MB")
EOF

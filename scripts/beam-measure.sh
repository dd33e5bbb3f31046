#!/usr/bin/env bash
# scripts/beam-measure.sh INPUT...: wall time, CPU and peak RSS of
# `winnow dedup`, `winnow-beam dedup` on prism, and on the Flink
# (parallelism 2) and Spark (local[2]) job servers of scripts/engine, each
# job server restarted before its run so its peak RSS (VmHWM) and CPU are
# the run's. WINNOW and WINNOW_BEAM name the binaries (default on PATH).
# One line per run; docs/beam.md's table is its output.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
winnow="${WINNOW:-winnow}" beam="${WINNOW_BEAM:-winnow-beam}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
tick=$(getconf CLK_TCK)
measure() { # measure NAME COMMAND...: the client process's figures
  local name="$1"; shift
  /usr/bin/time -f "%e %U %S %M" -o "$out/time" "$@" >/dev/null 2>"$out/log" || { cat "$out/log" >&2; exit 1; }
  read -r wall user sys rss <"$out/time"
  printf '%-8s client: %6.1f s wall, %6.1f s CPU, %5.0f MB peak RSS' "$name" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
}
jvm() { # jvm PID: the job server's CPU seconds and peak RSS
  local pid="$1"
  local cpu; cpu=$(awk -v t="$tick" '{print ($14 + $15) / t}' "/proc/$pid/stat")
  local hwm; hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
  printf '; job server: %6.1f s CPU (startup included), %5d MB peak RSS\n' "$cpu" "$hwm"
}
measure winnow "$winnow" -set dedup.progress=never dedup -o "$out/w.jsonl" "$@"; echo
measure prism "$beam" dedup -o "$out/p.jsonl" "$@"; echo
cmp "$out/w.jsonl" "$out/p.jsonl"
for kind in flink spark; do
  "$here/engine" stop "$kind"
  endpoint=$("$here/engine" start "$kind" 2>/dev/null | tail -n 1)
  pid=$(cat "${WINNOW_ENGINE_HOME:-$HOME/.cache/winnow/engines}/$kind/pid")
  flags=(-runner "$kind" -endpoint "$endpoint" -environment_type LOOPBACK)
  [ "$kind" = flink ] && flags+=(-parallelism 2)
  measure "$kind" "$beam" dedup "${flags[@]}" -o "$out/$kind.jsonl" "$@"
  jvm "$pid"
  cmp "$out/w.jsonl" "$out/$kind.jsonl"
  "$here/engine" stop "$kind"
done
echo "outputs identical to winnow dedup's"

#!/usr/bin/env bash
# wrk-ab.sh's load on two server jars at once, for a machine too busy for runs taken one after the
# other to compare: both servers fresh (bench-server.sh: bin/jvm.options, a new data directory, one
# document), WARM seconds of `wrk -t2 -c16` on each at once, then ROUNDS measured runs, each
# `wrk -t2 -c16 -d<SECONDS_>` on both at once, with each server's CPU per request over it, all threads
# and less the JIT compiler threads. Both sides meet the same load at the same moment, so a
# difference that holds round after round is the jars', even where the figures themselves move 2x.
#
#   src-it/bench/wrk-pair.sh <label=jar> <label=jar>
#
# Environment: OPTS_<label> (JVM options after bin/jvm.options; the same jar twice with different
# options compares a setting), ROUNDS (default 4), SECONDS_ (default 10), WARM (default 20), WORK
# (scratch directory), PORT_BASE (the servers listen on PORT_BASE + 1 and + 2, default 27050).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
: "${WORK:=$(mktemp -d)}"; : "${ROUNDS:=4}"; : "${SECONDS_:=10}"; : "${WARM:=20}"; : "${PORT_BASE:=27050}"
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pids=(); labels=(); targets=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done' EXIT
k=0
for pair in "$@"; do
  k=$((k+1)); ab_side "$pair" "$k"
  start_bench_server "$jar" "$dir" "$((PORT_BASE + k))" "${side[@]}"
  curl -sf -X PUT "$url/db" > /dev/null
  curl -sf -X PUT "$url/db/doc-1" -d '{"value":42}' > /dev/null
  pids+=("$pid"); labels+=("$label"); targets+=("http://127.0.0.1:$((PORT_BASE + k))/db/doc-1")
done
auth=(-H "Authorization: Basic $(printf admin:admin | base64)")
w=(); for i in 0 1; do wrk -t2 -c16 -d"${WARM}s" "${auth[@]}" "${targets[$i]}" > "$WORK/warm-$i.txt" & w+=($!); done; wait "${w[@]}"
for r in $(seq 1 "$ROUNDS"); do
  for i in 0 1; do c0[$i]=$(cpu "${pids[$i]}"); j0[$i]=$(jit_cpu "${pids[$i]}"); done
  w=(); for i in 0 1; do wrk -t2 -c16 -d"${SECONDS_}s" "${auth[@]}" "${targets[$i]}" > "$WORK/r$r-$i.txt" & w+=($!); done; wait "${w[@]}"
  line="round $r, load $(cut -d' ' -f1 /proc/loadavg):"
  for i in 0 1; do
    c1=$(cpu "${pids[$i]}"); j1=$(jit_cpu "${pids[$i]}")
    n=$(awk '/requests in/ {print $1}' "$WORK/r$r-$i.txt")
    grep -q 'Non-2xx' "$WORK/r$r-$i.txt" && line="$line [non-2xx!]"
    line="$line ${labels[$i]} $n req $(awk -v a="${c0[$i]}" -v b="$c1" -v x="${j0[$i]}" -v y="$j1" -v t="$ticks" -v n="$n" 'BEGIN{printf "%.1f us (%.1f less JIT)", (b-a)/t/n*1e6, ((b-a)-(y-x))/t/n*1e6}');"
  done
  echo "$line"
done

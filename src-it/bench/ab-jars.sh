#!/usr/bin/env bash
# An A/B of two server jars with couchbench (../shared/bench/couchbench.js), alternating: a fresh
# server and on-disk data directory per run, the server's own warm-ups off and one couchbench
# warm-up run instead, bin/jvm.options. docs/benchmarks.md (issue 25) has a run of it.
#
#   src-it/bench/ab-jars.sh before=/path/a.jar after=/path/b.jar [rounds, default 2]
#
# Environment: COUCHBENCH (default ../shared/bench/couchbench.js beside the repository), WORK (a
# scratch directory, default a new temporary one), PHASES (default put,bulk,get,changes), WARMUPS
# (couchbench warm-up runs, default 1), OPTS_<label> (JVM options for that side's runs, after
# bin/jvm.options: OPTS_after=-Dio.netty.eventLoopThreads=2 with the same jar on both sides),
# ENV_<label> (NAME=value words for that side's server's environment: ENV_after=MALLOC_ARENA_MAX=2),
# PORT_BASE (run n listens on PORT_BASE + n, default 26000: two A/Bs at once need different ones).
# ARGS: more couchbench options for the measured phases (ARGS="--put-conc 16": more PUT clients).
# The get phase reads the bulk phase's database: PHASES=bulk,get.
#
# Each phase runs as its own couchbench run, and the script also prints the CPU the server's JIT
# compiler threads used in it (from /proc): after one warm-up they still take a third to a half of
# a PUT's server CPU, so a small change shows in the rest ("server CPU less JIT") or after more
# WARMUPS (docs/benchmarks.md, issue 27).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
: "${WORK:=$(mktemp -d)}"
: "${PHASES:=put,bulk,get,changes}"
: "${WARMUPS:=1}"
: "${PORT_BASE:=26000}"
: "${ARGS:=}"
rounds="${3:-2}"
i=0
for _ in $(seq 1 "$rounds"); do
  for pair in "$1" "$2"; do
    i=$((i + 1))
    port=$((PORT_BASE + i))
    ab_side "$pair" "$i"
    start_bench_server "$jar" "$dir" "$port" "${side[@]}"
    for _ in $(seq 1 "$WARMUPS"); do
      node "$COUCHBENCH" --url "$url" --phases put,bulk --put-docs 5000 --bulk-docs 20000 --prefix warm > "$dir/warm.txt" 2>&1
    done
    echo "== run $i $label ($jar), results in $dir/result-<phase>.json"
    for phase in ${PHASES//,/ }; do
      j0=$(jit_cpu "$pid")
      # shellcheck disable=SC2086 # ARGS is split into options on purpose
      node "$COUCHBENCH" --url "$url" --phases "$phase" --put-docs 5000 --bulk-docs 100000 --get-seconds 10 ${ARGS:-} \
        --server-pid "$pid" --json "$dir/result-$phase.json" > "$dir/out-$phase.txt" 2>&1
      j1=$(jit_cpu "$pid")
      grep -v '^#' "$dir/out-$phase.txt"
      echo "       jit_cpu_s $(awk -v a="$j0" -v b="$j1" 'BEGIN { printf "%.2f", (b - a) / 100 }') ($phase)"
    done
    kill "$pid"
    wait "$pid" || true
  done
done

#!/usr/bin/env bash
# Round 1 of the side-by-side protocol, one side against another: src-it/bench/first-round-jit.sh
# (an AOT cache from a training run, a fresh server on it, couchbench's warm-up, then PUT, bulk,
# GET and the view build) for each side in turn, then first-round-ab.py's table of the pairs. One
# jar's round 1 moves 20-40 % between runs on this machine, and the first run of a pair tended to
# win, so the order flips from pair to pair. docs/benchmarks.md (issue 27, "profiled loop
# predicates") has runs of it.
#
#   src-it/bench/first-round-ab.sh <out dir> <pairs> <label>=<jar> <label>=<jar>
#
# OPTS_<label>: JVM options for that side's training and measured runs; RUN_OPTS_<label>: for its
# measured run alone. PORT (default 26600): the training run's port (the measured run takes the next).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"; pairs="$2"; a="$3"; b="$4"
mkdir -p "$out"
for i in $(seq 1 "$pairs"); do
  order=("$a" "$b")
  [ $((i % 2)) = 0 ] && order=("$b" "$a")
  for side in "${order[@]}"; do
    label="${side%%=*}"
    jar="${side#*=}"
    opts="OPTS_$label"
    run="RUN_OPTS_$label"
    echo "== pair $i, $label ($(date +%T), load $(cut -d' ' -f1 /proc/loadavg))"
    # shellcheck disable=SC2086 # OPTS_<label> is a list of options
    RUN_OPTS="${!run:-}" "$here/first-round-jit.sh" "$jar" "$out/$label-$i" "${PORT:-26600}" ${!opts:-} > "$out/$label-$i.log" 2>&1
    rm -rf "$out/$label-$i/train/data" "$out/$label-$i/run/data" "$out/$label-$i/chaise.aot"
  done
done
python3 "$here/first-round-ab.py" "$out" "${a%%=*}" "${b%%=*}"

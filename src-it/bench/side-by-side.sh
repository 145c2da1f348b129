#!/usr/bin/env bash
# couchbench against several running servers in one sitting, alternating, for the issue 27 table
# (docs/benchmarks.md): each round runs one warm-up and one measured run per server, in the order
# given, so a slow minute of the machine falls on every server alike.
#
#   src-it/bench/side-by-side.sh ROUNDS label=URL@PID [label=URL@PID ...]
#   e.g. side-by-side.sh 2 chaise=http://admin:admin@127.0.0.1:25984@1234 couchdb=http://adm:pass@127.0.0.1:25985@5678
#
# The PID is the server's process (beam.smp for CouchDB, node for pouchdb-server), so couchbench
# reports the server's CPU per phase. Start every server first, each as it is run for real (Chaise
# with `./chaise start`). Environment: COUCHBENCH (default ../shared/bench/couchbench.js beside the
# repository), WORK (results, default a new temporary directory), ARGS (the measured run's options,
# default the issue's workload; ARGS_<label> replaces it for one server, e.g. fewer phases for a slow
# one). Then: node src-it/bench/side-by-side-table.mjs $WORK
#
# Between the warm-up run and the measured one each server is left until it is idle (under 5 % of a
# core over a second, at most IDLE_MAX seconds, default 60), so the measured run does not pay for
# what the warm-up run left running: a JVM's compilation queue (HotSpot's C2 was still compiling the
# warm-up's methods 4-5 s after it, 1-3 s of CPU), a database's compaction.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
: "${COUCHBENCH:=$repo/../shared/bench/couchbench.js}"
: "${WORK:=$(mktemp -d)}"
: "${ARGS:=--put-docs 5000 --bulk-docs 100000 --get-seconds 10}"
rounds="$1"
shift
mkdir -p "$WORK"
# shellcheck source=src-it/bench/wait-idle.sh
source "$here/wait-idle.sh"
for r in $(seq 1 "$rounds"); do
  for target in "$@"; do
    label="${target%%=*}"
    rest="${target#*=}"
    url="${rest%@*}"
    pid="${rest##*@}"
    echo "== round $r $label ($(cut -d' ' -f1 /proc/loadavg) load)"
    node "$COUCHBENCH" --url "$url" --phases put,bulk --put-docs 2000 --bulk-docs 20000 --prefix warm --cleanup > "$WORK/$label-$r-warm.txt" 2>&1
    echo "   idle after $(wait_idle "$pid") s"
    own="ARGS_$label"
    # shellcheck disable=SC2086 # ARGS is a list of options
    node "$COUCHBENCH" --url "$url" ${!own:-$ARGS} --cleanup --server-pid "$pid" --json "$WORK/$label-$r.json" > "$WORK/$label-$r.txt" 2>&1
    grep -E '^(PUT|BULK|GET|VIEW|REDUCE|FIND|CHANGE)' "$WORK/$label-$r.txt" | cut -c1-160
    # The process's peak resident memory so far (the issue bounds Chaise's at 1 GB).
    grep VmHWM "/proc/$pid/status" | tee "$WORK/$label-$r-rss.txt"
  done
done
echo "results in $WORK"

#!/usr/bin/env bash
# Issue 27's wrk target: `wrk -t2 -c16` on one document with Basic auth, against bare Netty
# (dev.chaise.bench.BareNetty, from the jmh module) and server jars, alternating, in one sitting.
# For each run: a fresh server (a jar: fresh data directory, bin/jvm.options, one document), a
# warm-up run of wrk, then the measured run, with the server's CPU over it from /proc/<pid>/stat
# (utime + stime), so the CPU per request shows beside the rate, and again less the CPU of the JIT
# compiler threads in the run (on a loaded machine C2 is still compiling after the warm-up). Prints
# the load average too.
#
#   src-it/bench/wrk-ab.sh netty=jmh/target/benchmarks.jar before=/tmp/a.jar after=/tmp/b.jar [...]
#
# A label "netty" (or starting with "netty") starts BareNetty from that jar instead of a server.
# Environment: ROUNDS (default 2), SECONDS_ (measured run, default 10), WARM (warm-up seconds,
# default 20), WORK (scratch directory), OPTS_<label> (JVM options for that side), PORT_BASE (run n
# listens on PORT_BASE + n, default 27000).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
: "${WORK:=$(mktemp -d)}"
: "${ROUNDS:=2}"
: "${SECONDS_:=10}"
: "${WARM:=20}"
: "${PORT_BASE:=27000}"
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
pid=
trap '[[ -n "$pid" ]] && kill "$pid" 2> /dev/null' EXIT # a failed run leaves no server behind
i=0
for _ in $(seq 1 "$ROUNDS"); do
  for pair in "$@"; do
    i=$((i + 1))
    port=$((PORT_BASE + i))
    ab_side "$pair" "$i"
    auth=()
    if [[ "$label" == netty* ]]; then
      "$java" --enable-native-access=ALL-UNNAMED "${side[@]}" -cp "$jar" dev.chaise.bench.BareNetty "$port" > "$dir/server.log" 2>&1 &
      pid=$!
      for _ in $(seq 1 40); do curl -sf "http://127.0.0.1:$port/" > /dev/null && break; sleep 0.25; done
      target="http://127.0.0.1:$port/db/doc-1"
    else
      start_bench_server "$jar" "$dir" "$port" "${side[@]}"
      curl -sf -X PUT "$url/db" > /dev/null
      curl -sf -X PUT "$url/db/doc-1" -d '{"value":42}' > /dev/null
      auth=(-H "Authorization: Basic $(printf admin:admin | base64)")
      target="http://127.0.0.1:$port/db/doc-1"
    fi
    wrk -t2 -c16 -d"${WARM}s" "${auth[@]}" "$target" > "$dir/warm.txt"
    c0=$(cpu "$pid"); j0=$(jit_cpu "$pid")
    wrk -t2 -c16 -d"${SECONDS_}s" "${auth[@]}" "$target" > "$dir/wrk.txt"
    c1=$(cpu "$pid"); j1=$(jit_cpu "$pid")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    rps=$(awk '/Requests\/sec/ {print $2}' "$dir/wrk.txt")
    n=$(awk '/requests in/ {print $1}' "$dir/wrk.txt")
    lat=$(awk '/Latency/ {print $2}' "$dir/wrk.txt")
    printf '== run %d %s: %s req/s, %s requests, latency avg %s, server CPU %.2f s = %.1f us/request (%.1f less JIT), load %s\n' \
      "$i" "$label" "$rps" "$n" "$lat" "$(awk -v a="$c0" -v b="$c1" -v t="$ticks" 'BEGIN{print (b-a)/t}')" \
      "$(awk -v a="$c0" -v b="$c1" -v t="$ticks" -v n="$n" 'BEGIN{print (b-a)/t/n*1e6}')" \
      "$(awk -v a="$c0" -v b="$c1" -v x="$j0" -v y="$j1" -v t="$ticks" -v n="$n" 'BEGIN{print ((b-a)-(y-x))/t/n*1e6}')" "$load"
    grep -q 'Non-2xx' "$dir/wrk.txt" && grep 'Non-2xx' "$dir/wrk.txt"
    kill "$pid"
    wait "$pid" || true
    pid=
  done
done

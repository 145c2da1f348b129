# Sourced by ab-jars.sh, perf-phases.sh, perf-view.sh and wrk-ab.sh: a benchmark server on a fresh data
# directory, the CPU its JIT compiler threads used (jit_cpu <pid>), its CPU per thread (thread_ticks),
# and the sides of an A/B (ab_side).
#
#   start_bench_server <jar> <dir> <port> [JVM options after bin/jvm.options...]
#
# Writes <dir>/bench.ini (embedded storage in <dir>/data, the server's own warm-ups and the access
# log off, admin/admin; BENCH_WARMUPS=1 leaves the warm-ups on, as ./chaise start runs them),
# starts the jar with bin/jvm.options, waits for /_up, and sets pid and url. BENCH_INI: more lines
# for the [chaise] section (e.g. "mango_warmup_docs = 60000", for an A/B of a setting).
# Needs repo (the repository's root) set by the caller; sets jdk and java (bin/find-jdk.sh's JDK 21+)
# and, unless given, COUCHBENCH (../shared/bench/couchbench.js beside the repository).
# shellcheck source=bin/find-jdk.sh
source "$repo/bin/find-jdk.sh"
jdk="$(find_jdk)"
java="$jdk/bin/java"
: "${COUCHBENCH:=$repo/../shared/bench/couchbench.js}"
side_env=()
start_bench_server() {
  local jar="$1" dir="$2" port="$3"
  shift 3
  local opts
  mapfile -t opts < <(grep -v '^#' "$repo/bin/jvm.options")
  local warmups="js_warmup_docs = 0
mango_warmup_docs = 0
warmup_requests = 0
warmup_writes = 0"
  [ "${BENCH_WARMUPS:-0}" = 1 ] && warmups=""
  cat > "$dir/bench.ini" <<INI
[chttpd]
port = $port
[chaise]
storage = embedded
data_dir = $dir/data
$warmups
${BENCH_INI:-}
access_log = false
[admins]
admin = admin
INI
  (cd "$dir" && exec env "${side_env[@]}" "$java" "${opts[@]}" "$@" -jar "$jar" --config "$dir/bench.ini" > "$dir/server.log" 2>&1) &
  pid=$!
  # Up to a minute: a loaded machine has taken 40 s to start one.
  for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/_up" > /dev/null && break; sleep 0.5; done
  url="http://admin:admin@127.0.0.1:$port"
}

# CPU ticks (1/100 s) of the process's JIT compiler threads so far.
jit_cpu() {
  local t total=0
  for t in /proc/"$1"/task/*; do
    grep -q 'CompilerThre' "$t/comm" 2>/dev/null || continue
    total=$((total + $(awk '{print $14 + $15}' "$t/stat")))
  done
  echo "$total"
}

# One side of an A/B over label=jar pairs (ab-jars.sh, wrk-ab.sh): sets label, jar, side (the JVM
# options OPTS_<label>, as an array), side_env (ENV_<label>: NAME=value words for the server's
# environment) and dir, a fresh $WORK/run-<n>.
#   ab_side <label=jar> <n>
ab_side() {
  label="${1%%=*}"
  jar="${1#*=}"
  dir="$WORK/run-$2"
  rm -rf "$dir"
  mkdir -p "$dir"
  local extra="OPTS_$label" env="ENV_$label"
  read -r -a side <<< "${!extra:-}"
  read -r -a side_env <<< "${!env:-}"
}

# CPU ticks (1/100 s) of the server ($pid) per thread name, numbers folded (ForkJoinPool-1-worker-#).
thread_ticks() {
  for t in /proc/"$pid"/task/*; do echo "$(tr ' ' _ < "$t/comm") $(awk '{print $14 + $15}' "$t/stat")"; done \
    | awk '{ gsub(/[0-9]+$/, "#", $1); a[$1] += $2 } END { for (k in a) print k, a[k] }' | sort
}

# The eight busiest thread groups between two thread_ticks files, in 1/100 s: "ticks name;...".
thread_top() {
  join "$1" "$2" | awk '$3 > $2 { print $3 - $2, $1 }' | sort -rn | head -8 | tr '\n' ';'
}

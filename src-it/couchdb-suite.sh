#!/usr/bin/env bash
# Apache CouchDB's own HTTP integration suite (test/elixir/test/*.exs at tag 3.5.0, ExUnit) against
# the built server jar. Slow: part of `./chaise test --slow` (CouchDbSuiteTest), or by hand:
#
#   MIRRORS=/path/to/mirrors src-it/couchdb-suite.sh
#
# The suite is run by the shared runner run-couchdb-elixir.sh (../shared/tools/couchdb-elixir beside
# the repository, or COUCHDB_ELIXIR_TOOL), which takes Elixir and Erlang from Debian and builds the
# suite's dependencies from local git mirrors: hex.pm is not used. Nothing of CouchDB is kept in
# this repository. This script starts server/target/chaise.jar as dev/run starts CouchDB for
# `make elixir`: on 127.0.0.1:15984 (a free port when that one is taken), admin adm:pass, node name
# node1@127.0.0.1 (config_test.exs asks for it), plus a temporary data directory and the warm-ups
# off; the runner applies upstream's test-config.ini over _config and runs every test file; then the
# server is stopped.
#
# Environment:
#   COUCHDB_ELIXIR_TOOL     the runner's folder (default ../shared/tools/couchdb-elixir from the repository)
#   MIRRORS                 the folder of the mirrors (apache+couchdb/repo, apache+couchdb-ibrowse/repo,
#                           apache+couchdb-jiffy/repo, eproxus+meck/repo, myfreeweb+httpotion/repo,
#                           victorolinasc+junit-formatter/repo); COUCHDB_GIT, IBROWSE_GIT, ... name
#                           one each instead (the runner's README)
#   COUCHDB_SUITE_CACHE     the runner's build (default ${XDG_CACHE_HOME:-~/.cache}/chaise/couchdb-suite;
#                           built once, reused while its .built stamp is there)
#   COUCHDB_SUITE_RESULTS   where results go (default src-it/target/couchdb-suite): summary.txt (per
#                           file), failing-tests.txt (file:line [test] cause), failure-groups.txt,
#                           tests.tsv, mix-test.log, chaise.log
#   COUCHDB_SUITE_MIN_PASS  fewer passing tests than this exits 1 (default: the count recorded in
#                           docs/compatibility.md)
#   COUCHDB_SUITE_PORT      the server's port (default 15984, dev/run's, or a free one when taken)
#   TEST_FILES, RUN_TIMEOUT, SEED, ...   passed on to the runner
#   JAVA                    the java to run the jar with (default: a JDK 21+ found as ./chaise finds one)
# Prints the runner's per-file table, then "couchdb-suite: ran R passed P failed F".
# Exit: 0 when at least COUCHDB_SUITE_MIN_PASS tests passed, 1 when fewer, 2 when the suite could
# not run, 77 (skipped) when Elixir or the mirrors are missing.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
: "${COUCHDB_SUITE_MIN_PASS:=490}"
: "${COUCHDB_SUITE_RESULTS:=$here/target/couchdb-suite}"
: "${COUCHDB_SUITE_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/chaise/couchdb-suite}"
tool="${COUCHDB_ELIXIR_TOOL:-$root/../shared/tools/couchdb-elixir}"
MIRRORS="${MIRRORS:-}"
export MIRRORS

skip() { echo "couchdb-suite: skipped: $*" >&2; exit 77; }
[ -f "$tool/run-couchdb-elixir.sh" ] || skip "no runner at $tool (set COUCHDB_ELIXIR_TOOL to the folder of run-couchdb-elixir.sh)"
for cmd in elixir mix erlc gcc g++ python3 curl git; do
  command -v "$cmd" >/dev/null 2>&1 || skip "$cmd is not installed (apt-get install elixir erlang-dev erlang-src erlang-xmerl gcc g++ python3 curl git)"
done
# Mirrors: bare repositories, or a .git inside a work tree (git rev-parse answers for both).
need_git() { # variable-name default-path
  local path="${!1:-$2}"
  git --git-dir="$path" rev-parse --verify -q HEAD >/dev/null 2>&1 \
    || skip "no git mirror for $1 at '$path' (set MIRRORS to the folder of the mirrors, or $1)"
}
need_git COUCHDB_GIT "$MIRRORS/apache+couchdb/repo"
need_git IBROWSE_GIT "$MIRRORS/apache+couchdb-ibrowse/repo"
need_git JIFFY_GIT "$MIRRORS/apache+couchdb-jiffy/repo"
need_git MECK_GIT "$MIRRORS/eproxus+meck/repo"
need_git HTTPOTION_GIT "$MIRRORS/myfreeweb+httpotion/repo/.git"
need_git JUNIT_GIT "$MIRRORS/victorolinasc+junit-formatter/repo"

jar="$root/server/target/chaise.jar"
[ -f "$jar" ] || { echo "couchdb-suite: no $jar (./mvnw -pl server -am package -DskipTests)" >&2; exit 2; }
if [ -z "${JAVA:-}" ]; then
  # shellcheck source=bin/find-jdk.sh
  source "$root/bin/find-jdk.sh"
  JAVA="$(find_jdk)/bin/java"
fi

# The server: a fresh one per run (the suite's SEED=0 reuses random database names).
rm -rf "$COUCHDB_SUITE_RESULTS"
mkdir -p "$COUCHDB_SUITE_RESULTS" "$COUCHDB_SUITE_CACHE"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/chaise-couchdb-suite.XXXXXX")"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$server_pid" 2>/dev/null || break; sleep 1; done
    kill -9 "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
admin=adm password=pass # dev/run's -a adm:pass, the suite's defaults
# 15984 as dev/run (replication_test.exs replicates remote-to-remote through http://127.0.0.1:15984/),
# else a free port (those tests then fail), or COUCHDB_SUITE_PORT.
port="${COUCHDB_SUITE_PORT:-$(python3 -c '
import socket
s = socket.socket()
try:
    s.bind(("127.0.0.1", 15984))
except OSError:
    s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')}"
cat > "$tmp/chaise.ini" <<INI
[chaise]
storage = embedded
data_dir = $tmp/data
node_name = node1@127.0.0.1
js_warmup_docs = 0
mango_warmup_docs = 0
warmup_requests = 0
warmup_writes = 0
[chttpd]
port = $port
bind_address = 127.0.0.1
INI
url="http://127.0.0.1:$port"
COUCHDB_USER="$admin" COUCHDB_PASSWORD="$password" \
  "$JAVA" "@$root/bin/jvm.options" -jar "$jar" --config "$tmp/chaise.ini" > "$COUCHDB_SUITE_RESULTS/chaise.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 120); do
  curl -fsS "$url/_up" >/dev/null 2>&1 && break
  kill -0 "$server_pid" 2>/dev/null || { echo "couchdb-suite: the server exited; see $COUCHDB_SUITE_RESULTS/chaise.log" >&2; exit 2; }
  sleep 0.5
done
curl -fsS "$url/_up" >/dev/null || { echo "couchdb-suite: the server did not come up in 60 s" >&2; exit 2; }
echo "couchdb-suite: Chaise at $url, data in $tmp/data" >&2

# The runner builds its dependencies once into the cache, then runs the suite chunk by chunk.
skip_build=0
[ -f "$COUCHDB_SUITE_CACHE/build/.built" ] && skip_build=1
set +e
WORK="$COUCHDB_SUITE_CACHE" RESULTS="$COUCHDB_SUITE_RESULTS" EX_USERNAME="$admin" EX_PASSWORD="$password" \
  SKIP_BUILD="${SKIP_BUILD:-$skip_build}" bash "$tool/run-couchdb-elixir.sh" "$url"
rc=$?
set -e
summary="$COUCHDB_SUITE_RESULTS/summary.txt"
if [ "$rc" != 0 ] || [ ! -f "$summary" ]; then
  echo "couchdb-suite: the runner failed (exit $rc); see $COUCHDB_SUITE_RESULTS/mix-test.log" >&2
  exit 2
fi

# The failing tests by cause, one line each: file:line "name": what was expected and what came. The
# runner's failure-groups.txt less the test code it quotes, so the list may be kept in the repository.
python3 - "$COUCHDB_SUITE_RESULTS" <<'PY'
import glob, os, re, sys, xml.etree.ElementTree as ET
res = sys.argv[1]
codes = {}
for x in glob.glob(os.path.join(res, "junit", "*.xml")):
    for tc in ET.parse(x).getroot().iter("testcase"):
        f = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
        code = re.search(r"code:\s+(.*)", (f.text or "") if f is not None else "")
        if code:
            n = tc.get("name", "")
            codes[n[5:] if n.startswith("test ") else n] = code.group(1).strip()[:90]
out = []
for ln in open(os.path.join(res, "failure-groups.txt"), encoding="utf-8"):
    m = re.match(r'(\s+\S+:\d+ "(.*)": .*)', ln.rstrip("\n"))
    if m:
        ln = m.group(1)
        if m.group(2) in codes:
            ln = ln.replace(f" [{codes[m.group(2)]}]", "")
        ln = re.sub(r" / code: .*", "", ln)
        if "ex_unit_no_meaningful_value" in ln or "expr: {" in ln:  # a setup failed: the group says why
            got = re.search(r"; got (\w+)", ln)
            ln = ln[:ln.index('": ') + 3] + "its setup failed" + (f" (got {got.group(1)})" if got else "")
        ln += "\n"
    out.append(ln)
open(os.path.join(res, "failing-tests.txt"), "w", encoding="utf-8").write("".join(out))
PY
cat "$summary"
total="$(grep -m1 '^TOTAL ' "$summary")"
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$total"; }
ran="$(field ran)" passed="$(field passed)" failed="$(field failed)"
echo "couchdb-suite: failing tests in $COUCHDB_SUITE_RESULTS/failing-tests.txt, grouped by cause in failure-groups.txt"
echo "couchdb-suite: ran $ran passed $passed failed $failed"
if [ "$passed" -lt "$COUCHDB_SUITE_MIN_PASS" ]; then
  echo "couchdb-suite: $passed passed, fewer than the $COUCHDB_SUITE_MIN_PASS recorded (COUCHDB_SUITE_MIN_PASS)" >&2
  exit 1
fi

#!/usr/bin/env bash
# PouchDB's own integration suite (tests/integration, mocha, on Node) against a running Chaise, as
# PouchDB's CI runs it against CouchDB (SERVER=couchdb-master). Slow: part of `./chaise test --slow`
# (PouchDbSuiteTest), or by hand:
#
#   CHAISE_URL=http://127.0.0.1:5984 CHAISE_ADMIN=admin CHAISE_PASSWORD=secret src-it/pouchdb-suite.sh
#
# PouchDB is checked out (the source commit of the npm release src-it uses) into a cache outside the
# repository and installed there once. Environment:
#   POUCHDB_GIT      where to clone from (default https://github.com/pouchdb/pouchdb.git; a local mirror works)
#   POUCHDB_CACHE    cache directory (default ${XDG_CACHE_HOME:-~/.cache}/chaise/pouchdb-suite)
#   SUITE            integration (default), mapreduce or find: PouchDB's tests/<SUITE> (TESTING.md's
#                    TYPE=mapreduce ADAPTERS=http run, which puts every view on the server; and
#                    TYPE=find PLUGINS=pouchdb-find ADAPTERS=http, every Mango query on the server)
#   ADAPTERS         PouchDB's adapter for the databases tests create (default memory for
#                    integration, whose tests pair it with an http one; http for mapreduce and find)
#   GREP             only tests whose names match (mocha --grep); default "http" for integration:
#                    the suites that talk to the server (local-only suites test PouchDB, not
#                    Chaise); none for mapreduce and find
#   SUITE_TIMEOUT    mocha's per-test timeout in ms (default 20000)
# Prints mocha's report, then a line "pouchdb-suite: passing N failing M pending P".
#
#   SUITE=mapreduce CHAISE_URL=... CHAISE_ADMIN=admin CHAISE_PASSWORD=secret src-it/pouchdb-suite.sh
# Exits 0 when the suite ran (whatever it found), non-zero when it could not run.
set -euo pipefail

: "${CHAISE_URL:?set CHAISE_URL to a running Chaise}"
: "${CHAISE_ADMIN:?set CHAISE_ADMIN}"
: "${CHAISE_PASSWORD:?set CHAISE_PASSWORD}"
here="$(cd "$(dirname "$0")" && pwd)"
version="$(node -p "require('$here/package-lock.json').packages['node_modules/pouchdb'].version")"
: "${POUCHDB_GIT:=https://github.com/pouchdb/pouchdb.git}"
: "${POUCHDB_CACHE:=${XDG_CACHE_HOME:-$HOME/.cache}/chaise/pouchdb-suite}"
: "${SUITE:=integration}"
case "$SUITE" in
  integration) : "${ADAPTERS:=memory}" "${GREP=http}" ;;
  mapreduce) : "${ADAPTERS:=http}" "${GREP=}" ;;
  find) : "${ADAPTERS:=http}" "${GREP=}" ;;
  *) echo "pouchdb-suite: SUITE must be integration, mapreduce or find, not $SUITE" >&2; exit 2 ;;
esac
: "${SUITE_TIMEOUT:=20000}"
dir="$POUCHDB_CACHE/pouchdb-$version"

if [ ! -f "$dir/.chaise-installed" ]; then
  rm -rf "$dir"
  mkdir -p "$POUCHDB_CACHE"
  git clone --quiet --no-checkout "$POUCHDB_GIT" "$dir"
  # The release tag points at a build commit holding only the packaged files; its parent has the tests.
  git -C "$dir" checkout --quiet "$version^"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error && BUILD_NODE=1 npm run build-modules)
  touch "$dir/.chaise-installed"
fi

# COUCH_HOST carries the admin's credentials, as PouchDB's TESTING.md says for CouchDB 3.
password="$(node -p "encodeURIComponent(process.argv[1])" "$CHAISE_PASSWORD")"
export COUCH_HOST="${CHAISE_URL/:\/\//://$CHAISE_ADMIN:$password@}"
export SERVER=couchdb-master CLIENT=node ADAPTERS VIEW_ADAPTERS=memory

cd "$dir"
# The find suite needs the plugin it tests; its files sit one level down (test-suite-1, ...), and
# test-suite-1's setup file gives every file the per-test database the others expect.
setup=()
files=(tests/"$SUITE"/test.*.js)
if [ "$SUITE" = find ]; then
  export PLUGINS=pouchdb-find
  setup=(tests/find/test-suite-1/test.aaa-setup.js)
  files=(tests/find/*/test.*.js)
fi
# bin/test-node.sh without the CORS setup Node does not need: mocha over tests/$SUITE, not
# stopping at the first failure, plus the "down server" some tests expect on port 3010.
down_pid=""
if ! (: < /dev/tcp/127.0.0.1/3010) 2>/dev/null; then
  node bin/down-server.js 3010 & down_pid=$!
fi
trap '[ -n "$down_pid" ] && kill "$down_pid" 2>/dev/null || true' EXIT
# One mocha process per test file: a failure inside a callback fails the suite's global afterEach
# hook, and mocha then stops the whole run, so one file's crash must not hide the others' results.
total_pass=0 total_fail=0 total_pending=0
summary=()
for file in "${files[@]}"; do
  case "$file" in */test.aa.setup.js|*/test.setup_global_hooks.js|*/test.aaa-setup.js) continue ;; esac
  report="$(mktemp)"
  set +e
  ./node_modules/.bin/mocha --exit --timeout "$SUITE_TIMEOUT" --require=./tests/integration/node.setup.js \
    --reporter=spec --grep="$GREP" tests/integration/test.setup_global_hooks.js "${setup[@]}" "$file" 2>&1 | tee "$report"
  set -e
  count() { grep -Eo "^ +[0-9]+ $1" "$report" | grep -Eo '[0-9]+' || echo 0; }
  p="$(count passing)" f="$(count failing)" n="$(count pending)"
  aborted=""
  grep -Eq '"(before|after) (each|all)" hook' "$report" && aborted=" (stopped early by a failing hook)"
  rm -f "$report"
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_pending=$((total_pending + n))
  summary+=("$(basename "$file"): passing $p failing $f pending $n$aborted")
done
printf 'pouchdb-suite: %s\n' "${summary[@]}"
echo "pouchdb-suite: passing $total_pass failing $total_fail pending $total_pending"
[ "$total_pass" -gt 0 ]

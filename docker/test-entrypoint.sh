#!/usr/bin/env bash
# Tests docker/entrypoint.sh as the image runs it, without Docker: the environment goes into
# local.d/docker.ini exactly as expected, restarts add nothing, an operator's own ini files win,
# and the command line is the image's. With CHAISE_JAR set (src-it's DockerEntrypointTest does),
# the real server then runs on the etc directory the entrypoint wrote and is checked over HTTP.
#   docker/test-entrypoint.sh    (prints "N passed, N failed")
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0

check() { # name, expected, actual
  if [ "$2" == "$3" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    printf 'FAIL %s\n--- expected\n%s\n--- actual\n%s\n' "$1" "$2" "$3"
  fi
}

new_etc() {
  rm -rf "${tmp:?}/etc"
  mkdir -p "$tmp/etc"
  cp "$here/local.ini" "$tmp/etc/local.ini"
}

run() { # env assignments..., then runs the entrypoint printing its command
  env -i PATH="$PATH" CHAISE_ETC="$tmp/etc" CHAISE_JAR=/opt/chaise/chaise.jar FDB_CLUSTER_FILE="$tmp/fdb.cluster" \
    CHAISE_ENTRYPOINT_PRINT=1 "$@" bash "$here/entrypoint.sh"
}

# 1. Every variable, on a new volume.
new_etc
out="$(run COUCHDB_USER=admin COUCHDB_PASSWORD='p w=1' COUCHDB_SECRET=s3cret NODENAME=chaise-1 CHAISE_STORAGE=fdb \
  FDB_COORDINATOR=localhost JAVA_OPTS='-Xmx1g -Dchaise.x=y')"
check "command line" "java @/opt/chaise/jvm.options -Xmx1g -Dchaise.x=y -jar /opt/chaise/chaise.jar --config $tmp/etc" "$out"
check "docker.ini from the environment" "
[admins]
admin = p w=1

[chttpd_auth]
secret = s3cret

[chaise]
node_name = couchdb@chaise-1

[chaise]
storage = fdb" "$(cat "$tmp/etc/local.d/docker.ini")"
check "cluster file" "docker:docker@127.0.0.1:4500" "$(cat "$tmp/fdb.cluster")"

# 2. A restart with the same volume adds nothing (the server has since hashed the password).
sed -i 's/^admin = .*/admin = -pbkdf2:sha256-00,11,10/' "$tmp/etc/local.d/docker.ini"
before="$(cat "$tmp/etc/local.d/docker.ini")"
run COUCHDB_USER=admin COUCHDB_PASSWORD='p w=1' COUCHDB_SECRET=s3cret NODENAME=chaise-1 CHAISE_STORAGE=fdb >/dev/null
check "a restart adds nothing" "$before" "$(cat "$tmp/etc/local.d/docker.ini")"

# 3. An operator's own files win over the environment; a commented-out key does not count.
new_etc
mkdir -p "$tmp/etc/local.d"
printf '[admins]\nroot = x\n[chttpd_auth]\n;secret = commented\n[chaise]\nstorage = embedded\nnode_name = mine\n' > "$tmp/etc/local.d/10-mine.ini"
run COUCHDB_USER=root COUCHDB_PASSWORD=other COUCHDB_SECRET=s NODENAME=n CHAISE_STORAGE=fdb >/dev/null
check "operator files win" "
[chttpd_auth]
secret = s" "$(cat "$tmp/etc/local.d/docker.ini")"

# 4. Nothing set: docker.ini exists (the write target) and stays empty; arguments reach the server.
new_etc
out="$(run COUCHDB_USER=admin)"
check "no password, no admin" "" "$(cat "$tmp/etc/local.d/docker.ini")"
out="$(env -i PATH="$PATH" CHAISE_ETC="$tmp/etc" CHAISE_ENTRYPOINT_PRINT=1 bash "$here/entrypoint.sh" --config /extra.ini)"
check "server arguments" "java @/opt/chaise/jvm.options -jar /opt/chaise/chaise.jar --config $tmp/etc --config /extra.ini" "$out"

# 5. A command instead of the server; a bad storage name.
check "other command" "hello" "$(env -i PATH="$PATH" CHAISE_ETC="$tmp/etc" bash "$here/entrypoint.sh" echo hello)"
env -i PATH="$PATH" CHAISE_ETC="$tmp/etc" CHAISE_STORAGE=rocks bash "$here/entrypoint.sh" >/dev/null 2>&1
check "bad CHAISE_STORAGE is refused" "1" "$?"

# 6. The real server on what the entrypoint wrote (when a jar is given).
if [ -n "${CHAISE_JAR:-}" ] && [ -f "$CHAISE_JAR" ]; then
  new_etc
  port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  mkdir -p "$tmp/etc/local.d"
  # Sorted before docker.ini, so docker.ini stays the last file: where _config writes go.
  printf '[chttpd]\nport = %s\nbind_address = 127.0.0.1\n[chaise]\ndata_dir = %s\njs_warmup_docs = 0\n' "$port" "$tmp/data" > "$tmp/etc/local.d/00-test.ini"
  cmd="$(env -i PATH="$PATH" CHAISE_ETC="$tmp/etc" CHAISE_JAR="$CHAISE_JAR" CHAISE_JVM_OPTIONS="$here/../bin/jvm.options" CHAISE_ENTRYPOINT_PRINT=1 \
    COUCHDB_USER=admin COUCHDB_PASSWORD=pw COUCHDB_SECRET=sec NODENAME=node-a JAVA_OPTS=-Xmx256m bash "$here/entrypoint.sh")"
  # shellcheck disable=SC2086 # the printed command is a list of words (no paths with spaces here)
  ${JAVA:-java} ${cmd#java } > "$tmp/server.log" 2>&1 &
  server_pid=$!
  up=""
  for _ in $(seq 1 120); do
    up="$(curl -fsS "http://127.0.0.1:$port/_up" 2>/dev/null)" && break
    sleep 0.5
  done
  check "server up on the image's config" '{"status":"ok","seeds":{}}' "$up"
  check "NODENAME, read with the admin from COUCHDB_USER" "node-a" "$(curl -fsS -u admin:pw "http://127.0.0.1:$port/_node/_local/_config/chaise/node_name" | tr -d '"\n' | sed 's/couchdb@//')"
  check "secret from COUCHDB_SECRET" '"sec"' "$(curl -fsS -u admin:pw "http://127.0.0.1:$port/_node/_local/_config/chttpd_auth/secret" | tr -d '\n')"
  check "system databases" '["_replicator","_users"]' "$(curl -fsS -u admin:pw "http://127.0.0.1:$port/_all_dbs" | tr -d '\n')"
  check "password hashed in docker.ini" "0" "$(grep -c '= pw$' "$tmp/etc/local.d/docker.ini")"
  curl -fsS -u admin:pw -X PUT "http://127.0.0.1:$port/_node/_local/_config/log/level" -d '"warning"' >/dev/null
  check "_config writes go to docker.ini" "level = warning" "$(grep '^level' "$tmp/etc/local.d/docker.ini")"
  kill -TERM "$server_pid"
  wait "$server_pid"
  check "SIGTERM exits 0" "0" "$?"
  server_pid=""
else
  echo "skipped: the server run (set CHAISE_JAR to a built chaise.jar)"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]

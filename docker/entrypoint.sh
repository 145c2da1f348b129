#!/usr/bin/env bash
# Chaise's image entrypoint, with the official CouchDB image's conventions:
#   COUCHDB_USER, COUCHDB_PASSWORD  an admin, written to local.d/docker.ini unless an ini file names that user
#   COUCHDB_SECRET                  [chttpd_auth] secret, unless an ini file sets one
#   NODENAME                        [chaise] node_name = couchdb@NODENAME, unless an ini file sets one
# and Chaise's own:
#   CHAISE_STORAGE                  embedded (default) or fdb: [chaise] storage, unless an ini file sets one
#   FDB_COORDINATOR                 a host name: the FoundationDB cluster file is written for it at each start
#   JAVA_OPTS                       passed to the JVM after /opt/chaise/jvm.options (bin/jvm.options: a bounded heap)
# Arguments that start with '-' go to the server; any other command runs instead of it.
# CHAISE_ETC, CHAISE_JAR, CHAISE_JVM_OPTIONS and FDB_CLUSTER_FILE move the paths (docker/test-entrypoint.sh uses them).
set -euo pipefail

etc="${CHAISE_ETC:-/opt/couchdb/etc}"
jar="${CHAISE_JAR:-/opt/chaise/chaise.jar}"
jvm_options="${CHAISE_JVM_OPTIONS:-/opt/chaise/jvm.options}"
docker_ini="$etc/local.d/docker.ini"

if [ "$#" -gt 0 ] && [ "${1#-}" = "$1" ]; then
  exec "$@"
fi

# Whether any ini file of the chain sets [section] key (a commented line does not count).
ini_has() {
  local section="$1" key="$2" f
  for f in "$etc/local.ini" "$etc"/local.d/*.ini; do
    [ -f "$f" ] || continue
    if awk -v s="[$section]" -v k="$key" '
        { line = $0; gsub(/^[ \t]+|[ \t]+$/, "", line) }
        line ~ /^\[/ { cur = line; next }
        cur == s && line !~ /^[;#]/ { split(line, kv, "="); name = kv[1]; gsub(/[ \t]+$/, "", name); if (name == k) found = 1 }
        END { exit !found }' "$f"; then
      return 0
    fi
  done
  return 1
}

# Appends "key = value" under [section] of docker.ini.
ini_add() {
  printf '\n[%s]\n%s = %s\n' "$1" "$2" "$3" >> "$docker_ini"
}

mkdir -p "$etc/local.d"
# The last file of the chain: changes made over _config are written here, in the volume.
touch "$docker_ini"

if [ -n "${COUCHDB_USER:-}" ] && [ -n "${COUCHDB_PASSWORD:-}" ] && ! ini_has admins "$COUCHDB_USER"; then
  ini_add admins "$COUCHDB_USER" "$COUCHDB_PASSWORD" # Chaise replaces it by its hash at start
fi
if [ -n "${COUCHDB_SECRET:-}" ] && ! ini_has chttpd_auth secret; then
  ini_add chttpd_auth secret "$COUCHDB_SECRET"
fi
if [ -n "${NODENAME:-}" ] && ! ini_has chaise node_name; then
  ini_add chaise node_name "couchdb@$NODENAME"
fi
if [ -n "${CHAISE_STORAGE:-}" ]; then
  case "$CHAISE_STORAGE" in
    embedded|fdb) ;;
    *) echo "chaise: CHAISE_STORAGE must be embedded or fdb, not $CHAISE_STORAGE" >&2; exit 1 ;;
  esac
  # local.ini names the default; only an operator's local.d file wins over the environment.
  if ! grep -qs '^[[:space:]]*storage[[:space:]]*=' "$etc"/local.d/*.ini; then
    ini_add chaise storage "$CHAISE_STORAGE"
  fi
fi

if [ -n "${FDB_COORDINATOR:-}" ]; then
  # Cluster files hold addresses, and a container's address can change between runs.
  ip="$(getent ahostsv4 "$FDB_COORDINATOR" | awk 'NR == 1 { print $1 }')"
  if [ -z "$ip" ]; then
    echo "chaise: cannot resolve FDB_COORDINATOR=$FDB_COORDINATOR" >&2
    exit 1
  fi
  echo "docker:docker@${ip}:${FDB_COORDINATOR_PORT:-4500}" > "${FDB_CLUSTER_FILE:-/etc/foundationdb/fdb.cluster}"
fi

# With no admin at all the server refuses to start and says why (no "admin party", as CouchDB 3).

# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
set -- java "@$jvm_options" ${JAVA_OPTS:-} -jar "$jar" --config "$etc" "$@"
if [ -n "${CHAISE_ENTRYPOINT_PRINT:-}" ]; then
  printf '%s\n' "$*"
  exit 0
fi
exec "$@"

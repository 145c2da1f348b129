#!/bin/sh
# Starts Chaise. With FDB_COORDINATOR set (docker-compose.yml), first writes the FoundationDB
# cluster file from that host's address: cluster files hold IP addresses, and a container's
# address can change between runs.
set -eu
if [ -n "${FDB_COORDINATOR:-}" ]; then
  file="${FDB_CLUSTER_FILE:-/etc/foundationdb/fdb.cluster}"
  ip="$(getent ahostsv4 "$FDB_COORDINATOR" | awk 'NR == 1 { print $1 }')"
  if [ -z "$ip" ]; then
    echo "chaise: cannot resolve FDB_COORDINATOR=$FDB_COORDINATOR" >&2
    exit 1
  fi
  echo "docker:docker@${ip}:${FDB_COORDINATOR_PORT:-4500}" > "$file"
fi
# shellcheck disable=SC2086 # JAVA_OPTS is a list of options
exec java @/opt/chaise/etc/jvm.options ${JAVA_OPTS:-} -jar /opt/chaise/chaise.jar "$@"

#!/bin/bash
# One-shot: creates the database on a new FoundationDB cluster (single replica, ssd engine) and
# waits until it is available. On an existing database it only waits, so reruns are harmless.
set -uo pipefail
coordinator="${FDB_COORDINATOR:-fdb}"
cluster_file=/tmp/fdb.cluster

ip="$(getent ahostsv4 "$coordinator" | awk 'NR == 1 { print $1 }')"
if [ -z "$ip" ]; then
  echo "fdb-init: cannot resolve $coordinator" >&2
  exit 1
fi
echo "docker:docker@${ip}:${FDB_COORDINATOR_PORT:-4500}" > "$cluster_file"

for _ in $(seq 1 60); do
  out="$(fdbcli -C "$cluster_file" --exec "configure new single ssd" --timeout 10 2>&1)"
  echo "$out"
  case "$out" in
    *"Database created"*|*"already exists"*) break ;;
  esac
  sleep 1
done

for _ in $(seq 1 60); do
  if fdbcli -C "$cluster_file" --exec "status minimal" --timeout 10 2>&1 | grep -q "The database is available"; then
    echo "fdb-init: database available"
    exit 0
  fi
  sleep 1
done
echo "fdb-init: FoundationDB did not become available" >&2
exit 1

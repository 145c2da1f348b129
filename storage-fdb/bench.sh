#!/usr/bin/env bash
# Storage benchmarks on the durable embedded engine.
# Usage: storage-fdb/bench.sh [KvCommitBench|DocumentStoreBench] [seconds-per-run] [phases]
#   KvCommitBench       durable small transactions vs raw RocksDB group commit (default)
#   DocumentStoreBench  document inserts (single and batched) and reads by id through the storage layer;
#                       phases: any of single,bulk,read (default all)
set -euo pipefail
cd "$(dirname "$0")/.."
source bin/find-jdk.sh
export JAVA_HOME="$(find_jdk)"
main=dev.chaise.kv.bench.KvCommitBench
case "${1:-}" in
  KvCommitBench) shift ;;
  DocumentStoreBench) main=dev.chaise.storage.bench.DocumentStoreBench; shift ;;
esac
./mvnw -q -B -ntp -pl storage-fdb test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp -Dmdep.includeScope=test
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp "storage-fdb/target/classes:storage-fdb/target/test-classes:$(cat storage-fdb/target/bench.cp)" \
  "$main" "$@"

#!/usr/bin/env bash
# Durable small-transaction commit benchmark: embedded engine vs raw RocksDB group commit.
# Usage: storage-fdb/bench.sh [seconds-per-run]   (run from anywhere; needs a JDK 21+)
set -euo pipefail
cd "$(dirname "$0")/.."
source bin/find-jdk.sh
export JAVA_HOME="$(find_jdk)"
./mvnw -q -B -ntp -pl storage-fdb test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp -Dmdep.includeScope=test
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp "storage-fdb/target/classes:storage-fdb/target/test-classes:$(cat storage-fdb/target/bench.cp)" \
  dev.chaise.kv.bench.KvCommitBench "$@"

#!/usr/bin/env bash
# View benchmarks on the durable embedded engine.
# Usage: views/bench.sh ViewBuildBench [docs] [workers] [java|engine-class]
#        views/bench.sh JsMapBench [seconds [maps [engines [threads]]]]   GraalJS against Rhino 1.9 compiled
set -euo pipefail
cd "$(dirname "$0")/.."
source bin/find-jdk.sh
export JAVA_HOME="$(find_jdk)"
main=dev.chaise.views.bench.${1:-ViewBuildBench}
shift || true
./mvnw -q -B -ntp -pl views -am install -DskipTests
./mvnw -q -B -ntp -pl views test-compile dependency:build-classpath -Dmdep.outputFile=target/bench.cp -Dmdep.includeScope=test
exec "$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp "views/target/classes:views/target/test-classes:$(cat views/target/bench.cp)" \
  "$main" "$@"

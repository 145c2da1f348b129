package dev.chaise.kv.embedded;

import dev.chaise.kv.KvConformanceSuite;
import dev.chaise.kv.KvStore;

/** The conformance suite against the embedded engine on RocksDB's in-memory env. */
class EmbeddedMemoryConformanceTest extends KvConformanceSuite {
    @Override
    protected KvStore newStore() {
        return EmbeddedKvStore.open(EmbeddedOptions.inMemory());
    }
}

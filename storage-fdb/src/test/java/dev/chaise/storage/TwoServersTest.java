package dev.chaise.storage;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import org.junit.jupiter.api.AfterEach;

/**
 * Tests with two {@code Storage}s on one in-memory KV store, standing for two servers on one FDB
 * cluster: each caches handles of its own, and a change made through one must be seen by the other.
 */
abstract class TwoServersTest {
    final KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
    final Storage here;
    final Storage there;

    /** @param security the {@code _security} of new databases */
    TwoServersTest(String security) {
        here = new Storage(kv, security);
        there = new Storage(kv, security);
    }

    @AfterEach
    void closeServers() {
        here.close();
        there.close();
        kv.close();
    }
}

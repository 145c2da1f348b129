package dev.chaise.kv.embedded;

import dev.chaise.kv.KvConformanceSuite;
import dev.chaise.kv.KvStore;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The conformance suite against the embedded engine on disk (synced commits), a fresh directory per test. */
class EmbeddedDiskConformanceTest extends KvConformanceSuite {
    @TempDir
    Path dir;

    @Override
    protected KvStore newStore() {
        return EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir.resolve("db")));
    }
}

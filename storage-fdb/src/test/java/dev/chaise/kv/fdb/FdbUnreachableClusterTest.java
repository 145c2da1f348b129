package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.chaise.kv.KvException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster nobody answers for: requests fail, as unavailable, within the transaction timeout
 * instead of waiting forever. Needs libfdb_c (not a cluster); skipped where it is not installed.
 */
class FdbUnreachableClusterTest {
    @Test
    void anUnreachableClusterIsUnavailableWithinTheTimeout(@TempDir Path dir) throws Exception {
        var problem = FdbKvStore.nativeClientProblem();
        assumeTrue(problem.isEmpty(), () -> "libfdb_c is not installed here: " + problem.orElse(""));
        Path clusterFile = dir.resolve("fdb.cluster");
        Files.writeString(clusterFile, "nobody:home@127.0.0.1:1\n"); // port 1: nothing listens
        FdbKvStore.Options options = FdbKvStore.Options.defaults(clusterFile.toString()).withTransactionTimeout(Duration.ofSeconds(1)).withRetryLimit(3);
        try (FdbKvStore store = FdbKvStore.open(options)) {
            long start = System.nanoTime();
            KvException e = assertThrows(KvException.class, () -> store.run(tx -> tx.get(new byte[] {1})));
            Duration took = Duration.ofNanos(System.nanoTime() - start);
            assertTrue(e.unavailable(), e.getMessage());
            assertTrue(took.compareTo(Duration.ofSeconds(30)) < 0, "answered within a bounded time, not hung: " + took);
        }
    }
}

package dev.chaise.kv.embedded;

import static org.junit.jupiter.api.Assertions.*;

import dev.chaise.kv.Transaction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The memtable flushed while the process is idle: once per quiet spell, never while it is busy. */
class IdleFlushTest {

    /** 1,000 keys of 100 bytes take over 100 KB of memtable; an empty memtable, a few KB. */
    private static final long SOME = 32 << 10;

    private static EmbeddedKvStore open(Path dir, long minBytes, double maxCpuShare) {
        return EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir)
                .withIdleFlush(new EmbeddedOptions.IdleFlush(Duration.ofMillis(300), minBytes, maxCpuShare)));
    }

    private static void write(EmbeddedKvStore s, int keys) {
        try (Transaction tx = s.createTransaction()) {
            for (int i = 0; i < keys; i++) tx.set(("k" + i).getBytes(StandardCharsets.UTF_8), new byte[100]);
            tx.commit();
        }
    }

    private static long figure(EmbeddedKvStore s, String name) {
        Map<String, Object> f = s.engineFigures();
        return ((Number) f.get(name)).longValue();
    }

    @Test
    void aQuietStoreFlushesItsMemtableOnce(@TempDir Path dir) throws InterruptedException {
        try (EmbeddedKvStore s = open(dir, SOME, 0.5)) { // half a core: a test JVM at rest is far under
            write(s, 1000);
            assertEquals(0, figure(s, "total_sst_files_size"), "the write is in the memtable only");
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (figure(s, "total_sst_files_size") == 0 && System.nanoTime() < deadline) Thread.sleep(50);
            assertTrue(figure(s, "total_sst_files_size") > 0, "flushed into a table file");
            assertEquals(1, figure(s, "idle_flushes"));
            Thread.sleep(1200); // still quiet: no second flush of an empty memtable
            assertEquals(1, figure(s, "idle_flushes"));
            try (Transaction tx = s.createTransaction()) {
                assertEquals(100, tx.get("k999".getBytes(StandardCharsets.UTF_8)).length);
            }
        }
    }

    @Test
    void aBusyProcessKeepsItFromFlushing(@TempDir Path dir) {
        try (EmbeddedKvStore s = open(dir, SOME, 0.1)) { // a tenth: the spinning thread is far over, even on a loaded machine
            write(s, 1000);
            long end = System.nanoTime() + Duration.ofMillis(1500).toNanos();
            long spins = 0;
            while (System.nanoTime() < end) spins++; // a whole core, when it gets one
            assertTrue(spins > 0);
            assertEquals(0, figure(s, "idle_flushes"));
            assertEquals(0, figure(s, "total_sst_files_size"));
        }
    }

    @Test
    void aSmallMemtableIsLeftAlone(@TempDir Path dir) throws InterruptedException {
        try (EmbeddedKvStore s = open(dir, 64L << 20, 0.5)) {
            write(s, 1000);
            Thread.sleep(1500);
            assertEquals(0, figure(s, "idle_flushes"));
            assertEquals(0, figure(s, "total_sst_files_size"));
        }
    }

    @Test
    void aMemoryStoreHasNoIdleFlush() throws InterruptedException {
        try (EmbeddedKvStore s = EmbeddedKvStore.open(EmbeddedOptions.inMemory()
                .withIdleFlush(new EmbeddedOptions.IdleFlush(Duration.ofMillis(100), SOME, 0.5)))) {
            write(s, 1000);
            Thread.sleep(800);
            assertEquals(0, figure(s, "idle_flushes"));
        }
    }
}

package dev.chaise.kv.embedded;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.KvStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The live WAL is kept longer than what RocksDB wrote to it ({@link WalHeadroom}), and a store
 * that stops with that zeroed tail in place (a crash) recovers every acknowledged commit and goes
 * on writing. The crash is a copy of the directory taken while the store is open and idle: every
 * acknowledged commit was fsynced, so the copy is what a power cut would leave. (SIGKILL mid-load,
 * on the same tail, is {@link CrashDurabilityTest}.)
 */
class WalHeadroomTest {
    private static final int COMMITS = 300;

    @Test
    void theLiveLogRunsAheadOfItsWritesAndACrashOnItsZeroedTailLosesNothing(@TempDir Path tmp) throws IOException {
        Path db = tmp.resolve("db");
        Path crashed = tmp.resolve("crashed");
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(db))) {
            for (int i = 0; i < COMMITS; i++) put(store, i);
            Path log = liveLog(db);
            assertNotNull(log, "a live WAL");
            assertTrue(Files.size(log) >= WalHeadroom.CHUNK,
                    () -> "the live WAL is " + size(log) + " bytes long, not extended past its writes");
            copy(db, crashed);
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(crashed))) {
            for (int i = 0; i < COMMITS; i++) assertValue(store, i);
            for (int i = COMMITS; i < 2 * COMMITS; i++) put(store, i); // a new log after recovery, extended in turn
            assertTrue(Files.size(liveLog(crashed)) >= WalHeadroom.CHUNK, "the log after recovery is extended too");
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(crashed))) {
            for (int i = 0; i < 2 * COMMITS; i++) assertValue(store, i);
        }
    }

    @Test
    void aClosedLogIsCutBackToWhatWasWritten(@TempDir Path tmp) throws IOException {
        Path db = tmp.resolve("db");
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(db))) {
            for (int i = 0; i < 10; i++) put(store, i);
        }
        Path log = liveLog(db);
        assertTrue(log == null || Files.size(log) < WalHeadroom.CHUNK, () -> "a cleanly closed WAL keeps no zeroed tail: " + size(log));
    }

    private static void put(KvStore store, int i) {
        store.run(tx -> {
            tx.set(key(i), ("value-" + i).getBytes(US_ASCII));
            tx.set(("mirror/" + i).getBytes(US_ASCII), key(i)); // two keys: a commit lands whole or not at all
            return null;
        });
    }

    private static void assertValue(KvStore store, int i) {
        List<byte[]> got = store.run(tx -> List.of(nonNull(tx.get(key(i)), i), nonNull(tx.get(("mirror/" + i).getBytes(US_ASCII)), i)));
        assertArrayEquals(("value-" + i).getBytes(US_ASCII), got.get(0));
        assertArrayEquals(key(i), got.get(1));
    }

    private static byte[] nonNull(byte[] v, int i) {
        assertNotNull(v, "acknowledged commit " + i + " is there");
        return v;
    }

    private static byte[] key(int i) {
        return String.format("key/%06d", i).getBytes(US_ASCII);
    }

    private static Path liveLog(Path db) throws IOException {
        try (Stream<Path> files = Files.list(db)) {
            return files.filter(p -> p.getFileName().toString().endsWith(".log")).max(Path::compareTo).orElse(null);
        }
    }

    private static long size(Path p) {
        try {
            return p == null ? -1 : Files.size(p);
        } catch (IOException e) {
            return -1;
        }
    }

    /** Every file but the lock, bytes as they are (the WAL's sparse tail reads as zeros). */
    private static void copy(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (f.getFileName().toString().equals("LOCK")) continue;
                Files.copy(f, to.resolve(f.getFileName()));
            }
        }
        assertEquals(Files.size(liveLog(from)), Files.size(liveLog(to)));
    }
}

package dev.chaise.kv.embedded;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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

    /**
     * Small commits find the {@link WalHeadroom#FILL_AHEAD} past RocksDB's write position already
     * written (blocks neither a hole nor preallocated-unwritten, so writing them changes no
     * metadata), and that position, read from RocksDB's file descriptor, is exactly what it
     * wrote: the length a clean close cuts the log back to. Linux only: the position comes from
     * /proc, the extents from filefrag(8).
     */
    @Test
    void smallCommitsFindTheLogWrittenAheadOfThem(@TempDir Path tmp) throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/fdinfo")), "Linux's /proc");
        Path db = tmp.resolve("db");
        long position;
        try (EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(db))) {
            for (int i = 0; i < COMMITS; i++) put(store, i);
            position = store.walHeadroom().rocksPosition();
            assertTrue(position > 0, "RocksDB's position in the live log is known: " + position);
            // The filled part: from the page after the position's to half the fill ahead (the rest may be ahead of the last look).
            List<String> extents = extents(liveLog(db));
            assumeTrue(extents != null, "filefrag(8) lists the log's extents");
            long from = position / 4096 + 1;
            long to = (position + WalHeadroom.FILL_AHEAD / 2) / 4096;
            assertTrue(written(extents, from, to), () -> "blocks " + from + ".." + to + " of the live log are written: " + extents);
        }
        assertEquals(position, Files.size(liveLog(db)), "a clean close cuts the log back to RocksDB's position");
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(db))) {
            for (int i = 0; i < COMMITS; i++) assertValue(store, i);
        }
    }

    /** filefrag -v's extent lines ("ext: start.. end: phys.. end: length: [expected:] flags"), null if it cannot run. */
    private static List<String> extents(Path file) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder("filefrag", "-v", "-b4096", file.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            return null;
        }
        String out = new String(p.getInputStream().readAllBytes(), US_ASCII);
        if (p.waitFor() != 0) return null;
        return out.lines().filter(l -> l.matches("\\s*\\d+:.*")).toList();
    }

    /** Whether every 4 KB block in [from, to) lies in an extent that is allocated and not flagged unwritten. */
    private static boolean written(List<String> extents, long from, long to) {
        long next = from;
        for (String line : extents) {
            String[] f = line.trim().split(":");
            String[] logical = f[1].trim().split("\\.\\.");
            long start = Long.parseLong(logical[0].trim());
            long end = Long.parseLong(logical[1].trim());
            if (end < next || start > next) continue;
            if (line.contains("unwritten")) return false;
            next = end + 1;
            if (next >= to) return true;
        }
        return next >= to;
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

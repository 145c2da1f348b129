package dev.chaise.kv.embedded;

import static org.junit.jupiter.api.Assertions.*;

import dev.chaise.kv.KeyValue;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.Transaction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's own pieces; the seam's behaviour is KvConformanceSuite's job. */
class EngineInternalsTest {

    static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void conflictHistoryStepFunction() {
        ConflictHistory h = new ConflictHistory();
        h.recordWrite(b("b"), b("d"), 10);
        assertTrue(h.conflicts(b("a"), b("c"), 5));
        assertTrue(h.conflicts(b("c"), b("z"), 9));
        assertFalse(h.conflicts(b("d"), b("z"), 5), "end is exclusive");
        assertFalse(h.conflicts(b("a"), b("b"), 5));
        assertFalse(h.conflicts(b("a"), b("z"), 10), "a write at the read version is visible, not a conflict");
        h.recordWrite(b("c"), b("c\0"), 20);
        assertTrue(h.conflicts(b("b"), b("c\0"), 15));
        assertFalse(h.conflicts(b("b"), b("c"), 15), "[b,c) was last written at 10");
        h.expire(20);
        assertEquals(0, h.generationCount());
        assertFalse(h.conflicts(b(""), b("\u007f"), 0));
    }

    /**
     * The conflict history keeps a write only while some transaction reads below it: a live
     * transaction's view holds every later write however many batches and generations pass, and
     * once it ends the next commit forgets them.
     */
    @Test
    void conflictHistoryLastsAsLongAsTheOldestLiveReader() throws InterruptedException {
        try (EmbeddedKvStore s = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            commit(s, "k", "0");
            Transaction reader = s.createTransaction();
            assertArrayEquals(b("0"), reader.get(b("k")));
            long pinned = s.oldestReadableView();
            assertTrue(pinned <= reader.getReadVersion());
            commit(s, "k", "1");
            for (int i = 0; i < 3; i++) {
                Thread.sleep(120); // past a generation's span, so each commit opens a new one
                commit(s, "other", Integer.toString(i));
            }
            assertEquals(pinned, s.oldestReadableView(), "the reader's view is still the oldest");
            assertTrue(s.sequencer().historyGenerations() >= 4, "every write since the reader's view is kept");
            reader.set(b("r"), b("x"));
            KvException e = assertThrows(KvException.class, reader::commit);
            assertEquals(KvException.NOT_COMMITTED, e.code(), "k was written after the reader read it");
            reader.close();

            assertTrue(s.oldestReadableView() > pinned, "no transaction reads at the old view any more");
            Thread.sleep(120);
            commit(s, "other", "last");
            assertEquals(1, s.sequencer().historyGenerations(), "only the last commit's generation is left");
            try (Transaction late = s.createTransaction()) {
                assertArrayEquals(b("1"), late.get(b("k")));
                late.set(b("k"), b("2"));
                late.commit(); // nothing it read was written after its read version
            }
        }
    }

    private static void commit(KvStore s, String key, String value) {
        try (Transaction tx = s.createTransaction()) {
            tx.set(b(key), b(value));
            tx.commit();
        }
    }

    @Test
    void writeBufferCoalescesClearedRanges() {
        WriteBuffer w = new WriteBuffer();
        w.set(b("c"), b("1"));
        w.clear(b("b"), b("d"));
        w.clear(b("e"), b("g"));
        w.clear(b("c"), b("f"));
        assertEquals(1, w.cleared.size());
        assertArrayEquals(b("b"), w.cleared.firstKey());
        assertArrayEquals(b("g"), w.cleared.firstEntry().getValue());
        assertTrue(w.points.isEmpty(), "the clear dropped the earlier set");
        w.mutate(MutationType.ADD, b("c"), new byte[] {5});
        assertInstanceOf(WriteBuffer.SetOp.class, w.points.get(b("c")), "an add on a cleared key has a known base");
    }

    @Test
    void atomicsFollowFdbSemantics() {
        assertArrayEquals(new byte[] {0, 1}, Atomics.apply(MutationType.ADD, new byte[] {(byte) 0xff}, new byte[] {1, 0}));
        assertArrayEquals(new byte[] {0}, Atomics.apply(MutationType.ADD, new byte[] {(byte) 0xff, 7}, new byte[] {1}), "truncated to operand");
        assertArrayEquals(new byte[] {3}, Atomics.apply(MutationType.BIT_AND, null, new byte[] {3}));
        assertArrayEquals(new byte[] {1, 2}, Atomics.apply(MutationType.MAX, new byte[] {1, 2}, new byte[] {(byte) 0xff, 1}));
        assertNull(Atomics.apply(MutationType.COMPARE_AND_CLEAR, b("x"), b("x")));
        assertArrayEquals(b("y"), Atomics.apply(MutationType.COMPARE_AND_CLEAR, b("y"), b("x")));
    }

    @Test
    void survivesReopenAndVersionsNeverGoBack(@TempDir Path dir) {
        long v1;
        try (KvStore s = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            try (Transaction tx = s.createTransaction()) {
                tx.set(b("k"), b("v"));
                tx.commit();
                v1 = tx.getCommittedVersion();
            }
        }
        try (KvStore s = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            try (Transaction tx = s.createTransaction()) {
                assertArrayEquals(b("v"), tx.get(b("k")));
                assertTrue(tx.getReadVersion() > v1);
                tx.set(b("k2"), b("v"));
                tx.commit();
                assertTrue(tx.getCommittedVersion() > v1);
            }
        }
    }

    /**
     * RocksDB writes the options it runs with into the store's OPTIONS file: the delay of its
     * "BottommostFiles" rewrites (set through its options parser, RocksJava has no setter) must be
     * there for both column families, or every flushed file is rewritten as soon as the MVCC
     * window's snapshots move past it.
     */
    @Test
    void bottommostRewritesWaitAnHour(@TempDir Path dir) throws java.io.IOException {
        try (KvStore s = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            s.run(tx -> { tx.set(b("k"), b("v")); return null; });
        }
        Path options;
        try (var files = java.nio.file.Files.list(dir)) {
            options = files.filter(f -> f.getFileName().toString().startsWith("OPTIONS-")).max(java.util.Comparator.naturalOrder()).orElseThrow();
        }
        long set = java.nio.file.Files.readAllLines(options).stream().map(String::strip)
                .filter(l -> l.equals("bottommost_file_compaction_delay=3600")).count();
        assertEquals(2, set, "both column families");
    }

    @Test
    void smokeRywRangeAndConflict() {
        try (KvStore s = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            s.run(tx -> {
                for (int i = 0; i < 10; i++) tx.set(b("k" + i), b("v" + i));
                return null;
            });
            try (Transaction t1 = s.createTransaction(); Transaction t2 = s.createTransaction()) {
                t1.clear(b("k2"), b("k5"));
                t1.set(b("k3"), b("new"));
                t1.mutate(MutationType.ADD, b("k9"), new byte[] {1});
                List<KeyValue> r = t1.getRangeAsList(b("k"), b("l"), 0, false);
                assertEquals(List.of("k0", "k1", "k3", "k5", "k6", "k7", "k8", "k9"), r.stream().map(kv -> new String(kv.key())).toList());
                assertEquals("new", new String(r.get(2).value()));
                assertEquals('v' + 1, r.get(7).value()[0]);
                List<KeyValue> rev = t1.getRangeAsList(b("k"), b("l"), 3, true);
                assertEquals(List.of("k9", "k8", "k7"), rev.stream().map(kv -> new String(kv.key())).toList());
                t2.get(b("k3"));
                t2.set(b("other"), b("x"));
                t1.commit();
                KvException e = assertThrows(KvException.class, t2::commit);
                assertEquals(1020, e.code());
            }
        }
    }

    /**
     * The resolver keeps the values its atomic operations wrote (LatestAtomics) and starts the next
     * operation on the key from them: every other kind of write to the key must drop that value, or
     * the next addition would start from a stale base. Each step here would give a wrong sum then.
     */
    @Test
    void atomicOperationsSeeEveryOtherWriteOfTheirKey(@TempDir Path dir) {
        try (KvStore s = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            byte[] k = b("counter");
            add(s, k, 1);
            add(s, k, 2);
            assertEquals(3, value(s, k), "added to its own last result");
            s.run(tx -> { tx.set(k, new byte[] {10}); return null; });
            add(s, k, 1);
            assertEquals(11, value(s, k), "after a set");
            s.run(tx -> { tx.clear(b("c"), b("d")); return null; });
            add(s, k, 1);
            assertEquals(1, value(s, k), "after a cleared range");
            add(s, k, 4);
            s.run(tx -> { tx.clear(k); return null; });
            add(s, k, 2);
            assertEquals(2, value(s, k), "after a clear");
            s.run(tx -> { tx.setVersionstampedValue(k, new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}); return null; });
            s.run(tx -> { tx.mutate(MutationType.COMPARE_AND_CLEAR, k, s.run(t -> t.get(k))); return null; });
            add(s, k, 7);
            assertEquals(7, value(s, k), "after a versionstamped value and a compare-and-clear");
            s.run(tx -> { tx.mutate(MutationType.ADD, k, new byte[] {1}); tx.set(b("counter2"), new byte[] {1}); tx.mutate(MutationType.ADD, b("counter2"), new byte[] {1}); return null; });
            assertEquals(8, value(s, k), "two keys in one transaction");
            assertEquals(2, value(s, b("counter2")));
        }
    }

    /**
     * A bulk-sized transaction is asked about each cached counter (LatestAtomics), where a small
     * one has its every key checked: a set inside a run of ascending keys, a cleared range and a
     * point set among hundreds of writes must each still drop the cached value.
     */
    @Test
    void atomicOperationsSeeOtherWritesOfTheirKeyAmongABigTransactionsWrites(@TempDir Path dir) {
        try (KvStore s = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            byte[] k = b("m/counter");
            byte[] other = b("z/counter");
            add(s, k, 1);
            add(s, other, 5);
            s.run(tx -> { tx.setAll(run("m/", 200, k, new byte[] {10})); return null; });
            add(s, k, 1);
            assertEquals(11, value(s, k), "after a run holding the key");
            s.run(tx -> { tx.setAll(run("n/", 200, null, null)); tx.clear(b("m/"), b("m0")); return null; });
            add(s, k, 1);
            assertEquals(1, value(s, k), "after a cleared range among many writes");
            s.run(tx -> { tx.setAll(run("n/", 200, null, null)); tx.set(k, new byte[] {20}); return null; });
            add(s, k, 2);
            assertEquals(22, value(s, k), "after a point set among many writes");
            add(s, other, 1);
            assertEquals(6, value(s, other), "a counter none of them touched");
        }
    }

    /** A transaction answers for the keys its commit's versionstamps gave, besides its buffer's. */
    @Test
    void aWrittenTransactionAnswersForItsVersionstampedKeys() {
        WriteBuffer w = new WriteBuffer();
        w.set(b("p"), b("1"));
        w.clear(b("r0"), b("r9"));
        // The versionstamped keys ascending (searched) and not (each compared).
        for (List<String> stamped : List.of(List.of("s1", "s3", "s5"), List.of("s5", "s1", "s3"))) {
            List<byte[]> keys = new ArrayList<>(List.of(b("p")));
            for (String k : stamped) keys.add(b(k));
            Touched t = new Touched(w, keys, 1, List.of());
            assertTrue(t.touches(b("p")));
            assertTrue(t.touches(b("r5")));
            for (String k : stamped) assertTrue(t.touches(b(k)), k + " of " + stamped);
            assertFalse(t.touches(b("q")));
            assertFalse(t.touches(b("s2")), "between two of them");
            assertFalse(t.touches(b("s6")), "past them");
        }
    }

    /** {@code n} ascending keys under {@code prefix}, and {@code extra} among them in its place if given. */
    private static List<KeyValue> run(String prefix, int n, byte[] extra, byte[] extraValue) {
        List<KeyValue> kvs = new ArrayList<>();
        for (int i = 0; i < n; i++) kvs.add(new KeyValue(b(prefix + String.format("%03d", i)), b("v")));
        if (extra != null) kvs.add(new KeyValue(extra, extraValue));
        kvs.sort((x, y) -> dev.chaise.kv.Keys.compare(x.key(), y.key()));
        return kvs;
    }

    private static void add(KvStore s, byte[] key, int n) {
        s.run(tx -> {
            tx.mutate(MutationType.ADD, key, new byte[] {(byte) n, 0, 0, 0, 0, 0, 0, 0});
            return null;
        });
    }

    private static long value(KvStore s, byte[] key) {
        byte[] v = s.run(tx -> tx.get(key));
        long x = 0;
        for (int i = v.length - 1; i >= 0; i--) x = (x << 8) | (v[i] & 0xff);
        return x;
    }
}

package dev.chaise.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The one conformance suite every backend must pass. A backend's test class extends it and
 * supplies {@link #newStore()}; each test gets a fresh, empty user key space.
 *
 * <p>Every expectation here is FoundationDB's behaviour (API 7.3, the fdb_c client's
 * read-your-writes transaction), not whatever an engine happens to do: the fdb backend must pass
 * it unchanged, and the embedded engine is held to it. Where a rule is FDB client code rather
 * than documentation, the test says where it comes from.
 */
public abstract class KvConformanceSuite {

    /** A store whose user key space ({@code ""} to {@code \xff}) is empty. Closed by the test. */
    protected abstract KvStore newStore() throws Exception;

    protected KvStore store;

    @BeforeEach
    void openStore() throws Exception {
        store = newStore();
    }

    @AfterEach
    void closeStore() {
        if (store != null) store.close();
    }

    // =====================================================================================
    // helpers

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    private static byte[] bytes(int... v) {
        byte[] out = new byte[v.length];
        for (int i = 0; i < v.length; i++) out[i] = (byte) v[i];
        return out;
    }

    private static byte[] filled(int length, int value) {
        byte[] out = new byte[length];
        Arrays.fill(out, (byte) value);
        return out;
    }

    private static String p(byte[] key) {
        return key == null ? null : Keys.printable(key);
    }

    private static List<String> keysOf(List<KeyValue> kvs) {
        return kvs.stream().map(kv -> p(kv.key())).toList();
    }

    private static List<String> printables(byte[]... keys) {
        return Arrays.stream(keys).map(Keys::printable).toList();
    }

    private static byte[] le64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    private static long le64(byte[] v) {
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static KvException assertKv(int code, Executable e) {
        KvException k = assertThrows(KvException.class, e);
        assertEquals(code, k.code(), () -> "expected FDB error " + code + " but got " + k.getMessage());
        return k;
    }

    /** Sets key/value pairs ({@code "k1","v1","k2","v2"...}) in one committed transaction. */
    private void put(String... kv) {
        store.run(tx -> {
            for (int i = 0; i < kv.length; i += 2) tx.set(b(kv[i]), b(kv[i + 1]));
            return null;
        });
    }

    private byte[] read(byte[] key) {
        return store.run(tx -> tx.get(key));
    }

    private List<KeyValue> readRange(byte[] begin, byte[] end) {
        return store.run(tx -> tx.getRangeAsList(begin, end, 0, false));
    }

    private static List<KeyValue> all(ReadTransaction tx) {
        return tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, false);
    }

    private static <T> List<T> runConcurrently(int threads, java.util.function.IntFunction<T> task) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                futures.add(pool.submit(() -> task.apply(id)));
            }
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                try {
                    out.add(f.get(120, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof Exception ex) throw ex;
                    throw e;
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    // =====================================================================================
    // key order and ranges

    @Test
    public void keysSortAsUnsignedBytes() {
        byte[][] sorted = {
            bytes(0x00), bytes(0x00, 0x00), bytes(0x00, 0xff), bytes(0x01), bytes(0x7f), bytes(0x7f, 0xff),
            bytes(0x80), bytes(0x80, 0x00), bytes(0xc0), bytes(0xfe), bytes(0xfe, 0xff)
        };
        List<byte[]> shuffled = new ArrayList<>(Arrays.asList(sorted));
        Collections.shuffle(shuffled, new Random(7));
        // Half committed, half only in the reading transaction: both the store and the
        // read-your-writes merge must order unsigned.
        store.run(tx -> {
            for (int i = 0; i < shuffled.size(); i += 2) tx.set(shuffled.get(i), shuffled.get(i));
            return null;
        });
        try (Transaction tx = store.createTransaction()) {
            for (int i = 1; i < shuffled.size(); i += 2) tx.set(shuffled.get(i), shuffled.get(i));
            List<KeyValue> forward = all(tx);
            assertEquals(printables(sorted), keysOf(forward));
            for (KeyValue kv : forward) assertArrayEquals(kv.key(), kv.value());
            List<String> reversed = new ArrayList<>(printables(sorted));
            Collections.reverse(reversed);
            assertEquals(reversed, keysOf(tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, true)));
            assertEquals(printables(bytes(0x7f), bytes(0x7f, 0xff)), keysOf(tx.getRangeAsList(bytes(0x7f), bytes(0x80), 0, false)));
            assertEquals(p(bytes(0x80)), p(tx.getKey(KeySelector.firstGreaterThan(bytes(0x7f, 0xff)))));
            assertEquals(p(bytes(0x7f, 0xff)), p(tx.getKey(KeySelector.lastLessThan(bytes(0x80)))));
            tx.commit();
        }
        assertEquals(printables(sorted), keysOf(readRange(Keys.EMPTY, Keys.SYSTEM_PREFIX)));
    }

    @Test
    public void forwardAndReverseRangesWithLimits() {
        store.run(tx -> {
            for (int i = 0; i < 20; i++) tx.set(b(String.format("k%02d", i)), b("v" + i));
            return null;
        });
        try (Transaction tx = store.createTransaction()) {
            List<KeyValue> mid = tx.getRangeAsList(b("k05"), b("k15"), 0, false);
            assertEquals(10, mid.size(), "limit 0 is unlimited; end is exclusive");
            assertEquals("k05", p(mid.get(0).key()));
            assertEquals("v5", new String(mid.get(0).value(), UTF_8));
            assertEquals("k14", p(mid.get(9).key()));

            assertEquals(List.of("k05", "k06", "k07"), keysOf(tx.getRangeAsList(b("k05"), b("k15"), 3, false)));
            assertEquals(List.of("k14", "k13", "k12"), keysOf(tx.getRangeAsList(b("k05"), b("k15"), 3, true)));
            List<KeyValue> rev = tx.getRangeAsList(b("k05"), b("k15"), 0, true);
            assertEquals(10, rev.size());
            assertEquals("k14", p(rev.get(0).key()));
            assertEquals("k05", p(rev.get(9).key()));
            assertEquals(10, tx.getRangeAsList(b("k05"), b("k15"), 1000, false).size(), "a limit above the count returns all");
            assertEquals(List.of("k19"), keysOf(tx.getRangeAsList(b("k"), b("l"), 1, true)));
            assertEquals(List.of("k00"), keysOf(tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 1, false)));
            assertTrue(tx.getRangeAsList(b("k05"), b("k05"), 0, false).isEmpty(), "begin == end is empty");
            assertTrue(tx.getRangeAsList(b("k055"), b("k06"), 0, false).isEmpty());
            assertTrue(tx.getRangeAsList(b("x"), Keys.SYSTEM_PREFIX, 0, true).isEmpty());

            // An iterator can be abandoned part-way.
            try (RangeIterator it = tx.getRange(b("k"), b("l"))) {
                assertEquals("k00", p(it.next().key()));
                assertEquals("k01", p(it.next().key()));
            }
        }
    }

    @Test
    public void invertedReadRangeIsEmpty() {
        // FDB's ReadYourWritesTransaction::getRange returns an empty result when begin > end
        // ("RYW range inverted"); only clear(begin, end) raises 2005 inverted_range.
        put("a", "1", "b", "2", "c", "3");
        try (Transaction tx = store.createTransaction()) {
            assertTrue(tx.getRangeAsList(b("c"), b("a"), 0, false).isEmpty());
            assertTrue(tx.getRangeAsList(b("c"), b("a"), 0, true).isEmpty());
            assertTrue(tx.snapshot().getRangeAsList(b("c"), b("a"), 0, false).isEmpty());
            assertKv(KvException.INVERTED_RANGE, () -> tx.clear(b("c"), b("a")));
        }
    }

    @Test
    public void rangeStartsWith() {
        byte[][] keys = {
            b("a"), b("ab"), bytes('a', 'b', 0x00), b("abc"), bytes('a', 'b', 0x7f), bytes('a', 'b', 0xff),
            bytes('a', 'b', 0xff, 0xff), b("ac"), b("b"),
            bytes(0x01, 0xfe, 0xff), bytes(0x01, 0xff), bytes(0x01, 0xff, 0x00), bytes(0x01, 0xff, 0xff), bytes(0x02)
        };
        store.run(tx -> {
            for (byte[] k : keys) tx.set(k, b("x"));
            return null;
        });
        try (Transaction tx = store.createTransaction()) {
            List<KeyValue> ab = new ArrayList<>();
            try (RangeIterator it = tx.getRangeStartsWith(b("ab"), 0, false)) {
                it.forEachRemaining(ab::add);
            }
            assertEquals(printables(b("ab"), bytes('a', 'b', 0x00), b("abc"), bytes('a', 'b', 0x7f), bytes('a', 'b', 0xff),
                    bytes('a', 'b', 0xff, 0xff)), keysOf(ab));

            // A prefix ending in 0xff: strinc drops it and increments the byte before.
            List<KeyValue> ff = new ArrayList<>();
            try (RangeIterator it = tx.getRangeStartsWith(bytes(0x01, 0xff), 0, false)) {
                it.forEachRemaining(ff::add);
            }
            assertEquals(printables(bytes(0x01, 0xff), bytes(0x01, 0xff, 0x00), bytes(0x01, 0xff, 0xff)), keysOf(ff));

            List<KeyValue> rev = new ArrayList<>();
            try (RangeIterator it = tx.getRangeStartsWith(bytes(0x01, 0xff), 2, true)) {
                it.forEachRemaining(rev::add);
            }
            assertEquals(printables(bytes(0x01, 0xff, 0xff), bytes(0x01, 0xff, 0x00)), keysOf(rev));
        }
    }

    @Test
    public void rangesStreamBeyondOneBatch() {
        int n = 10_000;
        byte[] value = filled(100, 'v');
        for (int part = 0; part < 2; part++) {
            int from = part * n / 2;
            store.run(tx -> {
                for (int i = from; i < from + n / 2; i++) tx.set(b(String.format("s/%05d", i)), value);
                return null;
            });
        }
        try (Transaction tx = store.createTransaction()) {
            int count = 0;
            try (RangeIterator it = tx.getRangeStartsWith(b("s/"), 0, false)) {
                while (it.hasNext()) {
                    KeyValue kv = it.next();
                    assertEquals(String.format("s/%05d", count), p(kv.key()));
                    assertArrayEquals(value, kv.value());
                    count++;
                }
            }
            assertEquals(n, count);

            count = 0;
            try (RangeIterator it = tx.getRangeStartsWith(b("s/"), 0, true)) {
                while (it.hasNext()) {
                    assertEquals(String.format("s/%05d", n - 1 - count), p(it.next().key()));
                    count++;
                }
            }
            assertEquals(n, count);

            assertEquals(7_500, tx.getRangeAsList(b("s/"), b("s0"), 7_500, false).size());
            List<KeyValue> tail = tx.getRangeAsList(b("s/"), b("s0"), 7_500, true);
            assertEquals(7_500, tail.size());
            assertEquals("s/02500", p(tail.get(7_499).key()));

            // Own writes merged into a long stream: every 100th key cleared, a new key after every 1000th.
            for (int i = 0; i < n; i += 100) tx.clear(b(String.format("s/%05d", i)));
            for (int i = 0; i < n; i += 1000) tx.set(b(String.format("s/%05d+", i)), b("new"));
            tx.clear(b("s/05000"), b("s/06000")); // also drops the new s/05000+
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                if (i >= 5000 && i < 6000) continue;
                if (i % 100 != 0) expected.add(String.format("s/%05d", i));
                if (i % 1000 == 0) expected.add(String.format("s/%05d+", i));
            }
            List<KeyValue> merged = tx.getRangeAsList(b("s/"), b("s0"), 0, false);
            assertEquals(expected, keysOf(merged));
            List<KeyValue> mergedRev = tx.getRangeAsList(b("s/"), b("s0"), 0, true);
            Collections.reverse(expected);
            assertEquals(expected, keysOf(mergedRev));
        }
    }

    @Test
    public void keySelectors() {
        put("k10", "1", "k20", "2", "k30", "3", "k40", "4");
        try (Transaction tx = store.createTransaction()) {
            assertEquals("k20", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k20")))));
            assertEquals("k20", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k15")))));
            assertEquals("k30", p(tx.getKey(KeySelector.firstGreaterThan(b("k20")))));
            assertEquals("k20", p(tx.getKey(KeySelector.firstGreaterThan(b("k15")))));
            assertEquals("k10", p(tx.getKey(KeySelector.lastLessThan(b("k20")))));
            assertEquals("k20", p(tx.getKey(KeySelector.lastLessThan(b("k25")))));
            assertEquals("k20", p(tx.getKey(KeySelector.lastLessOrEqual(b("k20")))));
            assertEquals("k20", p(tx.getKey(KeySelector.lastLessOrEqual(b("k25")))));
            assertEquals("k40", p(tx.getKey(KeySelector.lastLessThan(Keys.SYSTEM_PREFIX))));

            // Offsets move whole keys from the base selector.
            assertEquals("k30", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k10")).add(2))));
            assertEquals("k40", p(tx.getKey(KeySelector.firstGreaterThan(b("k10")).add(2))));
            assertEquals("k20", p(tx.getKey(KeySelector.lastLessOrEqual(b("k40")).add(-2))));
            assertEquals("k20", p(tx.getKey(KeySelector.lastLessThan(b("k40")).add(-1))));
            assertEquals("k20", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k30")).add(-1))));
            assertEquals("k30", p(tx.getKey(KeySelector.lastLessThan(b("k30")).add(1))));
            assertEquals("k40", p(tx.getKey(new KeySelector(b("k00"), false, 4))));

            // Before the first key: the empty key. Past the last: \xff.
            assertEquals("", p(tx.getKey(KeySelector.lastLessThan(b("k10")))));
            assertEquals("", p(tx.getKey(KeySelector.lastLessOrEqual(b("k10")).add(-1))));
            assertEquals("", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k10")).add(-5))));
            assertEquals("", p(tx.getKey(KeySelector.lastLessThan(Keys.EMPTY))));
            assertEquals("\\xff", p(tx.getKey(KeySelector.firstGreaterThan(b("k40")))));
            assertEquals("\\xff", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k50")))));
            assertEquals("\\xff", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k20")).add(3))));
            assertEquals("\\xff", p(tx.getKey(KeySelector.lastLessOrEqual(b("k40")).add(1))));
            assertEquals("\\xff", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k10")).add(100))));

            // Selectors resolve over the transaction's own writes too.
            tx.set(b("k25"), b("x"));
            tx.clear(b("k30"));
            assertEquals("k25", p(tx.getKey(KeySelector.firstGreaterThan(b("k20")))));
            assertEquals("k40", p(tx.getKey(KeySelector.firstGreaterThan(b("k25")))));
            assertEquals("k25", p(tx.getKey(KeySelector.lastLessThan(b("k40")))));
            assertEquals("k40", p(tx.getKey(KeySelector.firstGreaterOrEqual(b("k10")).add(3))));
            assertEquals("k20", p(tx.snapshot().getKey(KeySelector.lastLessOrEqual(b("k40")).add(-2))));
        }
    }

    // =====================================================================================
    // read-your-writes and snapshot isolation

    @Test
    public void readsSeeOwnSetsClearsAndRangeClears() {
        put("a", "1", "b", "2", "c", "3", "d", "4", "e", "5");
        try (Transaction tx = store.createTransaction()) {
            tx.set(b("a"), b("10"));
            assertArrayEquals(b("10"), tx.get(b("a")));
            tx.clear(b("b"));
            assertNull(tx.get(b("b")));
            tx.clear(b("c"), b("e"));
            assertNull(tx.get(b("c")));
            assertNull(tx.get(b("d")));
            assertArrayEquals(b("5"), tx.get(b("e")), "range clear end is exclusive");
            tx.set(b("d"), b("40"));
            assertArrayEquals(b("40"), tx.get(b("d")), "a set after a range clear is visible");
            tx.set(b("new"), b("n"));
            assertArrayEquals(b("n"), tx.get(b("new")));
            tx.set(b("gone"), b("g"));
            tx.clear(b("g"), b("h"));
            assertNull(tx.get(b("gone")), "a range clear after a set removes it");
            tx.clear(b("e"));
            tx.set(b("e"), b("50"));
            assertArrayEquals(b("50"), tx.get(b("e")));
            assertNull(tx.get(b("never")));

            List<String> expected = List.of("a=10", "d=40", "e=50", "new=n");
            assertEquals(expected, all(tx).stream().map(kv -> p(kv.key()) + "=" + p(kv.value())).toList());
            assertEquals(List.of("new", "e", "d", "a"), keysOf(tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, true)));
            assertEquals(List.of("new", "e"), keysOf(tx.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 2, true)));
            assertEquals(List.of("a", "d"), keysOf(tx.snapshot().getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 2, false)));
            assertArrayEquals(b("40"), tx.snapshot().get(b("d")));
            tx.commit();
        }
        assertEquals(List.of("a", "d", "e", "new"), keysOf(readRange(Keys.EMPTY, Keys.SYSTEM_PREFIX)));
        assertArrayEquals(b("10"), read(b("a")));
    }

    private static List<KeyValue> pairs(String... kv) {
        List<KeyValue> out = new ArrayList<>();
        for (int i = 0; i < kv.length; i += 2) out.add(new KeyValue(b(kv[i]), b(kv[i + 1])));
        return out;
    }

    private static List<String> rows(ReadTransaction tx, byte[] begin, byte[] end, int limit, boolean reverse) {
        return tx.getRangeAsList(begin, end, limit, reverse).stream().map(kv -> p(kv.key()) + "=" + p(kv.value())).toList();
    }

    /** setAll is that many sets: every read sees its pairs, and later writes in its span win. */
    @Test
    public void setAllReadsAsItsSets() {
        put("m/0", "old", "m/9", "old", "z", "z");
        try (Transaction tx = store.createTransaction()) {
            tx.setAll(pairs("m/1", "1", "m/2", "2", "m/3", "3", "m/4", "4", "m/5", "5"));
            assertArrayEquals(b("3"), tx.get(b("m/3")));
            assertNull(tx.get(b("m/25")), "between two of its keys nothing is written");
            assertEquals(List.of("m/0=old", "m/1=1", "m/2=2", "m/3=3", "m/4=4", "m/5=5", "m/9=old"), rows(tx, b("m/"), b("m0"), 0, false));
            assertEquals(List.of("m/4=4", "m/3=3"), rows(tx, b("m/25"), b("m/5"), 0, true), "a range that starts inside its span");
            assertEquals(List.of("m/5=5", "m/4=4"), rows(tx, b("m/"), b("m0"), 3, true).subList(1, 3));
            assertArrayEquals(b("4"), tx.snapshot().get(b("m/4")));

            tx.set(b("m/2"), b("two"));
            tx.clear(b("m/4"));
            tx.mutate(MutationType.ADD, b("m/5"), bytes(1));
            tx.set(b("m/35"), b("between"));
            assertEquals(List.of("m/0=old", "m/1=1", "m/2=two", "m/3=3", "m/35=between", "m/5=" + p(bytes('5' + 1)), "m/9=old"),
                    rows(tx, b("m/"), b("m0"), 0, false));

            tx.setAll(pairs("n/1", "a", "n/2", "b", "n/3", "c", "n/4", "d"));
            tx.clear(b("n/2"), b("n/4"));
            assertEquals(List.of("n/1=a", "n/4=d"), rows(tx, b("n/"), b("n0"), 0, false), "a range clear cuts into its span");
            tx.clear(b("o/"), b("o0"));
            tx.setAll(pairs("o/1", "a", "o/2", "b", "o/3", "c", "o/4", "d"));
            tx.setAll(pairs("p/1", "a", "p/2", "b", "p/3", "c", "p/4", "d"));
            tx.setAll(pairs("p/0", "x", "p/3", "y", "p/5", "z", "p/6", "w")); // overlaps the one before
            assertEquals(List.of("o/1=a", "o/2=b", "o/3=c", "o/4=d"), rows(tx, b("o/"), b("o0"), 0, false), "written after a clear of its range");
            assertEquals(List.of("p/0=x", "p/1=a", "p/2=b", "p/3=y", "p/4=d", "p/5=z", "p/6=w"), rows(tx, b("p/"), b("p0"), 0, false));
            tx.setAll(List.of());
            tx.commit();
        }
        try (Transaction tx = store.createTransaction()) {
            assertEquals(List.of("m/0=old", "m/1=1", "m/2=two", "m/3=3", "m/35=between", "m/5=" + p(bytes('5' + 1)), "m/9=old"),
                    rows(tx, b("m/"), b("m0"), 0, false));
            assertEquals(List.of("n/1=a", "n/4=d"), rows(tx, b("n/"), b("n0"), 0, false));
            assertEquals(List.of("p/0=x", "p/1=a", "p/2=b", "p/3=y", "p/4=d", "p/5=z", "p/6=w"), rows(tx, b("p/"), b("p0"), 0, false));
        }
    }

    /** Random sets, setAlls, clears, range clears and adds; every read is checked against a sorted map. */
    @Test
    public void randomWritesReadBackAsAModelSays() {
        Random r = new Random(20261122);
        java.util.TreeMap<byte[], byte[]> committed = new java.util.TreeMap<>(Keys::compare);
        for (int round = 0; round < 60; round++) {
            java.util.TreeMap<byte[], byte[]> model = new java.util.TreeMap<>(committed);
            try (Transaction tx = store.createTransaction()) {
                List<KeyValue> lastRun = List.of();
                for (int op = 0; op < 40; op++) {
                    int kind = r.nextInt(10);
                    // Half the time a key of the last setAll: writes inside a run's span are the hard case.
                    byte[] k = !lastRun.isEmpty() && r.nextBoolean() ? lastRun.get(r.nextInt(lastRun.size())).key() : key(r.nextInt(100));
                    if (kind < 4) {
                        List<KeyValue> run = new ArrayList<>();
                        for (int i = r.nextInt(100), n = 1 + r.nextInt(8); i < 100 && n > 0; i += 1 + r.nextInt(3), n--) {
                            run.add(new KeyValue(key(i), b("s" + op)));
                        }
                        tx.setAll(run);
                        for (KeyValue kv : run) model.put(kv.key(), kv.value());
                        lastRun = run;
                    } else if (kind < 5) {
                        tx.set(k, b("p" + op));
                        model.put(k, b("p" + op));
                    } else if (kind < 6) {
                        tx.clear(k);
                        model.remove(k);
                    } else if (kind < 7) {
                        byte[] e = key(r.nextInt(100));
                        byte[] lo = Keys.compare(k, e) <= 0 ? k : e;
                        byte[] hi = lo == k ? e : k;
                        tx.clear(lo, hi);
                        model.subMap(lo, hi).clear();
                    } else if (kind < 8) {
                        tx.mutate(MutationType.ADD, k, bytes(1));
                        byte[] old = model.get(k);
                        model.put(k, old == null ? bytes(1) : bytes(old[0] + 1)); // the sum has the operand's width
                    } else if (kind < 9 && r.nextBoolean()) {
                        List<byte[][]> ranges = new ArrayList<>();
                        List<List<String>> expected = new ArrayList<>();
                        int limit = r.nextInt(3) == 0 ? 0 : 1 + r.nextInt(3);
                        boolean reverse = r.nextBoolean();
                        for (int n = r.nextInt(6); n >= 0; n--) {
                            int from = r.nextInt(100);
                            byte[] lo = key(from);
                            byte[] hi = key(from + r.nextInt(12));
                            ranges.add(new byte[][] {lo, hi});
                            var rows = (reverse ? model.subMap(lo, true, hi, false).descendingMap() : model.subMap(lo, true, hi, false)).entrySet().stream()
                                    .map(x -> p(x.getKey()) + "=" + p(x.getValue())).limit(limit == 0 ? Long.MAX_VALUE : limit).toList();
                            expected.add(rows);
                        }
                        ReadTransaction view = r.nextBoolean() ? tx : tx.snapshot();
                        assertEquals(expected, view.getRanges(ranges, limit, reverse).stream()
                                .map(rows -> rows.stream().map(kv -> p(kv.key()) + "=" + p(kv.value())).toList()).toList());
                    } else {
                        assertArrayEquals(model.get(k), tx.get(k), () -> "get " + p(k));
                        byte[] e = key(r.nextInt(110));
                        int limit = r.nextInt(4) == 0 ? 0 : 1 + r.nextInt(5);
                        boolean reverse = r.nextBoolean();
                        if (Keys.compare(k, e) > 0) continue;
                        var expected = new ArrayList<>((reverse ? model.subMap(k, true, e, false).descendingMap() : model.subMap(k, true, e, false)).entrySet().stream()
                                .map(x -> p(x.getKey()) + "=" + p(x.getValue())).toList());
                        if (limit > 0 && expected.size() > limit) expected.subList(limit, expected.size()).clear();
                        assertEquals(expected, rows(tx, k, e, limit, reverse), () -> "range " + p(k) + ".." + p(e));
                    }
                }
                if (r.nextInt(4) > 0) { // else abandoned
                    tx.commit();
                    committed = model;
                }
            }
            List<String> expected = committed.entrySet().stream().map(x -> p(x.getKey()) + "=" + p(x.getValue())).toList();
            assertEquals(expected, readRange(b("r/"), b("r0")).stream().map(kv -> p(kv.key()) + "=" + p(kv.value())).toList(), "after round " + round);
        }
    }

    private static byte[] key(int i) {
        return b(String.format("r/%03d", i));
    }

    /** Each read of getRanges conflicts as the same getRange read whole would; through the snapshot view none does. */
    @Test
    public void getRangesConflictsAsItsReads() {
        put("d/a/1", "x", "d/c/1", "x");
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            List<List<KeyValue>> got = reader.getRanges(List.<byte[][]>of(new byte[][] {b("d/c/"), b("d/c0")}, new byte[][] {b("d/b/"), b("d/b0")},
                    new byte[][] {b("d/a/"), b("d/a0")}), 1, true);
            assertEquals(List.of(List.of("d/c/1"), List.of(), List.of("d/a/1")), got.stream().map(KvConformanceSuite::keysOf).toList());
            reader.set(b("out"), b("x"));
            writer.set(b("d/b/7"), b("new")); // into the read that found nothing
            writer.commit();
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.getRanges(List.<byte[][]>of(new byte[][] {b("d/a/"), b("d/a0")}, new byte[][] {b("d/c/"), b("d/c0")}), 1, true);
            reader.set(b("out"), b("y"));
            writer.set(b("d/a/0"), b("before the row read")); // a limit-1 reverse read saw only d/a/1 and what follows it
            writer.set(b("d/e/1"), b("elsewhere"));
            writer.commit();
            reader.commit();
        }
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.snapshot().getRanges(List.<byte[][]>of(new byte[][] {b("d/b/"), b("d/b0")}), 0, false);
            reader.set(b("out"), b("z"));
            writer.set(b("d/b/8"), b("new"));
            writer.commit();
            reader.commit();
        }
        try (Transaction tx = store.createTransaction()) {
            assertEquals(List.of(List.of()), tx.getRanges(List.<byte[][]>of(new byte[][] {b("d/z"), b("d/a")}), 0, false), "an inverted range reads as empty");
            assertEquals(List.of(), tx.getRanges(List.of(), 0, false));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.getRanges(List.<byte[][]>of(new byte[][] {b("d"), bytes(0xff, 0x01)}), 0, false));
        }
    }

    /**
     * getRanges reads each range as its own getRange would, whatever lies between them: adjacent
     * ranges, gaps of a few keys and of many, overlaps, empty and inverted ranges, ranges given out
     * of order, the transaction's own writes and clears between and inside them, and limits.
     */
    @Test
    public void getRangesReadsAdjacentGappedAndOverlappingRangesAsGetRange() {
        List<String> kv = new ArrayList<>();
        for (String k : List.of("g/a/1", "g/a/2", "g/b/1", "g/c/1", "g/d/1", "g/d/2", "g/f/1", "g/z/1")) kv.addAll(List.of(k, "v" + k));
        for (int i = 0; i < 20; i++) kv.addAll(List.of(String.format("g/e/%02d", i), "e")); // more than a few steps between g/d and g/f
        put(kv.toArray(String[]::new));
        List<byte[][]> ranges = List.of(
                new byte[][] {b("g/a/"), b("g/a0")},
                new byte[][] {b("g/b/"), b("g/b0")},     // adjacent: starts where the last ended
                new byte[][] {b("g/d/"), b("g/d0")},     // a gap of one key (g/c/1)
                new byte[][] {b("g/f/"), b("g/f0")},     // a gap of twenty keys
                new byte[][] {b("g/a/2"), b("g/b/2")},   // overlaps the first two
                new byte[][] {b("g/b/5"), b("g/b/5")},   // empty
                new byte[][] {b("g/y"), b("g/x")},       // inverted: empty
                new byte[][] {b("g/c0"), b("g/d/2")},    // starts in a gap, ends inside a range
                new byte[][] {b("g/e/19"), b("g/z/2")},  // the last of the gap, then past two ranges
                new byte[][] {b("g/q"), b("g/r")});      // nothing there
        List<byte[][]> shuffled = new ArrayList<>(ranges);
        java.util.Collections.reverse(shuffled);
        for (boolean ownWrites : new boolean[] {false, true}) {
            try (Transaction tx = store.createTransaction()) {
                if (ownWrites) {
                    tx.set(b("g/a0"), b("between a and b"));
                    tx.set(b("g/b/3"), b("inside b"));
                    tx.clear(b("g/d/1"));
                    tx.clear(b("g/e/00"), b("g/e/18"));
                    tx.set(b("g/f/0"), b("before f/1"));
                }
                for (List<byte[][]> rs : List.of(ranges, shuffled)) {
                    for (int limit : new int[] {0, 1, 2}) {
                        for (boolean reverse : new boolean[] {false, true}) {
                            List<List<String>> expected = rs.stream().map(r -> rows(tx, r[0], Keys.compare(r[0], r[1]) > 0 ? r[0] : r[1], limit, reverse)).toList();
                            assertEquals(expected, tx.getRanges(rs, limit, reverse).stream()
                                    .map(rows -> rows.stream().map(x -> p(x.key()) + "=" + p(x.value())).toList()).toList(),
                                    () -> "limit " + limit + (reverse ? ", reverse" : "") + (ownWrites ? ", own writes" : ""));
                        }
                    }
                }
            }
        }
    }

    @Test
    public void setAllChecksEveryPairBeforeWritingAny() {
        try (Transaction tx = store.createTransaction()) {
            List<KeyValue> tooBig = pairs("a/1", "1", "a/2", "2", "a/3", "3");
            tooBig.add(new KeyValue(b("a/4"), new byte[KvLimits.MAX_VALUE_BYTES + 1]));
            assertKv(KvException.VALUE_TOO_LARGE, () -> tx.setAll(tooBig));
            assertKv(KvException.CLIENT_INVALID_OPERATION, () -> tx.setAll(pairs("b/1", "1", "b/3", "3", "b/2", "2", "b/4", "4")));
            assertKv(KvException.CLIENT_INVALID_OPERATION, () -> tx.setAll(pairs("c/1", "1", "c/1", "2", "c/2", "3", "c/3", "4")));
            assertEquals(List.of(), rows(tx, Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, false));
        }
    }

    /** Each pair conflicts as its own set would; after nextWriteNoWriteConflictRange none does, and the option is then used up. */
    @Test
    public void setAllConflictsAsItsSets() {
        put("k/2", "v", "k/25", "v");
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("k/25")); // between two of the pairs: not written
            reader.set(b("out"), b("x"));
            writer.setAll(pairs("k/1", "1", "k/2", "2", "k/3", "3", "k/4", "4"));
            writer.commit();
            reader.commit();
        }
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("k/3"));
            reader.set(b("out"), b("y"));
            writer.setAll(pairs("k/1", "a", "k/2", "b", "k/3", "c", "k/4", "d"));
            writer.commit();
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("k/3"));
            reader.get(b("j"));
            reader.set(b("out"), b("z"));
            writer.nextWriteNoWriteConflictRange();
            writer.setAll(pairs("k/1", "e", "k/2", "f", "k/3", "g", "k/4", "h"));
            writer.commit();
            reader.commit(); // blind, every one of them
        }
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("j"));
            reader.set(b("out"), b("w"));
            writer.nextWriteNoWriteConflictRange();
            writer.setAll(pairs("k/1", "i", "k/2", "j", "k/3", "k", "k/4", "l"));
            writer.set(b("j"), b("seen")); // the option was used up by setAll
            writer.commit();
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
        assertArrayEquals(b("k"), read(b("k/3")));
    }

    /** An empty setAll takes the option too: it must not make the caller's next, unrelated write blind. */
    @Test
    public void anEmptySetAllUsesUpNextWriteNoWriteConflictRange() {
        put("j", "v0");
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("j"));
            reader.set(b("out"), b("x"));
            writer.nextWriteNoWriteConflictRange();
            writer.setAll(List.of());
            writer.set(b("j"), b("seen"));
            writer.commit();
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
    }

    @Test
    public void readsSeeOwnAtomicOpsApplied() {
        store.run(tx -> {
            tx.set(b("n"), le64(5));
            return null;
        });
        try (Transaction tx = store.createTransaction()) {
            tx.mutate(MutationType.ADD, b("n"), le64(3));
            assertEquals(8, le64(tx.get(b("n"))));
            tx.mutate(MutationType.ADD, b("n"), le64(2));
            assertEquals(10, le64(tx.get(b("n"))));
            List<KeyValue> range = tx.getRangeAsList(b("n"), b("o"), 0, false);
            assertEquals(1, range.size());
            assertEquals(10, le64(range.get(0).value()));

            tx.mutate(MutationType.ADD, b("m"), le64(7));
            assertEquals(7, le64(tx.get(b("m"))), "an add to a missing key reads as the operand");
            tx.set(b("s"), le64(100));
            tx.mutate(MutationType.ADD, b("s"), le64(1));
            assertEquals(101, le64(tx.get(b("s"))));
            tx.mutate(MutationType.COMPARE_AND_CLEAR, b("s"), le64(101));
            assertNull(tx.get(b("s")));
            assertEquals(List.of("m", "n"), keysOf(all(tx)));
            tx.commit();
        }
        assertEquals(10, le64(read(b("n"))));
        assertEquals(7, le64(read(b("m"))));
        assertNull(read(b("s")));
    }

    @Test
    public void snapshotIsolationHidesLaterCommits() {
        put("k", "old");
        try (Transaction t1 = store.createTransaction()) {
            long rv = t1.getReadVersion();
            try (Transaction t2 = store.createTransaction()) {
                t2.set(b("k"), b("new"));
                t2.set(b("k2"), b("new2"));
                t2.commit();
                assertTrue(t2.getCommittedVersion() > rv);
            }
            assertArrayEquals(b("old"), t1.get(b("k")));
            assertNull(t1.get(b("k2")));
            assertEquals(List.of("k"), keysOf(all(t1)));
            assertEquals("\\xff", p(t1.getKey(KeySelector.firstGreaterThan(b("k")))));
            assertArrayEquals(b("old"), t1.snapshot().get(b("k")));
            assertNull(t1.snapshot().get(b("k2")));
            assertEquals(rv, t1.getReadVersion(), "the read version does not move");
        }
        try (Transaction t3 = store.createTransaction()) {
            assertArrayEquals(b("new"), t3.get(b("k")));
            assertArrayEquals(b("new2"), t3.get(b("k2")));
        }
    }

    @Test
    public void committedVersionsIncreaseAndReadVersionsFollowThem() {
        long last = -1;
        for (int i = 0; i < 5; i++) {
            try (Transaction tx = store.createTransaction()) {
                long rv = tx.getReadVersion();
                assertTrue(rv >= last, "a new transaction reads at or after every earlier commit");
                tx.set(b("v" + i), b("x"));
                tx.commit();
                assertTrue(tx.getCommittedVersion() > rv);
                last = tx.getCommittedVersion();
            }
        }
        try (Transaction ro = store.createTransaction()) {
            ro.get(b("v0"));
            ro.commit();
            assertEquals(-1, ro.getCommittedVersion(), "a read-only commit has no version");
            assertKv(KvException.NO_COMMIT_VERSION, ro::getVersionstamp);
        }
    }

    // =====================================================================================
    // conflicts

    @Test
    public void writeSkewIsPrevented() {
        put("doctor/a", "on", "doctor/b", "on");
        try (Transaction t1 = store.createTransaction(); Transaction t2 = store.createTransaction()) {
            assertArrayEquals(b("on"), t1.get(b("doctor/a")));
            assertArrayEquals(b("on"), t1.get(b("doctor/b")));
            assertArrayEquals(b("on"), t2.get(b("doctor/a")));
            assertArrayEquals(b("on"), t2.get(b("doctor/b")));
            t1.set(b("doctor/a"), b("off"));
            t2.set(b("doctor/b"), b("off"));
            t1.commit();
            assertKv(KvException.NOT_COMMITTED, t2::commit);
        }
        assertArrayEquals(b("off"), read(b("doctor/a")));
        assertArrayEquals(b("on"), read(b("doctor/b")));
    }

    @Test
    public void lostUpdateIsPrevented() {
        store.run(tx -> {
            tx.set(b("counter"), le64(0));
            return null;
        });
        try (Transaction t1 = store.createTransaction(); Transaction t2 = store.createTransaction()) {
            long v1 = le64(t1.get(b("counter")));
            long v2 = le64(t2.get(b("counter")));
            t1.set(b("counter"), le64(v1 + 1));
            t2.set(b("counter"), le64(v2 + 1));
            t1.commit();
            assertKv(KvException.NOT_COMMITTED, t2::commit);
        }
        assertEquals(1, le64(read(b("counter"))));
    }

    @Test
    public void phantomsAreCaughtThroughRangeReads() {
        put("r/1", "x", "r/5", "x");
        try (Transaction a = store.createTransaction()) {
            assertEquals(2, a.getRangeAsList(b("r/"), b("r0"), 0, false).size());
            put("r/3", "phantom");
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
        // Also when the range read found nothing at all, and when read in reverse.
        try (Transaction a = store.createTransaction()) {
            assertTrue(a.getRangeAsList(b("empty/"), b("empty0"), 0, false).isEmpty());
            put("empty/x", "phantom");
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
        try (Transaction a = store.createTransaction()) {
            assertEquals(3, a.getRangeAsList(b("r/"), b("r0"), 0, true).size());
            put("r/0", "phantom");
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
        assertNull(read(b("elsewhere")));
    }

    @Test
    public void phantomsAreCaughtThroughKeySelectors() {
        put("g/1", "x", "g/5", "x");
        try (Transaction a = store.createTransaction()) {
            assertEquals("g/5", p(a.getKey(KeySelector.firstGreaterThan(b("g/1")))));
            put("g/3", "phantom");
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
    }

    @Test
    public void clearsAndAtomicOpsConflictWithReaders() {
        put("c/k", "1", "c/j", "1");
        try (Transaction a = store.createTransaction()) {
            a.get(b("c/k"));
            store.run(tx -> {
                tx.clear(b("c/"), b("c0"));
                return null;
            });
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
        try (Transaction a = store.createTransaction()) {
            a.get(b("c/k"));
            store.run(tx -> {
                tx.mutate(MutationType.ADD, b("c/k"), bytes(1));
                return null;
            });
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
    }

    @Test
    public void readsOfOtherKeysDoNotConflict() {
        put("a", "1", "b", "1");
        try (Transaction t1 = store.createTransaction()) {
            t1.get(b("a"));
            t1.getRangeAsList(b("a"), b("a\0"), 0, false);
            put("b", "2", "a\0", "after the range end");
            t1.set(b("c"), b("3"));
            t1.commit();
        }
        assertArrayEquals(b("3"), read(b("c")));
    }

    @Test
    public void snapshotReadsAddNoConflict() {
        put("s/k", "1", "s/m", "1");
        try (Transaction a = store.createTransaction()) {
            ReadTransaction snap = a.snapshot();
            assertArrayEquals(b("1"), snap.get(b("s/k")));
            assertEquals(2, snap.getRangeAsList(b("s/"), b("s0"), 0, false).size());
            assertEquals("s/m", p(snap.getKey(KeySelector.firstGreaterThan(b("s/k")))));
            put("s/k", "2", "s/l", "phantom", "s/m", "2");
            a.set(b("s/out"), b("y"));
            a.commit();
        }
        assertArrayEquals(b("y"), read(b("s/out")));
    }

    @Test
    public void explicitReadConflictRangesConflict() {
        try (Transaction a = store.createTransaction()) {
            a.getReadVersion();
            a.addReadConflictRange(b("m"), b("n"));
            put("m5", "x");
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
        try (Transaction a = store.createTransaction()) {
            a.getReadVersion();
            a.addReadConflictKey(b("key"));
            put("key", "x");
            a.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, a::commit);
        }
        try (Transaction a = store.createTransaction()) {
            a.getReadVersion();
            a.addReadConflictRange(b("m"), b("n"));
            put("n", "x", "l", "x"); // the end is exclusive
            a.set(b("elsewhere"), b("y"));
            a.commit();
        }
    }

    @Test
    public void explicitWriteConflictRangesConflict() {
        put("w5", "x");
        try (Transaction reader = store.createTransaction()) {
            reader.get(b("w5"));
            try (Transaction a = store.createTransaction()) {
                a.addWriteConflictRange(b("w"), b("x")); // no mutation at all
                a.commit();
            }
            reader.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
        try (Transaction reader = store.createTransaction()) {
            reader.get(b("w5"));
            try (Transaction a = store.createTransaction()) {
                a.addWriteConflictKey(b("w5"));
                a.set(b("unrelated"), b("z"));
                a.commit();
            }
            reader.set(b("elsewhere"), b("y"));
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
        assertArrayEquals(b("x"), read(b("w5")), "a write-conflict range writes nothing");
    }

    @Test
    public void blindWritesNeverConflict() {
        put("k", "0");
        try (Transaction t1 = store.createTransaction(); Transaction t2 = store.createTransaction()) {
            t1.getReadVersion();
            t2.getReadVersion();
            t1.set(b("k"), b("1"));
            t2.set(b("k"), b("2"));
            t1.mutate(MutationType.ADD, b("n"), bytes(1));
            t2.mutate(MutationType.ADD, b("n"), bytes(2));
            t1.clear(b("a"), b("z"));
            t1.set(b("k"), b("1"));
            t1.commit();
            t2.commit();
        }
        assertArrayEquals(b("2"), read(b("k")), "the later commit wins");
        assertArrayEquals(bytes(2), read(b("n")), "t1's clear came first, t2's add applied after it");
    }

    @Test
    public void readOnlyTransactionsAlwaysCommit() {
        put("k", "0");
        try (Transaction a = store.createTransaction()) {
            a.get(b("k"));
            a.getRangeAsList(Keys.EMPTY, Keys.SYSTEM_PREFIX, 0, false);
            put("k", "1");
            a.commit();
            assertEquals(-1, a.getCommittedVersion());
        }
    }

    // =====================================================================================
    // atomic operations

    private int atomicKeys;

    /**
     * Applies {@code type(param)} to a fresh key holding {@code existing} (null: absent) and returns
     * the committed result, after checking that the transaction's own read showed the same value.
     */
    private byte[] atomic(byte[] existing, MutationType type, byte[] param) {
        byte[] key = b("atomic/" + atomicKeys++);
        if (existing != null) {
            store.run(tx -> {
                tx.set(key, existing);
                return null;
            });
        }
        byte[] seen;
        try (Transaction tx = store.createTransaction()) {
            tx.mutate(type, key, param);
            seen = tx.get(key);
            tx.commit();
        }
        byte[] committed = read(key);
        assertEquals(p(committed), p(seen), () -> type + " read in its own transaction differs from the committed value");
        return committed;
    }

    private void assertAtomic(byte[] expected, byte[] existing, MutationType type, byte[] param) {
        byte[] got = atomic(existing, type, param);
        assertEquals(p(expected), p(got), () -> type + "(" + p(existing) + ", " + p(param) + ")");
    }

    @Test
    public void atomicAdd() {
        MutationType t = MutationType.ADD;
        assertAtomic(le64(8), le64(5), t, le64(3));
        assertAtomic(bytes(0x00), bytes(0xff), t, bytes(0x01)); // wraps within the operand's length
        assertAtomic(bytes(0x00, 0x01), bytes(0xff, 0x00), t, bytes(0x01, 0x00)); // little-endian carry
        assertAtomic(bytes(0x00, 0x00), bytes(0xff, 0xff), t, bytes(0x01, 0x00));
        assertAtomic(le64(4), le64(5), t, le64(-1)); // two's complement
        assertAtomic(le64(Long.MIN_VALUE), le64(Long.MAX_VALUE), t, le64(1));
        assertAtomic(bytes(0x02, 0x01), bytes(0x01), t, bytes(0x01, 0x01)); // existing zero-extended
        assertAtomic(bytes(0x02), bytes(0x01, 0x05), t, bytes(0x01)); // existing truncated
        assertAtomic(bytes(0x05, 0x00), null, t, bytes(0x05, 0x00)); // missing: the operand
        assertAtomic(bytes(0x07), new byte[0], t, bytes(0x07));
    }

    @Test
    public void atomicBitwise() {
        assertAtomic(bytes(0x0f, 0x00), bytes(0x0f, 0xf0), MutationType.BIT_AND, bytes(0xff, 0x0f));
        assertAtomic(bytes(0x0a), null, MutationType.BIT_AND, bytes(0x0a)); // missing: the operand (API 510+)
        assertAtomic(bytes(0x0f, 0x00), bytes(0xff), MutationType.BIT_AND, bytes(0x0f, 0xff));
        assertAtomic(bytes(0x0f), bytes(0xff, 0xff), MutationType.BIT_AND, bytes(0x0f));

        assertAtomic(bytes(0xff, 0x01), bytes(0x0f, 0x00), MutationType.BIT_OR, bytes(0xf0, 0x01));
        assertAtomic(bytes(0x0a), null, MutationType.BIT_OR, bytes(0x0a));
        assertAtomic(bytes(0x11), bytes(0x01, 0x02, 0x03), MutationType.BIT_OR, bytes(0x10));
        assertAtomic(bytes(0x01, 0x02), bytes(0x01), MutationType.BIT_OR, bytes(0x00, 0x02));

        assertAtomic(bytes(0xf0, 0x00), bytes(0xff, 0x0f), MutationType.BIT_XOR, bytes(0x0f, 0x0f));
        assertAtomic(bytes(0x0a), null, MutationType.BIT_XOR, bytes(0x0a));
        assertAtomic(bytes(0x00, 0x01), bytes(0x01), MutationType.BIT_XOR, bytes(0x01, 0x01));
        assertAtomic(bytes(0x00), bytes(0x01, 0x01), MutationType.BIT_XOR, bytes(0x01));
    }

    @Test
    public void atomicMaxMin() {
        MutationType max = MutationType.MAX;
        MutationType min = MutationType.MIN;
        // Little-endian: 00 01 is 256, ff 00 is 255.
        assertAtomic(bytes(0x00, 0x01), bytes(0x00, 0x01), max, bytes(0xff, 0x00));
        assertAtomic(bytes(0x00, 0x01), bytes(0xff, 0x00), max, bytes(0x00, 0x01));
        assertAtomic(bytes(0x01, 0x02), bytes(0x01, 0x02), max, bytes(0x02, 0x01)); // 513 > 258
        assertAtomic(bytes(0x03), null, max, bytes(0x03));
        assertAtomic(bytes(0x05, 0x00), bytes(0x05), max, bytes(0x03, 0x00)); // existing zero-extended
        assertAtomic(bytes(0x03), bytes(0x03, 0xff), max, bytes(0x02)); // existing truncated, then compared
        assertAtomic(bytes(0x02), bytes(0x01, 0xff), max, bytes(0x02));
        assertAtomic(bytes(0xff), bytes(0x7f), max, bytes(0xff)); // unsigned

        assertAtomic(bytes(0xff, 0x00), bytes(0x00, 0x01), min, bytes(0xff, 0x00));
        assertAtomic(bytes(0xff, 0x00), bytes(0xff, 0x00), min, bytes(0x00, 0x01));
        assertAtomic(bytes(0x03), null, min, bytes(0x03)); // missing: the operand (API 510+)
        assertAtomic(bytes(0x05, 0x00), bytes(0x05), min, bytes(0x03, 0x01)); // 5 < 259
        assertAtomic(bytes(0x01), bytes(0x01, 0xff), min, bytes(0x02)); // existing truncated
        assertAtomic(bytes(0x7f), bytes(0xff), min, bytes(0x7f));
        assertAtomic(bytes(0x00), new byte[0], min, bytes(0x05)); // present but empty: zero-extended
    }

    @Test
    public void atomicByteMaxMin() {
        assertAtomic(b("abd"), b("abc"), MutationType.BYTE_MAX, b("abd"));
        assertAtomic(b("b"), b("b"), MutationType.BYTE_MAX, b("abc"));
        assertAtomic(b("abc"), b("ab"), MutationType.BYTE_MAX, b("abc"));
        assertAtomic(b("x"), null, MutationType.BYTE_MAX, b("x"));
        assertAtomic(bytes(0x80), bytes(0x7f), MutationType.BYTE_MAX, bytes(0x80));

        assertAtomic(b("abc"), b("abc"), MutationType.BYTE_MIN, b("abd"));
        assertAtomic(b("abc"), b("b"), MutationType.BYTE_MIN, b("abc"));
        assertAtomic(b("ab"), b("ab"), MutationType.BYTE_MIN, b("abc"));
        assertAtomic(b("x"), null, MutationType.BYTE_MIN, b("x"));
        assertAtomic(bytes(0x7f), bytes(0x80), MutationType.BYTE_MIN, bytes(0x7f));
    }

    @Test
    public void atomicAppendIfFits() {
        assertAtomic(b("abcd"), b("ab"), MutationType.APPEND_IF_FITS, b("cd"));
        assertAtomic(b("cd"), null, MutationType.APPEND_IF_FITS, b("cd"));
        byte[] big = filled(KvLimits.MAX_VALUE_BYTES - 1, 'a');
        byte[] fits = atomic(big, MutationType.APPEND_IF_FITS, b("b"));
        assertEquals(KvLimits.MAX_VALUE_BYTES, fits.length, "exactly the value limit fits");
        assertEquals('b', fits[fits.length - 1]);
        byte[] tooBig = atomic(big, MutationType.APPEND_IF_FITS, b("bc"));
        assertArrayEquals(big, tooBig, "an append that would exceed the limit leaves the value unchanged");
    }

    @Test
    public void atomicCompareAndClear() {
        assertNull(atomic(b("x"), MutationType.COMPARE_AND_CLEAR, b("x")));
        assertArrayEquals(b("y"), atomic(b("y"), MutationType.COMPARE_AND_CLEAR, b("x")));
        assertNull(atomic(null, MutationType.COMPARE_AND_CLEAR, b("x")));
        assertArrayEquals(b("xx"), atomic(b("xx"), MutationType.COMPARE_AND_CLEAR, b("x")));
    }

    @Test
    public void atomicOpsChainInOneTransaction() {
        store.run(tx -> {
            tx.set(b("chain"), bytes(0x10));
            return null;
        });
        try (Transaction tx = store.createTransaction()) {
            tx.mutate(MutationType.ADD, b("chain"), bytes(0x01));      // 0x11
            tx.mutate(MutationType.MAX, b("chain"), bytes(0x05, 0x00)); // 11 00
            tx.mutate(MutationType.BIT_XOR, b("chain"), bytes(0x01, 0x01)); // 10 01
            tx.mutate(MutationType.APPEND_IF_FITS, b("chain"), bytes(0xaa)); // 10 01 aa
            tx.commit();
        }
        assertArrayEquals(bytes(0x10, 0x01, 0xaa), read(b("chain")));
    }

    @Test
    public void concurrentAtomicAddsAreExact() throws Exception {
        int threads = 4;
        int perThread = 200;
        runConcurrently(threads, id -> {
            for (int i = 0; i < perThread; i++) {
                store.run(tx -> {
                    tx.mutate(MutationType.ADD, b("hits"), le64(1));
                    tx.mutate(MutationType.ADD, b("hits/" + id), le64(1));
                    return null;
                });
            }
            return null;
        });
        assertEquals((long) threads * perThread, le64(read(b("hits"))));
        for (int t = 0; t < threads; t++) assertEquals(perThread, le64(read(b("hits/" + t))));
    }

    // =====================================================================================
    // versionstamps

    @Test
    public void versionstampedKeyMatchesGetVersionstamp() {
        byte[] prefix = b("vs/");
        byte[] key = Versionstamps.packWithVersionstamp(prefix, Tuple.from("a", Versionstamp.incomplete(3)));
        byte[] stamp;
        long committed;
        try (Transaction tx = store.createTransaction()) {
            tx.setVersionstampedKey(key, b("value"));
            tx.commit();
            stamp = tx.getVersionstamp();
            committed = tx.getCommittedVersion();
        }
        assertEquals(Versionstamps.TX_BYTES, stamp.length);
        assertEquals(committed, Versionstamps.commitVersion(stamp), "the first 8 bytes are the commit version, big-endian");
        List<KeyValue> rows = readRange(b("vs/"), b("vs0"));
        assertEquals(1, rows.size());
        byte[] expectedKey = Keys.concat(prefix, Tuple.from("a", Versionstamp.complete(stamp, 3)).pack());
        assertEquals(p(expectedKey), p(rows.get(0).key()));
        assertArrayEquals(b("value"), rows.get(0).value());
        Tuple t = Tuple.fromBytes(rows.get(0).key(), prefix.length, rows.get(0).key().length - prefix.length);
        assertEquals(Versionstamp.complete(stamp, 3), t.getVersionstamp(1));
    }

    @Test
    public void versionstampedValue() {
        byte[] packed = Versionstamps.packWithVersionstamp(b("pre"), Tuple.from(Versionstamp.incomplete(9)));
        // Raw form: 'X', a 10-byte placeholder at offset 1, 'Y', then the offset.
        byte[] raw = Keys.concat(Keys.concat(b("X"), new byte[10]), Keys.concat(b("Y"), bytes(1, 0, 0, 0)));
        byte[] stamp;
        try (Transaction tx = store.createTransaction()) {
            tx.setVersionstampedValue(b("tuple"), packed);
            tx.setVersionstampedValue(b("raw"), raw);
            tx.commit();
            stamp = tx.getVersionstamp();
        }
        assertArrayEquals(Keys.concat(b("pre"), Tuple.from(Versionstamp.complete(stamp, 9)).pack()), read(b("tuple")));
        assertArrayEquals(Keys.concat(Keys.concat(b("X"), stamp), b("Y")), read(b("raw")));
    }

    /**
     * ReadYourWritesTransaction (7.3): a versionstamped value makes its key unreadable in the
     * transaction (1036 accessed_unreadable), and stays so under a later set; the later set or
     * clear still wins at commit, as the mutations are applied in order; a clear makes the key
     * readable again.
     */
    @Test
    public void aWriteAfterAVersionstampedValueWinsAndTheKeyIsUnreadableUntilCleared() {
        byte[] stamped = Versionstamps.packWithVersionstamp(b("s"), Tuple.from(Versionstamp.incomplete(0)));
        put("set", "old", "cleared", "old", "appended", "old");
        try (Transaction tx = store.createTransaction()) {
            tx.setVersionstampedValue(b("set"), stamped);
            assertKv(KvException.ACCESSED_UNREADABLE, () -> tx.get(b("set")));
            assertKv(KvException.ACCESSED_UNREADABLE, () -> tx.snapshot().get(b("set")));
            tx.set(b("set"), b("later"));
            assertKv(KvException.ACCESSED_UNREADABLE, () -> tx.get(b("set")));
            assertKv(KvException.ACCESSED_UNREADABLE, () -> tx.getRangeAsList(b("s"), b("t"), 0, false));

            tx.setVersionstampedValue(b("cleared"), stamped);
            tx.clear(b("cleared"));
            assertNull(tx.get(b("cleared")), "a clear makes the key readable again");

            tx.setVersionstampedValue(b("appended"), stamped);
            tx.mutate(MutationType.APPEND_IF_FITS, b("appended"), b("+"));
            tx.commit();
        }
        assertArrayEquals(b("later"), read(b("set")), "the set after the versionstamped value is the last word");
        assertNull(read(b("cleared")), "so is the clear");
        byte[] appended = read(b("appended"));
        assertEquals(1 + Versionstamps.FULL_BYTES + 2, appended.length, p(appended));
        assertEquals('+', appended[appended.length - 1], "the mutation applies to the stamped value");
    }

    /** The keys a versionstamped key may become are unreadable in its transaction; reads elsewhere are not. */
    @Test
    public void theRangeAVersionstampedKeyMayFallInIsUnreadable() {
        put("vk/a", "x", "vl", "y");
        try (Transaction tx = store.createTransaction()) {
            tx.getReadVersion();
            tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(b("vk/"), Tuple.from(Versionstamp.incomplete(0))), b("v"));
            assertKv(KvException.ACCESSED_UNREADABLE, () -> tx.getRangeAsList(b("vk/"), b("vk0"), 0, false));
            assertArrayEquals(b("x"), tx.get(b("vk/a")), "a key no stamp can give");
            assertArrayEquals(b("y"), tx.get(b("vl")));
            tx.commit();
        }
        assertEquals(2, readRange(b("vk/"), b("vk0")).size());
    }

    @Test
    public void versionstampOperandsAreValidatedWhenWritten() {
        // ReadYourWritesTransaction::atomicOp: a versionstamped value shorter than its offset, or
        // whose offset leaves no room for 10 bytes, is client_invalid_operation (2000).
        try (Transaction tx = store.createTransaction()) {
            assertKv(KvException.CLIENT_INVALID_OPERATION, () -> tx.setVersionstampedValue(b("k"), bytes(0, 0)));
            assertKv(KvException.CLIENT_INVALID_OPERATION,
                    () -> tx.setVersionstampedValue(b("k"), Keys.concat(new byte[12], bytes(3, 0, 0, 0))));
        }
    }

    @Test
    public void userVersionsOrderKeysWithinOneTransaction() {
        byte[] stamp;
        try (Transaction tx = store.createTransaction()) {
            for (int uv : new int[] {5, 1, 3, 0x100}) {
                tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(b("uv/"), Tuple.from(Versionstamp.incomplete(uv))),
                        b("u" + uv));
            }
            tx.commit();
            stamp = tx.getVersionstamp();
        }
        List<KeyValue> rows = readRange(b("uv/"), b("uv0"));
        assertEquals(List.of("u1", "u3", "u5", "u256"), rows.stream().map(kv -> new String(kv.value(), UTF_8)).toList());
        for (KeyValue kv : rows) {
            Versionstamp vs = Tuple.fromBytes(kv.key(), 3, kv.key().length - 3).getVersionstamp(0);
            assertArrayEquals(stamp, vs.getTransactionVersion(), "one transaction, one 10-byte stamp");
        }
    }

    @Test
    public void versionstampsAreUniqueAndIncreasingAcrossConcurrentCommitters() throws Exception {
        int threads = 8;
        int perThread = 40;
        List<List<byte[]>> stamps = runConcurrently(threads, id -> {
            List<byte[]> mine = new ArrayList<>();
            for (int i = 0; i < perThread; i++) {
                try (Transaction tx = store.createTransaction()) {
                    tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(b("seq/"), Tuple.from(Versionstamp.incomplete(0))),
                            b(id + "/" + i));
                    tx.set(b("last/" + id), b(String.valueOf(i)));
                    tx.commit();
                    mine.add(tx.getVersionstamp());
                }
            }
            return mine;
        });
        Set<String> unique = new HashSet<>();
        List<byte[]> allStamps = new ArrayList<>();
        for (List<byte[]> mine : stamps) {
            for (int i = 0; i < mine.size(); i++) {
                assertTrue(unique.add(p(mine.get(i))), "duplicate versionstamp");
                if (i > 0) {
                    assertTrue(Arrays.compareUnsigned(mine.get(i - 1), mine.get(i)) < 0,
                            "a later commit of one thread has a larger versionstamp");
                }
                allStamps.add(mine.get(i));
            }
        }
        assertEquals(threads * perThread, unique.size());

        // The stored keys are exactly those stamps, in stamp order, each holding its writer's value.
        allStamps.sort(Arrays::compareUnsigned);
        List<KeyValue> rows = readRange(b("seq/"), b("seq0"));
        assertEquals(allStamps.size(), rows.size());
        for (int i = 0; i < rows.size(); i++) {
            Versionstamp vs = Tuple.fromBytes(rows.get(i).key(), 4, rows.get(i).key().length - 4).getVersionstamp(0);
            assertArrayEquals(allStamps.get(i), vs.getTransactionVersion());
            String[] writer = new String(rows.get(i).value(), UTF_8).split("/");
            byte[] recorded = stamps.get(Integer.parseInt(writer[0])).get(Integer.parseInt(writer[1]));
            assertArrayEquals(recorded, vs.getTransactionVersion(), "the key's stamp is its own transaction's");
        }
    }

    @Test
    public void laterTransactionsGetLargerVersionstamps() {
        byte[] previous = null;
        for (int i = 0; i < 20; i++) {
            try (Transaction tx = store.createTransaction()) {
                tx.set(b("plain"), b(String.valueOf(i)));
                tx.commit();
                byte[] stamp = tx.getVersionstamp();
                assertEquals(tx.getCommittedVersion(), Versionstamps.commitVersion(stamp),
                        "every writing transaction has a versionstamp, even without versionstamped operations");
                if (previous != null) assertTrue(Arrays.compareUnsigned(previous, stamp) < 0);
                previous = stamp;
            }
        }
    }

    // =====================================================================================
    // limits

    @Test
    public void keySizeLimit() {
        byte[] atLimit = filled(KvLimits.MAX_KEY_BYTES, 'k');
        byte[] overLimit = filled(KvLimits.MAX_KEY_BYTES + 1, 'k');
        try (Transaction tx = store.createTransaction()) {
            tx.set(atLimit, b("ok"));
            assertKv(KvException.KEY_TOO_LARGE, () -> tx.set(overLimit, b("no")));
            assertKv(KvException.KEY_TOO_LARGE, () -> tx.mutate(MutationType.ADD, overLimit, bytes(1)));
            // No key that long can exist, so clearing one is a no-op rather than an error
            // (ReadYourWritesTransaction::clear returns early when the key is over the limit).
            tx.clear(overLimit);
            tx.commit();
        }
        assertArrayEquals(b("ok"), read(atLimit));
        assertEquals(1, readRange(Keys.EMPTY, Keys.SYSTEM_PREFIX).size());
    }

    @Test
    public void valueSizeLimit() {
        byte[] atLimit = filled(KvLimits.MAX_VALUE_BYTES, 'v');
        byte[] overLimit = filled(KvLimits.MAX_VALUE_BYTES + 1, 'v');
        try (Transaction tx = store.createTransaction()) {
            tx.set(b("big"), atLimit);
            assertKv(KvException.VALUE_TOO_LARGE, () -> tx.set(b("bigger"), overLimit));
            assertKv(KvException.VALUE_TOO_LARGE, () -> tx.mutate(MutationType.APPEND_IF_FITS, b("bigger"), overLimit));
            tx.commit();
        }
        assertArrayEquals(atLimit, read(b("big")));
        assertNull(read(b("bigger")));
    }

    @Test
    public void transactionSizeLimit() {
        byte[] value = filled(KvLimits.MAX_VALUE_BYTES, 'v');
        try (Transaction tx = store.createTransaction()) {
            for (int i = 0; i < 105; i++) tx.set(b(String.format("big/%03d", i)), value); // 10.5 MB: checked at commit
            assertTrue(tx.getApproximateSize() > KvLimits.MAX_TRANSACTION_BYTES);
            assertKv(KvException.TRANSACTION_TOO_LARGE, tx::commit);
        }
        assertTrue(readRange(b("big/"), b("big0")).isEmpty(), "nothing of a refused transaction lands");
        try (Transaction tx = store.createTransaction()) {
            for (int i = 0; i < 90; i++) tx.set(b(String.format("big/%03d", i)), value); // 9 MB: fine
            tx.commit();
        }
        int stored = store.run(tx -> {
            int n = 0;
            try (RangeIterator it = tx.getRange(b("big/"), b("big0"))) {
                while (it.hasNext()) {
                    it.next();
                    n++;
                }
            }
            return n;
        });
        assertEquals(90, stored);
    }

    @Test
    public void systemKeysAreOutsideTheLegalRange() {
        try (Transaction tx = store.createTransaction()) {
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.set(bytes(0xff), b("x")));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.set(bytes(0xff, 0x00), b("x")));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.set(Keys.concat(bytes(0xff), b("conf")), b("x")));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.clear(bytes(0xff)));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.clear(b("a"), bytes(0xff, 0x01)));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.mutate(MutationType.ADD, bytes(0xff, 0x10), bytes(1)));
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.getRangeAsList(b("a"), bytes(0xff, 0x00), 0, false));
            // The legal-range check comes before the size check (ReadYourWritesTransaction::set).
            assertKv(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.set(filled(KvLimits.MAX_KEY_BYTES + 1, 0xff), b("x")));
            tx.clear(b("z"), Keys.SYSTEM_PREFIX); // a range up to \xff is legal
            tx.set(bytes(0xfe, 0xff, 0xff), b("last legal"));
            tx.commit();
        }
        assertArrayEquals(b("last legal"), read(bytes(0xfe, 0xff, 0xff)));
    }

    @Test
    public void nextWriteNoWriteConflictRangeMakesOnlyThatWriteBlind() {
        put("k", "v0", "j", "v0");
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("k"));
            reader.get(b("j"));
            reader.set(b("out"), b("x"));
            writer.nextWriteNoWriteConflictRange();
            writer.set(b("k"), b("blind"));
            writer.commit();
            reader.commit(); // the blind write to k cannot fail a reader of k
        }
        assertArrayEquals(b("blind"), read(b("k")), "the blind write itself is applied");
        try (Transaction reader = store.createTransaction(); Transaction writer = store.createTransaction()) {
            reader.get(b("j"));
            reader.set(b("out"), b("y"));
            writer.nextWriteNoWriteConflictRange();
            writer.set(b("k"), b("blind again"));
            writer.set(b("j"), b("seen")); // the option covered only the previous write
            writer.commit();
            assertKv(KvException.NOT_COMMITTED, reader::commit);
        }
    }

    @Test
    public void transactionsOlderThanFiveSecondsAreTooOld() throws Exception {
        put("k", "v", "r/1", "x");
        try (Transaction reader = store.createTransaction();
             Transaction ranger = store.createTransaction();
             Transaction writer = store.createTransaction();
             Transaction blind = store.createTransaction()) {
            reader.getReadVersion();
            ranger.getReadVersion();
            assertArrayEquals(b("v"), writer.get(b("k")));
            blind.getReadVersion();
            // FDB's MVCC window is 5,000,000 versions, about five seconds; a little over it for
            // the cluster's version clock.
            Thread.sleep(6_000);

            assertKv(KvException.TRANSACTION_TOO_OLD, () -> reader.get(b("k")));
            assertKv(KvException.TRANSACTION_TOO_OLD, () -> ranger.getRangeAsList(b("r/"), b("r0"), 0, false));
            writer.set(b("k"), b("v2"));
            assertKv(KvException.TRANSACTION_TOO_OLD, writer::commit);

            // The resolver refuses an old read version only for transactions with read-conflict
            // ranges (ConflictBatch::addTransaction: tooOld = read_snapshot < oldest && reads);
            // a blind write has nothing to validate and commits.
            blind.set(b("blind"), b("ok"));
            blind.commit();
        }
        assertArrayEquals(b("v"), read(b("k")));
        assertArrayEquals(b("ok"), read(b("blind")));
    }

    // =====================================================================================
    // watches

    private static void assertNotFiredWithin(CompletableFuture<Void> f, long millis) throws Exception {
        try {
            f.get(millis, TimeUnit.MILLISECONDS);
            fail("the watch fired although its key did not change");
        } catch (TimeoutException expected) {
            // not fired
        }
    }

    @Test
    public void watchFiresAfterTheKeyChangesAndNotBefore() throws Exception {
        put("w", "1");
        CompletableFuture<Void> f;
        try (Transaction tx = store.createTransaction()) {
            f = tx.watch(b("w"));
            tx.commit();
        }
        put("other", "x", "w\0", "neighbour", "v", "before");
        assertNotFiredWithin(f, 300);
        put("w", "2");
        f.get(10, TimeUnit.SECONDS);
    }

    /**
     * A transaction of hundreds of writes (a bulk write's size) fires the watches on the keys it
     * writes, whichever way it writes them, and no other: a run of ascending keys, a point set, a
     * point clear and a cleared range. (The embedded engine then asks the transaction about each
     * watched key instead of going through its writes.)
     */
    @Test
    public void watchesAmongABigTransactionsWritesFireOnTheirKeysOnly() throws Exception {
        String[] watched = {"big/run/1500", "big/point", "big/gone", "big/range/5", "big/run/1500x", "big/zzz"};
        for (String k : watched) put(k, "0");
        List<CompletableFuture<Void>> f = new ArrayList<>();
        try (Transaction tx = store.createTransaction()) {
            for (String k : watched) f.add(tx.watch(b(k)));
            tx.commit();
        }
        store.run(tx -> {
            List<KeyValue> run = new ArrayList<>();
            for (int i = 1000; i < 2000; i++) run.add(new KeyValue(b("big/run/" + i), b("v" + i)));
            tx.setAll(run);
            tx.set(b("big/point"), b("1"));
            tx.clear(b("big/gone"));
            tx.clear(b("big/range/"), b("big/range0"));
            return null;
        });
        for (int i = 0; i < 4; i++) f.get(i).get(10, TimeUnit.SECONDS);
        assertNotFiredWithin(f.get(4), 300); // between two of the run's keys
        assertNotFiredWithin(f.get(5), 1);
        for (CompletableFuture<Void> w : f) w.cancel(false);
    }

    @Test
    public void aWatchArmedAfterACommitReturnedIsNotFiredByThatCommit() throws Exception {
        // The commit returned before the watch read its key, so that commit is not a change the
        // watch can report. Repeated, since an engine that notifies watches after acknowledging
        // commits gets this wrong only when its commit thread is preempted in between.
        for (int i = 0; i < 200; i++) {
            byte[] key = b("armed/" + i);
            store.run(tx -> {
                tx.set(key, b("v"));
                return null;
            });
            CompletableFuture<Void> f;
            try (Transaction tx = store.createTransaction()) {
                f = tx.watch(key);
                tx.commit();
            }
            assertNotFiredWithin(f, 3);
            f.cancel(false);
        }
    }

    @Test
    public void watchFiresOnClearAndOnCreation() throws Exception {
        put("w", "1");
        CompletableFuture<Void> cleared;
        CompletableFuture<Void> created;
        try (Transaction tx = store.createTransaction()) {
            cleared = tx.watch(b("w"));
            created = tx.watch(b("absent"));
            tx.commit();
        }
        assertNotFiredWithin(cleared, 200);
        assertNotFiredWithin(created, 1);
        store.run(tx -> {
            tx.clear(b("v"), b("x")); // covers "w", not "absent"
            return null;
        });
        cleared.get(10, TimeUnit.SECONDS);
        assertNotFiredWithin(created, 200);
        put("absent", "now present");
        created.get(10, TimeUnit.SECONDS);
    }

    @Test
    public void watchBaselineIncludesTheTransactionsOwnWrite() throws Exception {
        put("w", "1");
        CompletableFuture<Void> f;
        try (Transaction tx = store.createTransaction()) {
            tx.set(b("w"), b("5"));
            f = tx.watch(b("w"));
            tx.commit(); // the value is now what the watch saw
        }
        assertNotFiredWithin(f, 300);
        put("w", "6");
        f.get(10, TimeUnit.SECONDS);
    }

    @Test
    public void watchFiresAtOnceIfTheKeyChangedBeforeItsTransactionCommitted() throws Exception {
        put("w", "1");
        CompletableFuture<Void> f;
        try (Transaction tx = store.createTransaction()) {
            f = tx.watch(b("w"));
            put("w", "2");
            tx.commit();
        }
        f.get(10, TimeUnit.SECONDS);
    }

    @Test
    public void watchOfAnUncommittedTransactionIsCancelled() {
        put("w", "1");
        CompletableFuture<Void> f;
        try (Transaction tx = store.createTransaction()) {
            f = tx.watch(b("w"));
        }
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(10, TimeUnit.SECONDS));
        KvException k = assertInstanceOf(KvException.class, e.getCause());
        assertEquals(KvException.TRANSACTION_CANCELLED, k.code());
    }

    // =====================================================================================
    // the retry loop

    @Test
    public void runRetriesConflictsUntilSuccess() {
        put("c", "0");
        AtomicInteger attempts = new AtomicInteger();
        String result = store.run(tx -> {
            int attempt = attempts.incrementAndGet();
            long v = Long.parseLong(new String(tx.get(b("c")), UTF_8));
            if (attempt == 1) put("c", "100"); // a conflicting commit between our read and our commit
            tx.set(b("c"), b(String.valueOf(v + 1)));
            return "done after " + attempt;
        });
        assertEquals(2, attempts.get(), "the first attempt conflicted, the second committed");
        assertEquals("done after 2", result);
        assertArrayEquals(b("101"), read(b("c")));
        assertTrue(store.timer().count(StoreTimer.Counts.RETRIES) >= 1);
    }

    @Test
    public void runUnderContentionLosesNoIncrement() throws Exception {
        put("c", "0");
        int threads = 4;
        int perThread = 50;
        runConcurrently(threads, id -> {
            for (int i = 0; i < perThread; i++) {
                store.run(tx -> {
                    long v = Long.parseLong(new String(tx.get(b("c")), UTF_8));
                    tx.set(b("c"), b(String.valueOf(v + 1)));
                    return null;
                });
            }
            return null;
        });
        assertArrayEquals(b(String.valueOf(threads * perThread)), read(b("c")));
    }

    @Test
    public void runRethrowsWhatItCannotRetry() {
        AtomicInteger attempts = new AtomicInteger();
        assertKv(KvException.KEY_TOO_LARGE, () -> store.run(tx -> {
            attempts.incrementAndGet();
            tx.set(filled(KvLimits.MAX_KEY_BYTES + 1, 'k'), b("x"));
            return null;
        }));
        assertEquals(1, attempts.get());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> store.run(tx -> {
            attempts.incrementAndGet();
            tx.set(b("k"), b("x"));
            throw new IllegalStateException("the body's own failure");
        }));
        assertEquals("the body's own failure", e.getMessage());
        assertEquals(2, attempts.get());
        assertNull(read(b("k")), "an abandoned attempt writes nothing");
    }

    @Test
    public void closingWithoutCommitAbandonsTheWrites() {
        try (Transaction tx = store.createTransaction()) {
            tx.set(b("k"), b("v"));
            tx.mutate(MutationType.ADD, b("n"), bytes(1));
        }
        assertNull(read(b("k")));
        assertNull(read(b("n")));
    }
}

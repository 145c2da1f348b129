package dev.chaise.kv.embedded;

import static dev.chaise.kv.embedded.EngineFailurePathsTest.awaitQuietly;
import static dev.chaise.kv.embedded.EngineFailurePathsTest.b;
import static dev.chaise.kv.embedded.EngineFailurePathsTest.holdFirstBatch;
import static dev.chaise.kv.embedded.EngineFailurePathsTest.le64;
import static dev.chaise.kv.embedded.EngineFailurePathsTest.outcome;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import dev.chaise.kv.embedded.FaultInjection.Point;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Big transactions written on writer threads while the leader goes on ({@link Sequencer}): they
 * still land in RocksDB and its WAL in the batch's order, commits arriving meanwhile join the
 * batch, and a failed write on a writer thread stops the sequencer. Every wait is bounded.
 */
class BigWritesTest {
    private static final long WAIT_S = 20;
    /** Rows enough for a WriteBatch over {@link Sequencer#HAND_OFF_BYTES}. */
    private static final int BIG_ROWS = Sequencer.HAND_OFF_BYTES / 256 + 16;

    private static boolean onWriterThread() {
        return Thread.currentThread().getName().startsWith("chaise-kv-writer");
    }

    private record Committed(long version, byte[] stamp) {}

    private static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A transaction big enough to be written on a writer thread, of every kind of write: its own
     * rows, a cleared range, a blind set of a key the others set too, an ADD to a shared counter,
     * a versionstamped value on a shared key and a versionstamped key.
     */
    private static CompletableFuture<Committed> commitBig(KvStore store, String name) {
        return CompletableFuture.supplyAsync(() -> {
            try (Transaction tx = store.createTransaction()) {
                byte[] filler = new byte[240];
                Arrays.fill(filler, (byte) 'x');
                for (int i = 0; i < BIG_ROWS; i++) tx.set(b(name + "/" + String.format("%05d", i)), filler);
                tx.clear(b("gone/" + name), b("gone/" + name + "~"));
                tx.set(b("shared"), b(name));
                tx.mutate(MutationType.ADD, b("counter"), le64(1));
                tx.setVersionstampedValue(b("stamped"), Versionstamps.packWithVersionstamp(b(""), Tuple.from(Versionstamp.incomplete(0))));
                tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(b("log/"), Tuple.from(Versionstamp.incomplete(0))), b(name));
                tx.commit();
                return new Committed(tx.getCommittedVersion(), tx.getVersionstamp());
            }
        }, r -> Thread.ofPlatform().daemon().start(r));
    }

    private static CompletableFuture<Committed> commitSmall(KvStore store, String key) {
        return CompletableFuture.supplyAsync(() -> {
            try (Transaction tx = store.createTransaction()) {
                tx.set(b(key), b("v"));
                tx.mutate(MutationType.ADD, b("counter"), le64(1));
                tx.commit();
                return new Committed(tx.getCommittedVersion(), tx.getVersionstamp());
            }
        }, r -> Thread.ofPlatform().daemon().start(r));
    }

    private static Committed done(CompletableFuture<Committed> f) throws Exception {
        try {
            return f.get(WAIT_S, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail("a commit was never answered");
            return null;
        }
    }

    /** Holds the first batch (a small commit) until {@code n} more commits queue, so that they resolve as one batch. */
    private static void inOneBatch(EmbeddedKvStore store, CountDownLatch held, CountDownLatch release, int n,
                                   List<CompletableFuture<Committed>> into, java.util.function.Supplier<CompletableFuture<Committed>> next)
            throws Exception {
        CompletableFuture<Committed> first = commitSmall(store, "first");
        assertTrue(held.await(WAIT_S, TimeUnit.SECONDS), "the first commit leads its batch and is held");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        for (int i = 0; i < n; i++) into.add(next.get());
        while (store.sequencer().queued() < n && System.nanoTime() < deadline) Thread.sleep(1);
        assertEquals(n, store.sequencer().queued(), n + " commits wait behind the held batch");
        release.countDown();
        done(first);
    }

    /**
     * Two big transactions of one batch, the first's write held back on its writer thread: the
     * second waits until the first is in RocksDB's WAL, so the later one in the batch's order
     * (its versionstamp) wins every key both wrote, the counter has both additions, and a
     * reopened store (which replays the WAL) agrees.
     */
    @Test
    void bigTransactionsOfOneBatchLandInTheBatchsOrder(@TempDir Path dir) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean firstWrite = new AtomicBoolean(true);
        AtomicInteger writerThreads = new AtomicInteger();
        List<CompletableFuture<Committed>> big = new ArrayList<>();
        AtomicInteger names = new AtomicInteger();
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            store.run(tx -> {
                tx.set(b("gone/a/1"), b("x"));
                tx.set(b("gone/b/1"), b("x"));
                tx.set(b("counter"), le64(40));
                return null;
            });
        }
        try (EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir).withFaults(FaultInjection.hooked(holdFirstBatch(held, release, p -> {
            if (p != Point.WRITE || !onWriterThread()) return;
            writerThreads.incrementAndGet();
            if (firstWrite.getAndSet(false)) {
                try {
                    Thread.sleep(200); // were the second written now, it would land first
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }))))) {
            inOneBatch(store, held, release, 2, big, () -> commitBig(store, names.getAndIncrement() == 0 ? "a" : "b"));
            Committed a = done(big.get(0));
            Committed bb = done(big.get(1));
            assertEquals(a.version(), bb.version(), "one batch");
            assertEquals(2, writerThreads.get(), "both were written on writer threads");
            String later = Keys.compare(a.stamp(), bb.stamp()) > 0 ? "a" : "b";
            Committed last = later.equals("a") ? a : bb;
            assertState(store, later, last.stamp());
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            byte[] stamped = store.run(tx -> tx.get(b("stamped")));
            String later = new String(store.run(tx -> tx.get(b("shared"))), UTF_8);
            assertState(store, later, Tuple.fromBytes(stamped).getVersionstamp(0).getTransactionVersion());
        }
    }

    /** A big transaction with no range deletion (a bulk write's kind): the same rows for every name, its own values. */
    private static CompletableFuture<Committed> commitBigRows(KvStore store, String name) {
        return CompletableFuture.supplyAsync(() -> {
            try (Transaction tx = store.createTransaction()) {
                byte[] value = new byte[240];
                Arrays.fill(value, (byte) name.charAt(0));
                for (int i = 0; i < BIG_ROWS; i++) tx.set(b("row/" + String.format("%05d", i)), value);
                tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(b("log/"), Tuple.from(Versionstamp.incomplete(0))), b(name));
                tx.commit();
                return new Committed(tx.getCommittedVersion(), tx.getVersionstamp());
            }
        }, r -> Thread.ofPlatform().daemon().start(r));
    }

    /**
     * Two big writes of one batch overlap: the second is issued once the first has its sequence
     * numbers, before the first returns (the first waits after its write, bounded, for the second
     * to be issued; written one after the other, it would wait in vain). The later one in the
     * batch's order still wins every row both wrote, also after a reopen replays the WAL.
     */
    @Test
    void aBatchsSecondBigWriteIsIssuedWhileTheFirstIsInFlight(@TempDir Path dir) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch secondIssued = new CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        AtomicBoolean overlapped = new AtomicBoolean();
        List<CompletableFuture<Committed>> big = new ArrayList<>();
        AtomicInteger names = new AtomicInteger();
        try (EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir).withFaults(FaultInjection.hooked(holdFirstBatch(held, release, p -> {
            if (!onWriterThread()) return;
            if (p == Point.WRITE && writes.incrementAndGet() == 2) secondIssued.countDown();
            if (p == Point.AFTER_WRITE && secondIssued.getCount() > 0) {
                awaitQuietly(secondIssued);
                overlapped.set(secondIssued.getCount() == 0);
            }
        }))))) {
            inOneBatch(store, held, release, 2, big, () -> commitBigRows(store, names.getAndIncrement() == 0 ? "a" : "b"));
            Committed a = done(big.get(0));
            Committed bb = done(big.get(1));
            assertEquals(a.version(), bb.version(), "one batch");
            assertTrue(overlapped.get(), "the second write was issued before the first had returned");
            String later = Keys.compare(a.stamp(), bb.stamp()) > 0 ? "a" : "b";
            assertRows(store, later);
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            byte[] lastLogged = store.run(tx -> tx.getRangeAsList(b("log/"), b("log0"), 0, true)).get(0).value();
            assertRows(store, new String(lastLogged, UTF_8));
        }
    }

    private static void assertRows(KvStore store, String later) {
        List<KeyValue> rows = store.run(tx -> tx.getRangeAsList(b("row/"), b("row0"), 0, false));
        assertEquals(BIG_ROWS, rows.size());
        for (KeyValue kv : rows) assertEquals(later.charAt(0), (char) kv.value()[0], "the later transaction's value wins " + new String(kv.key(), UTF_8));
    }

    private static void assertState(KvStore store, String later, byte[] laterStamp) {
        assertArrayEquals(b(later), store.run(tx -> tx.get(b("shared"))), "the later transaction's set wins");
        assertEquals(43, le64(store.run(tx -> tx.get(b("counter")))), "40, the first batch's addition and both of theirs");
        Versionstamp stamped = Tuple.fromBytes(store.run(tx -> tx.get(b("stamped")))).getVersionstamp(0);
        assertArrayEquals(laterStamp, stamped.getTransactionVersion(), "the later transaction's versionstamped value wins");
        assertEquals(2, store.run(tx -> tx.getRangeAsList(b("log/"), b("log0"), 0, false)).size(), "both versionstamped keys");
        assertEquals(0, store.run(tx -> tx.getRangeAsList(b("gone/"), b("gone0"), 0, false)).size(), "both cleared ranges");
        assertNotNull(store.run(tx -> tx.get(b("a/00000"))));
        assertNotNull(store.run(tx -> tx.get(b("b/" + String.format("%05d", BIG_ROWS - 1)))));
    }

    /**
     * A commit that queues while a big transaction's write is in flight joins that batch: it is
     * resolved and written during the write (which is held until then) and shares its fsync and
     * version, rather than waiting for the next batch.
     */
    @Test
    void aCommitArrivingDuringABigWriteJoinsItsBatch() throws Exception {
        CountDownLatch secondResolved = new CountDownLatch(1);
        AtomicInteger beforeWrites = new AtomicInteger();
        try (EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(FaultInjection.hooked(p -> {
            if (p == Point.BEFORE_WRITE && beforeWrites.incrementAndGet() == 2) secondResolved.countDown();
            if (p == Point.WRITE && onWriterThread()) awaitQuietly(secondResolved);
        })))) {
            CompletableFuture<Committed> big = commitBig(store, "a");
            while (beforeWrites.get() < 1) Thread.sleep(1);
            CompletableFuture<Committed> small = commitSmall(store, "small");
            Committed a = done(big);
            Committed s = done(small);
            assertEquals(a.version(), s.version(), "the small commit joined the big one's batch");
            assertTrue(Keys.compare(s.stamp(), a.stamp()) > 0, "after it in the batch's order");
            assertEquals(2, le64(store.run(tx -> tx.get(b("counter")))));
        }
    }

    /**
     * A commit that queues while the leader gets no core until its batch's big write is done
     * (simulated: the leader is held after the hand-off until the write has returned and the
     * commit is queued) still joins that batch before its fsync, rather than waiting for it.
     */
    @Test
    void aCommitQueuedBeforeTheLeaderLooksAgainJoinsItsBatch() throws Exception {
        CountDownLatch written = new CountDownLatch(1);
        AtomicReference<Thread> writer = new AtomicReference<>();
        AtomicReference<EmbeddedKvStore> opened = new AtomicReference<>();
        AtomicReference<CompletableFuture<Committed>> small = new AtomicReference<>();
        try (EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(FaultInjection.hooked(p -> {
            if (p == Point.AFTER_WRITE && onWriterThread()) {
                writer.set(Thread.currentThread());
                written.countDown();
            }
            if (p == Point.HANDED_OFF && small.get() == null) {
                awaitQuietly(written);
                // The writer thread counts its write done just after AFTER_WRITE; back in its pool, it waits.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
                while (writer.get().getState() != Thread.State.TIMED_WAITING && writer.get().getState() != Thread.State.WAITING
                        && System.nanoTime() < deadline) sleepQuietly(1);
                small.set(commitSmall(opened.get(), "small"));
                while (opened.get().sequencer().queued() < 1 && System.nanoTime() < deadline) sleepQuietly(1);
            }
        })))) {
            opened.set(store);
            Committed a = done(commitBig(store, "a"));
            Committed s = done(small.get());
            assertEquals(a.version(), s.version(), "the small commit joined the big one's batch");
            assertTrue(Keys.compare(s.stamp(), a.stamp()) > 0, "after it in the batch's order");
            assertEquals(2, le64(store.run(tx -> tx.get(b("counter")))));
        }
    }

    /**
     * The first of two big writes of one batch fails: the sequencer stops, the failed one is 1021
     * (RocksDB may have logged it), the second is never written (1510), later commits get 1510 and
     * reads go on; the next open has neither.
     */
    @Test
    void aFailedParallelWriteStopsTheSequencer(@TempDir Path dir) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicBoolean failFirst = new AtomicBoolean(true);
        List<CompletableFuture<Committed>> big = new ArrayList<>();
        AtomicInteger names = new AtomicInteger();
        try (EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir).withFaults(FaultInjection.hooked(holdFirstBatch(held, release, p -> {
            if (p == Point.WRITE && onWriterThread() && failFirst.getAndSet(false)) throw new IllegalStateException("injected write failure");
        }))))) {
            inOneBatch(store, held, release, 2, big, () -> commitBig(store, names.getAndIncrement() == 0 ? "a" : "b"));
            List<Integer> codes = new ArrayList<>(List.of(outcome(big.get(0)), outcome(big.get(1))));
            codes.sort(null);
            assertEquals(List.of(KvException.COMMIT_UNKNOWN_RESULT, KvException.IO_ERROR), codes, "the failed one 1021, the one after it 1510");
            assertEquals(KvException.IO_ERROR, outcome(commitSmall(store, "later")), "stopped");
            assertNotNull(store.run(tx -> tx.get(b("first"))), "reads go on");
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            assertNull(store.run(tx -> tx.get(b("shared"))), "neither big transaction reached RocksDB");
            assertNull(store.run(tx -> tx.get(b("later"))));
            assertEquals(1, le64(store.run(tx -> tx.get(b("counter")))), "the first batch's addition alone");
        }
    }
}

package dev.chaise.kv.embedded;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.embedded.FaultInjection.Point;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded engine's failure paths, each reached through a {@link FaultInjection} hook that
 * fails or blocks the engine at one named point: a failed fsync, a failure before or after a
 * transaction's write, an {@link Error} while resolving or acknowledging, a stalled leader, a
 * close racing a commit, a transaction closed under a running iterator, and a key changing while
 * its watch is armed. Every wait here is bounded, so a hang fails the test instead of the build.
 */
class EngineFailurePathsTest {
    private static final long WAIT_S = 20;

    static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    static byte[] le64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    static long le64(byte[] v) {
        return v == null ? 0 : ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static EmbeddedKvStore open(EmbeddedOptions options, FaultInjection.Hook hook) {
        return EmbeddedKvStore.open(options.withFaults(FaultInjection.hooked(hook)));
    }

    /** Commits one blind write of {@code key} on another thread. */
    private static CompletableFuture<Void> commitAsync(KvStore store, String key) {
        return new Committer(store, key).done;
    }

    /** The KvException code a commit ended with, 0 for success; fails the test if it did not answer in time. */
    static int outcome(CompletableFuture<?> f) throws Exception {
        try {
            f.get(WAIT_S, TimeUnit.SECONDS);
            return 0;
        } catch (TimeoutException e) {
            fail("a commit was never answered");
            return -1;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KvException k) return k.code();
            throw e;
        }
    }

    static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(WAIT_S, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** RFC D's guarded write: a marker and a counter increment, the marker checked after a 1021. */
    private static void guardedIncrement(KvStore store, String id) {
        byte[] marker = b("op/" + id);
        store.run(tx -> {
            tx.set(marker, b("done"));
            tx.mutate(MutationType.ADD, b("counter"), le64(1));
            return Boolean.TRUE;
        }, tx -> tx.get(marker) != null ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    // ---- a failed fsync

    /**
     * A batch whose fsync failed is already in RocksDB and may survive. Before the fix, the version
     * moved past it while the read snapshot did not, so the guard's re-read missed the marker, the
     * body ran again and committed: the increment was applied twice.
     */
    @Test
    void aFailedFsyncCannotLetTheGuardApplyAWriteTwice(@TempDir Path dir) {
        AtomicBoolean failNextSync = new AtomicBoolean();
        try (EmbeddedKvStore store = open(EmbeddedOptions.onDisk(dir), p -> {
            if (p == Point.SYNC && failNextSync.getAndSet(false)) throw new IllegalStateException("injected fsync failure");
        })) {
            store.run(tx -> {
                tx.set(b("counter"), le64(0));
                return null;
            });
            failNextSync.set(true);
            try {
                guardedIncrement(store, "once");
            } catch (KvException e) {
                // the store may refuse to go on after a failed fsync; what counts is what survives
            }
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            byte[] marker = store.run(tx -> tx.get(b("op/once")));
            long counter = le64(store.run(tx -> tx.get(b("counter"))));
            assertEquals(marker == null ? 0 : 1, counter, "the increment is applied exactly when its marker is there");
        }
    }

    /** After a failed fsync the engine stops taking commits (the outcome is settled at the next open), but it still reads. */
    @Test
    void afterAFailedFsyncCommitsFailFastAndReadsGoOn(@TempDir Path dir) {
        AtomicBoolean failNextSync = new AtomicBoolean();
        try (EmbeddedKvStore store = open(EmbeddedOptions.onDisk(dir), p -> {
            if (p == Point.SYNC && failNextSync.getAndSet(false)) throw new IllegalStateException("injected fsync failure");
        })) {
            store.run(tx -> {
                tx.set(b("k"), b("before"));
                return null;
            });
            failNextSync.set(true);
            KvException unknown = assertThrows(KvException.class, () -> store.run(tx -> {
                tx.set(b("k"), b("after"));
                return null;
            }));
            assertEquals(KvException.COMMIT_UNKNOWN_RESULT, unknown.code());
            KvException stopped = assertThrows(KvException.class, () -> store.run(tx -> {
                tx.set(b("other"), b("x"));
                return null;
            }));
            assertEquals(KvException.IO_ERROR, stopped.code(), stopped.getMessage());
            assertTrue(stopped.unavailable(), "a store that cannot write is unavailable, not broken");
            byte[] seen = store.run(tx -> tx.get(b("k")));
            assertNotNull(seen, "reads still answer");
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            assertArrayEquals(b("after"), store.run(tx -> tx.get(b("k"))), "the 1021 did land: its WriteBatch was in the WAL");
            assertNull(store.run(tx -> tx.get(b("other"))));
            store.run(tx -> {
                tx.set(b("other"), b("y"));
                return null;
            });
        }
    }

    // ---- failures inside a batch

    /** Holds the first batch (t0) until three more commits are queued, so they resolve as one batch. */
    private static List<CompletableFuture<Void>> threeInOneBatch(EmbeddedKvStore store, CountDownLatch held, CountDownLatch release) throws Exception {
        CompletableFuture<Void> first = commitAsync(store, "t0");
        List<CompletableFuture<Void>> three = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_S);
        assertTrue(held.await(WAIT_S, TimeUnit.SECONDS), "t0 leads its batch and is held");
        for (int i = 1; i <= 3; i++) three.add(commitAsync(store, "t" + i));
        while (store.sequencer().queued() < 3 && System.nanoTime() < deadline) Thread.sleep(1);
        assertEquals(3, store.sequencer().queued(), "three commits wait behind the held batch");
        release.countDown();
        assertEquals(0, outcome(first));
        return three;
    }

    /** A hook that holds the first batch until {@code release}, then runs {@code inSecondBatch} for every later point. */
    static FaultInjection.Hook holdFirstBatch(CountDownLatch held, CountDownLatch release, FaultInjection.Hook inSecondBatch) {
        AtomicInteger batches = new AtomicInteger();
        return p -> {
            if (p == Point.RESOLVE_BATCH && batches.incrementAndGet() == 1) {
                held.countDown();
                awaitQuietly(release);
            }
            if (batches.get() == 2) inSecondBatch.at(p);
        };
    }

    @Test
    void aFailureAfterATransactionsWriteIsCommitUnknownAndTheRestOfTheBatchCommits() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger written = new AtomicInteger();
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), holdFirstBatch(held, release, p -> {
            if (p == Point.AFTER_WRITE && written.incrementAndGet() == 2) throw new IllegalStateException("injected after the write");
        }))) {
            List<Integer> codes = new ArrayList<>();
            for (CompletableFuture<Void> f : threeInOneBatch(store, held, release)) codes.add(outcome(f));
            assertEquals(List.of(0, 0, KvException.COMMIT_UNKNOWN_RESULT), codes.stream().sorted().toList(),
                    "the written one is 1021; the others are not harmed: " + codes);
            for (int i = 1; i <= 3; i++) {
                String k = "t" + i;
                assertNotNull(store.run(tx -> tx.get(b(k))), k + " was written, so it is there (a 1021 that did commit)");
            }
        }
    }

    @Test
    void aFailureBeforeATransactionsWriteFailsOnlyThatTransaction() throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), holdFirstBatch(held, release, p -> {
            if (p == Point.BEFORE_WRITE && writes.incrementAndGet() == 2) throw new IllegalStateException("injected before the write");
        }))) {
            List<Integer> codes = new ArrayList<>();
            for (CompletableFuture<Void> f : threeInOneBatch(store, held, release)) codes.add(outcome(f));
            assertEquals(List.of(0, 0, KvException.INTERNAL_ERROR), codes.stream().sorted().toList(), "only the failed one fails: " + codes);
            int present = 0;
            for (int i = 1; i <= 3; i++) {
                String k = "t" + i;
                if (store.run(tx -> tx.get(b(k))) != null) present++;
            }
            assertEquals(2, present, "nothing of the failed transaction was written");
        }
    }

    /**
     * A RocksDB write that fails leaves the WAL unknown until the next open: the sequencer stops.
     * The failed transaction is 1021, the one written before it in the batch too (its batch is not
     * logged), the one after it is never written (1510), and so is every later commit; the next
     * open has what reached RocksDB.
     */
    @Test
    void aFailedRocksDbWriteStopsTheSequencer(@TempDir Path dir) throws Exception {
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger writes = new AtomicInteger();
        try (EmbeddedKvStore store = open(EmbeddedOptions.onDisk(dir), holdFirstBatch(held, release, p -> {
            if (p == Point.WRITE && writes.incrementAndGet() == 2) throw new IllegalStateException("injected write failure");
        }))) {
            List<Integer> codes = new ArrayList<>();
            for (CompletableFuture<Void> f : threeInOneBatch(store, held, release)) codes.add(outcome(f));
            codes.sort(null);
            assertEquals(List.of(KvException.COMMIT_UNKNOWN_RESULT, KvException.COMMIT_UNKNOWN_RESULT, KvException.IO_ERROR), codes,
                    "the failed one and the one written before it 1021, the one after it 1510");
            assertEquals(KvException.IO_ERROR, outcome(commitAsync(store, "later")), "stopped");
            assertNotNull(store.run(tx -> tx.get(b("t0"))), "reads go on");
        }
        try (KvStore store = EmbeddedKvStore.open(EmbeddedOptions.onDisk(dir))) {
            int present = 0;
            for (int i = 1; i <= 3; i++) {
                String k = "t" + i;
                if (store.run(tx -> tx.get(b(k))) != null) present++;
            }
            assertEquals(1, present, "only the one written before the failure reached RocksDB");
            assertNull(store.run(tx -> tx.get(b("later"))));
        }
    }

    /** An Error escaped the resolver before: it kept the batch's in-flight count and its log slot, and after 256 the engine hung. Now the lead must survive it. */
    @Test
    void errorsInTheResolverLeakNeitherSlotsNorVersions() throws Exception {
        AtomicBoolean failing = new AtomicBoolean(true);
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), p -> {
            if (p == Point.BEFORE_WRITE && failing.get()) throw new AssertionError("injected Error");
        })) {
            for (int i = 0; i < 300; i++) {
                int code = outcome(commitAsync(store, "e" + i));
                assertEquals(KvException.INTERNAL_ERROR, code, "commit " + i);
            }
            failing.set(false);
            assertEquals(0, outcome(commitAsync(store, "after")), "the engine still commits");
            Thread.sleep(20);
            long clock = store.timeVersion();
            try (Transaction tx = store.createTransaction()) {
                assertTrue(tx.getReadVersion() >= clock, "while no batch is in flight, read versions follow the clock");
            }
        }
    }

    /** The log thread had no catch: one Error killed it, and every commit handed to it afterwards waited forever. The lead must survive it too. */
    @Test
    void anErrorWhileAcknowledgingLeavesNoCommitUnanswered() throws Exception {
        AtomicBoolean armed = new AtomicBoolean();
        AtomicBoolean fired = new AtomicBoolean();
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), p -> {
            if (p == Point.ACKNOWLEDGE && armed.get() && fired.compareAndSet(false, true)) {
                throw new AssertionError("injected Error while acknowledging");
            }
        })) {
            AtomicInteger unknown = new AtomicInteger();
            for (int round = 0; round < 50 && (round < 3 || !fired.get()); round++) {
                if (round == 1) armed.set(true);
                List<CompletableFuture<Void>> wave = new ArrayList<>();
                for (int i = 0; i < 64; i++) wave.add(commitAsync(store, "w" + round + "/" + i));
                for (CompletableFuture<Void> f : wave) {
                    int code = outcome(f);
                    if (code == KvException.COMMIT_UNKNOWN_RESULT) unknown.incrementAndGet();
                    else assertEquals(0, code);
                }
            }
            assertTrue(fired.get(), "a batch was being acknowledged when the Error was thrown");
            assertTrue(unknown.get() > 0, "the batch the Error hit was answered 1021");
            assertEquals(0, outcome(commitAsync(store, "later")), "the engine still commits");
        }
    }

    // ---- waiting

    /**
     * A committer waits for a leader at most the commit timeout: 1021 if the stalled leader had
     * taken it into its batch (it may still be written), 1031 if it was still queued (withdrawn,
     * certainly not written). The stalled leader's own commit is bounded by its own work only.
     */
    @Test
    void aCommitGivesUpAfterItsTimeout() throws Exception {
        HeldBatches held = new HeldBatches();
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory().withCommitTimeout(Duration.ofMillis(1_000)), held)) {
            List<CompletableFuture<Void>> c;
            try {
                c = held.holdSecondBatch(store, () -> commitAsync(store, "leader1"), () -> commitAsync(store, "leader2"),
                        () -> commitAsync(store, "taken"));
                assertEquals(0, outcome(c.get(0)));
                assertEquals(0, store.sequencer().queued(), "the second batch took both");
                CompletableFuture<Void> queued = commitAsync(store, "queued");
                assertEquals(KvException.COMMIT_UNKNOWN_RESULT, outcome(c.get(2)), "the leader had it: it may still be written");
                assertEquals(KvException.TRANSACTION_TIMED_OUT, outcome(queued), "still queued: withdrawn, certainly not written");
            } finally {
                held.releaseAll();
            }
            assertEquals(0, outcome(c.get(1)), "the held leader went on once released");
            assertEquals(0, outcome(commitAsync(store, "after")));
            assertNotNull(store.run(tx -> tx.get(b("taken"))), "the held batch went on once released");
            assertNull(store.run(tx -> tx.get(b("queued"))));
        }
    }

    /**
     * An interrupted committer is answered by what its request reached, as a timed-out one is:
     * 1025 if it was still queued (withdrawn, certainly not written), 1021 if a stalled leader had
     * taken it into its batch. Its interrupt status is kept, and no waiter stays registered.
     */
    @Test
    void anInterruptedCommitIsAnsweredByWhereItWas() throws Exception {
        HeldBatches held = new HeldBatches();
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), held)) {
            List<Committer> c;
            try {
                c = held.holdSecondBatch(store, () -> new Committer(store, "leader1"), () -> new Committer(store, "leader2"),
                        () -> new Committer(store, "taken"));
                assertEquals(0, outcome(c.get(0).done));
                Committer queued = new Committer(store, "queued");
                while (store.sequencer().queued() < 1) Thread.sleep(1);
                while (store.sequencer().waiting() < 2) Thread.sleep(1); // taken and queued, parked
                queued.thread.interrupt();
                assertEquals(KvException.TRANSACTION_CANCELLED, outcome(queued.done), "still queued: withdrawn");
                assertTrue(queued.interruptedAfter.get(), "the interrupt status is kept");
                c.get(2).thread.interrupt();
                assertEquals(KvException.COMMIT_UNKNOWN_RESULT, outcome(c.get(2).done), "the leader had it: it may still be written");
                assertEquals(0, store.sequencer().queued());
            } finally {
                held.releaseAll();
            }
            assertEquals(0, outcome(c.get(1).done), "the held leader went on once released");
            assertNotNull(store.run(tx -> tx.get(b("taken"))), "the held batch went on once released");
            assertNull(store.run(tx -> tx.get(b("queued"))));
            assertEquals(0, store.sequencer().waiting(), "every waiter unregistered");
        }
    }

    /**
     * Holds the first two batches at {@link Point#RESOLVE_BATCH} until released: a stalled leader,
     * then the committer it hands the lead to, whose batch has taken a third commit.
     */
    private static final class HeldBatches implements FaultInjection.Hook {
        private final CountDownLatch firstHeld = new CountDownLatch(1);
        private final CountDownLatch releaseFirst = new CountDownLatch(1);
        private final CountDownLatch secondHeld = new CountDownLatch(1);
        private final CountDownLatch releaseSecond = new CountDownLatch(1);
        private final AtomicInteger batches = new AtomicInteger();

        @Override
        public void at(Point p) {
            if (p != Point.RESOLVE_BATCH) return;
            int n = batches.incrementAndGet();
            if (n == 1) {
                firstHeld.countDown();
                awaitQuietly(releaseFirst);
            } else if (n == 2) {
                secondHeld.countDown();
                awaitQuietly(releaseSecond);
            }
        }

        /**
         * Starts three commits, {@code first} leading a held batch and the other two queued behind
         * it, then releases it: the lead goes to {@code second}, whose batch takes {@code third}.
         * Returns the three once that batch is held.
         */
        <T> List<T> holdSecondBatch(EmbeddedKvStore store, Supplier<T> first, Supplier<T> second, Supplier<T> third) throws InterruptedException {
            T a = first.get();
            assertTrue(firstHeld.await(WAIT_S, TimeUnit.SECONDS), "the first commit leads its batch and is held");
            T b = second.get();
            while (store.sequencer().queued() < 1) Thread.sleep(1);
            T c = third.get();
            while (store.sequencer().queued() < 2) Thread.sleep(1);
            releaseFirst.countDown();
            assertTrue(secondHeld.await(WAIT_S, TimeUnit.SECONDS), "the second batch is held");
            return List.of(a, b, c);
        }

        void releaseAll() {
            releaseFirst.countDown();
            releaseSecond.countDown();
        }
    }

    /** One blind write of {@code key} on a platform thread of its own, which a test can interrupt. */
    private static final class Committer {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final AtomicBoolean interruptedAfter = new AtomicBoolean();
        final Thread thread;

        Committer(KvStore store, String key) {
            thread = Thread.ofPlatform().daemon().start(() -> {
                Throwable failed = null;
                try (Transaction tx = store.createTransaction()) {
                    tx.set(b(key), b("v"));
                    tx.commit();
                } catch (Throwable t) {
                    failed = t;
                }
                interruptedAfter.set(Thread.currentThread().isInterrupted()); // before the test can see the outcome
                if (failed == null) done.complete(null);
                else done.completeExceptionally(failed);
            });
        }
    }

    /**
     * Committers wait without a timer each: one watcher thread per store gives up those past the
     * timeout. Many concurrent commits leave no waiter registered, and the watcher ends with the store.
     */
    @Test
    void theTimeoutWatcherHoldsOnlyWaitersAndEndsWithTheStore() throws Exception {
        EmbeddedKvStore store = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        Thread watcher = store.sequencer().timeoutWatcher();
        try {
            assertTrue(watcher.isAlive());
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int first = t;
                threads.add(Thread.ofVirtual().start(() -> {
                    for (int i = first; i < 800; i += 8) {
                        int n = i;
                        store.run(tx -> {
                            tx.set(b("k" + n), b("v"));
                            return null;
                        });
                    }
                }));
            }
            for (Thread t : threads) assertTrue(t.join(Duration.ofSeconds(WAIT_S)));
            assertEquals(0, store.sequencer().waiting());
            assertEquals(800, store.run(tx -> tx.getRangeAsList(b("k"), b("l"), 0, false)).size());
        } finally {
            store.close();
        }
        assertTrue(watcher.join(Duration.ofSeconds(WAIT_S)), "the watcher ends when the store closes");
    }

    @Test
    void aCommitRacingCloseIsAnswered() throws Exception {
        AtomicReference<EmbeddedKvStore> ref = new AtomicReference<>();
        AtomicBoolean first = new AtomicBoolean(true);
        EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), p -> {
            if (p == Point.COMMIT_ENQUEUE && first.getAndSet(false)) {
                Thread closer = Thread.ofPlatform().start(() -> ref.get().close());
                try {
                    closer.join(TimeUnit.SECONDS.toMillis(WAIT_S));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        ref.set(store);
        try {
            assertEquals(KvException.TRANSACTION_CANCELLED, outcome(commitAsync(store, "k")));
        } finally {
            store.close();
        }
    }

    // ---- an iterator against commit and close

    /**
     * Iterates 2,000 rows; at the 10th step through RocksDB (rows are read in batches, so well
     * into the range) the hook runs {@code end} on another thread and waits up to a second for it.
     * The iterator must then stop with {@code expectedCode}, never touch a freed RocksDB iterator.
     */
    private static void iterateWhileEnding(java.util.function.BiConsumer<Transaction, KvStore> end, int expectedCode) throws Exception {
        AtomicInteger steps = new AtomicInteger(-1_000_000);
        AtomicReference<Runnable> action = new AtomicReference<>();
        AtomicBoolean endedDuringStep = new AtomicBoolean();
        AtomicReference<Thread> ender = new AtomicReference<>();
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), p -> {
            if (p == Point.ITERATOR_STEP && steps.incrementAndGet() == 10) {
                Thread other = Thread.ofPlatform().start(action.get());
                ender.set(other);
                try {
                    other.join(1_000); // a correct engine makes it wait for this step: the bound keeps that from deadlocking
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                endedDuringStep.set(!other.isAlive());
            }
        })) {
            store.run(tx -> {
                for (int i = 0; i < 2_000; i++) tx.set(b(String.format("r/%05d", i)), new byte[100]);
                return null;
            });
            try (Transaction tx = store.createTransaction()) {
                action.set(() -> {
                    try {
                        end.accept(tx, store);
                    } catch (KvException refused) {
                        // ending may itself be refused; the iterator's answer is what is checked
                    }
                });
                steps.set(0);
                int rows = 0;
                KvException stopped = null;
                try (RangeIterator it = tx.getRange(b("r/"), b("r0"))) {
                    while (it.hasNext()) {
                        it.next();
                        rows++;
                        // Let the ending run now that the step is over (monitors are not fair: this thread could win them all).
                        Thread other = ender.get();
                        if (other != null) other.join(TimeUnit.SECONDS.toMillis(WAIT_S));
                    }
                } catch (KvException e) {
                    stopped = e;
                }
                assertFalse(endedDuringStep.get(), "the ending waited for the step in progress, which was using RocksDB");
                assertNotNull(stopped, "the iterator went on after its transaction ended (" + rows + " rows)");
                assertEquals(expectedCode, stopped.code(), stopped.getMessage());
                assertTrue(rows >= 9 && rows < 2_000, rows + " rows");
            }
        }
    }

    @Test
    void closingATransactionUnderARunningIteratorStopsTheIterator() throws Exception {
        iterateWhileEnding((tx, store) -> tx.close(), KvException.CLIENT_INVALID_OPERATION);
    }

    @Test
    void committingATransactionUnderARunningIteratorStopsTheIterator() throws Exception {
        iterateWhileEnding((tx, store) -> tx.commit(), KvException.CLIENT_INVALID_OPERATION);
    }

    @Test
    void closingTheStoreUnderARunningIteratorStopsTheIterator() throws Exception {
        iterateWhileEnding((tx, store) -> store.close(), KvException.TRANSACTION_CANCELLED);
    }

    // ---- watches

    /**
     * The watch compared its baseline with the latest value, then was armed; a commit landing in
     * between found no watch armed (it skipped the lock when none were) and the watch never fired.
     */
    @Test
    void aKeyChangingWhileItsWatchIsArmedFiresTheWatch() throws Exception {
        AtomicReference<KvStore> ref = new AtomicReference<>();
        AtomicBoolean first = new AtomicBoolean(true);
        try (EmbeddedKvStore store = open(EmbeddedOptions.inMemory(), p -> {
            if (p == Point.WATCH_ARM && first.getAndSet(false)) {
                Thread writer = Thread.ofPlatform().start(() -> ref.get().run(tx -> {
                    tx.set(b("k"), b("v1"));
                    return null;
                }));
                try {
                    writer.join(TimeUnit.SECONDS.toMillis(WAIT_S));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        })) {
            ref.set(store);
            store.run(tx -> {
                tx.set(b("k"), b("v0"));
                return null;
            });
            CompletableFuture<Void> watch;
            try (Transaction tx = store.createTransaction()) {
                assertArrayEquals(b("v0"), tx.get(b("k")));
                watch = tx.watch(b("k"));
                tx.commit();
            }
            assertFalse(first.get(), "the hook ran while the watch was armed");
            try {
                watch.get(5, TimeUnit.SECONDS);
            } catch (TimeoutException e) {
                fail("the watch missed the change that landed while it was being armed");
            }
        }
    }
}

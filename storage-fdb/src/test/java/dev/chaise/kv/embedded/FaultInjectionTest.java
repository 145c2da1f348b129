package dev.chaise.kv.embedded;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The embedded engine's injected commit failures, and the retry loop's handling of them: what a
 * FoundationDB cluster can do to a commit (1020, 1007, 1021 of either outcome), made frequent.
 */
class FaultInjectionTest {

    private static byte[] b(String s) {
        return s.getBytes(UTF_8);
    }

    private static byte[] le64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    private static long le64(byte[] v) {
        return ByteBuffer.wrap(v).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private static KvStore open(FaultInjection faults) {
        return EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(faults));
    }

    private static int count(KvStore store, String prefix) {
        return store.run(tx -> {
            int n = 0;
            try (RangeIterator it = tx.getRangeStartsWith(b(prefix), 0, false)) {
                while (it.hasNext()) {
                    it.next();
                    n++;
                }
            }
            return n;
        });
    }

    /**
     * One logical operation: a transaction-id marker and a counter increment. The check looks for
     * the marker inside the retry's own transaction, so the operation applies exactly once.
     */
    private static void logicalOp(KvStore store, String id, AtomicInteger bodyRuns) {
        byte[] marker = b("op/" + id);
        store.run(tx -> {
            bodyRuns.incrementAndGet();
            tx.set(marker, b("done"));
            tx.mutate(MutationType.ADD, b("counter"), le64(1));
            return Boolean.TRUE;
        }, tx -> tx.get(marker) != null ? Optional.of(Boolean.TRUE) : Optional.empty());
    }

    private static void runThreads(int threads, int opsPerThread, KvStore store, AtomicInteger bodyRuns) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int id = t;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < opsPerThread; i++) logicalOp(store, id + "/" + i, bodyRuns);
                }));
            }
            for (Future<?> f : futures) f.get(120, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void withoutACheckA1021IsRethrownAfterOneAttempt() {
        for (double committed : new double[] {0.0, 1.0}) {
            try (KvStore store = open(new FaultInjection(0, 0, 1.0, committed, 1))) {
                AtomicInteger attempts = new AtomicInteger();
                KvException e = assertThrows(KvException.class, () -> store.run(tx -> {
                    attempts.incrementAndGet();
                    tx.set(b("k"), b("v"));
                    return null;
                }));
                assertEquals(KvException.COMMIT_UNKNOWN_RESULT, e.code());
                assertTrue(e.maybeCommitted());
                assertEquals(1, attempts.get(), "nobody can tell whether it landed, so the loop must not run the body again");
                byte[] v = store.run(tx -> tx.get(b("k"))); // read-only commits never fail
                if (committed == 0.0) assertNull(v, "this 1021 did not commit");
                else assertArrayEquals(b("v"), v, "this 1021 did commit");
            }
        }
    }

    @Test
    void aCheckResolvesA1021ThatCommitted() {
        try (KvStore store = open(new FaultInjection(0, 0, 1.0, 1.0, 2))) {
            AtomicInteger bodyRuns = new AtomicInteger();
            logicalOp(store, "only", bodyRuns);
            assertEquals(1, bodyRuns.get(), "the check found the marker; the body did not run again");
            assertEquals(1, le64(store.run(tx -> tx.get(b("counter")))));
        }
    }

    @Test
    void underUnknownResultsEveryLogicalOperationAppliesExactlyOnce() throws Exception {
        try (KvStore store = open(new FaultInjection(0, 0, 0.5, 0.5, 3))) {
            AtomicInteger bodyRuns = new AtomicInteger();
            runThreads(4, 100, store, bodyRuns);
            assertEquals(400, le64(store.run(tx -> tx.get(b("counter")))));
            assertEquals(400, count(store, "op/"));
            assertTrue(bodyRuns.get() > 400, "some bodies ran again after a 1021 that did not commit");
            assertTrue(store.timer().count(StoreTimer.Counts.INJECTED_FAULTS) > 0);
        }
    }

    @Test
    void injectedFaultsSurfaceWithFdbCodesAndTheirOutcomes() {
        try (KvStore store = open(FaultInjection.uniform(0.05, 42))) {
            int commits = 2_000;
            Map<Integer, Integer> codes = new TreeMap<>();
            List<Integer> mustExist = new ArrayList<>();
            List<Integer> mustNotExist = new ArrayList<>();
            List<Integer> unknown = new ArrayList<>();
            for (int i = 0; i < commits; i++) {
                try (Transaction tx = store.createTransaction()) {
                    tx.set(b(String.format("f/%05d", i)), b("x"));
                    tx.commit();
                    mustExist.add(i);
                } catch (KvException e) {
                    codes.merge(e.code(), 1, Integer::sum);
                    if (e.code() == KvException.COMMIT_UNKNOWN_RESULT) unknown.add(i);
                    else mustNotExist.add(i);
                }
            }
            assertEquals(List.of(KvException.TRANSACTION_TOO_OLD, KvException.NOT_COMMITTED, KvException.COMMIT_UNKNOWN_RESULT),
                    List.copyOf(codes.keySet()), "each fault kind occurred, and nothing else: " + codes);
            int failures = codes.values().stream().mapToInt(Integer::intValue).sum();
            assertEquals(failures, store.timer().count(StoreTimer.Counts.INJECTED_FAULTS));

            int[] landedUnknown = {0};
            store.run(tx -> {
                for (int i : mustExist) assertArrayEquals(b("x"), tx.get(b(String.format("f/%05d", i))), "acknowledged commit " + i);
                for (int i : mustNotExist) assertNull(tx.get(b(String.format("f/%05d", i))), "refused commit " + i);
                for (int i : unknown) if (tx.get(b(String.format("f/%05d", i))) != null) landedUnknown[0]++;
                return null;
            });
            assertTrue(landedUnknown[0] > 0 && landedUnknown[0] < unknown.size(),
                    "a 1021 may or may not have committed; both happen: " + landedUnknown[0] + " of " + unknown.size());

            for (int i = 0; i < 200; i++) {
                try (Transaction tx = store.createTransaction()) {
                    tx.get(b("f/00000"));
                    tx.commit(); // read-only commits never fail
                }
            }
        }
    }

    @Test
    void underEveryFaultRunWithACheckAppliesEachOperationOnce() throws Exception {
        try (KvStore store = open(FaultInjection.uniform(0.05, 7))) {
            AtomicInteger bodyRuns = new AtomicInteger();
            runThreads(4, 250, store, bodyRuns);
            assertEquals(1_000, le64(store.run(tx -> tx.get(b("counter")))));
            assertEquals(1_000, count(store, "op/"));
            assertTrue(store.timer().count(StoreTimer.Counts.RETRIES) > 0);
        }
    }
}

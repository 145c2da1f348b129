package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.FDBException;
import dev.chaise.kv.KeySelector;
import dev.chaise.kv.KvException;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.StoreTimer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/** The translation to and from fdb-java; FDBException and fdb's enums are plain Java, so this runs without libfdb_c. */
class FdbMappingTest {

    @Test
    void everyMutationMapsToFdbsOperationOfTheSameMeaning() {
        for (MutationType t : MutationType.values()) {
            assertEquals(t.name(), FdbMapping.toFdb(t).name(), "names match FDB's API 520+ constants for " + t);
        }
        // Spelled out for the ones whose fdb-java constant has a deprecated twin (AND/OR/XOR).
        assertSame(com.apple.foundationdb.MutationType.BIT_AND, FdbMapping.toFdb(MutationType.BIT_AND));
        assertSame(com.apple.foundationdb.MutationType.BIT_OR, FdbMapping.toFdb(MutationType.BIT_OR));
        assertSame(com.apple.foundationdb.MutationType.BIT_XOR, FdbMapping.toFdb(MutationType.BIT_XOR));
        assertEquals(2, FdbMapping.toFdb(MutationType.ADD).code());
        assertEquals(20, FdbMapping.toFdb(MutationType.COMPARE_AND_CLEAR).code());
    }

    @Test
    void keySelectorsKeepKeyOrEqualAndOffset() {
        byte[] k = {1, 2};
        check(KeySelector.lastLessThan(k), com.apple.foundationdb.KeySelector.lastLessThan(k));
        check(KeySelector.lastLessOrEqual(k), com.apple.foundationdb.KeySelector.lastLessOrEqual(k));
        check(KeySelector.firstGreaterThan(k), com.apple.foundationdb.KeySelector.firstGreaterThan(k));
        check(KeySelector.firstGreaterOrEqual(k), com.apple.foundationdb.KeySelector.firstGreaterOrEqual(k));
        check(KeySelector.firstGreaterOrEqual(k).add(3), com.apple.foundationdb.KeySelector.firstGreaterOrEqual(k).add(3));
    }

    private static void check(KeySelector ours, com.apple.foundationdb.KeySelector fdbs) {
        com.apple.foundationdb.KeySelector mapped = FdbMapping.toFdb(ours);
        assertArrayEquals(fdbs.getKey(), mapped.getKey());
        assertEquals(fdbs.orEqual(), mapped.orEqual());
        assertEquals(fdbs.getOffset(), mapped.getOffset());
    }

    @Test
    void fdbExceptionKeepsCodeAndMessage() {
        FDBException e = new FDBException("Transaction not committed due to conflict with another transaction", 1020);
        KvException kv = assertInstanceOf(KvException.class, FdbMapping.map(e));
        assertEquals(1020, kv.code());
        assertEquals("1020 Transaction not committed due to conflict with another transaction", kv.getMessage());
        assertSame(e, kv.getCause());
        assertTrue(kv.isRetryable());
    }

    @Test
    void futureWrappersAreUnwrapped() {
        FDBException e = new FDBException("Transaction may or may not have committed", 1021);
        KvException viaJoin = assertInstanceOf(KvException.class, FdbMapping.map(new CompletionException(e)));
        assertEquals(1021, viaJoin.code());
        assertTrue(viaJoin.maybeCommitted());
        KvException viaGet = assertInstanceOf(KvException.class, FdbMapping.map(new ExecutionException(new CompletionException(e))));
        assertEquals(1021, viaGet.code());
    }

    @Test
    void cancellationIsTransactionCancelled() {
        KvException kv = assertInstanceOf(KvException.class, FdbMapping.map(new CancellationException()));
        assertEquals(KvException.TRANSACTION_CANCELLED, kv.code());
    }

    @Test
    void otherFailuresPassThroughUnchanged() {
        IllegalStateException ise = new IllegalStateException("Cannot access closed object");
        assertSame(ise, FdbMapping.map(ise));
        assertSame(ise, FdbMapping.map(new CompletionException(ise)));
        KvException already = KvException.tooOld();
        assertSame(already, FdbMapping.map(already));
        OutOfMemoryError oom = new OutOfMemoryError("test");
        assertSame(oom, assertThrows(OutOfMemoryError.class, () -> FdbMapping.rethrow(new CompletionException(oom))));
    }

    @Test
    void awaitTimesTheWaitAndCountsConflicts() {
        StoreTimer timer = new StoreTimer();
        assertEquals(7, FdbMapping.await(timer, StoreTimer.Waits.GET, () -> CompletableFuture.completedFuture(7)));
        assertEquals(1, timer.stat(StoreTimer.Waits.GET).count());

        CompletableFuture<Void> conflict = CompletableFuture.failedFuture(new FDBException("conflict", 1020));
        KvException kv = assertThrows(KvException.class, () -> FdbMapping.await(timer, StoreTimer.Waits.COMMIT, () -> conflict));
        assertEquals(1020, kv.code());
        assertEquals(1, timer.stat(StoreTimer.Waits.COMMIT).count(), "a failed wait is still timed");
        assertEquals(1, timer.count(StoreTimer.Counts.CONFLICTS));

        // An fdb call that fails before returning its future is mapped the same way.
        KvException sync = assertThrows(KvException.class, () -> FdbMapping.await(timer, StoreTimer.Waits.GET, () -> {
            throw new FDBException("Transaction is too old to perform reads or be committed", 1007);
        }));
        assertEquals(1007, sync.code());
        assertEquals(1, timer.count(StoreTimer.Counts.TOO_OLD));
    }
}

package dev.chaise.kv.fdb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeySelector;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Versionstamps;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The wrapper's own behaviour, against a recording stand-in for fdb-java's transaction. */
class FdbTransactionTest {
    private final FakeFdbTransaction fake = new FakeFdbTransaction();
    private final StoreTimer timer = new StoreTimer();
    private final FdbTransaction tx = new FdbTransaction(fake.transaction(), timer);

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private void assertCode(int code, Runnable op) {
        KvException e = assertThrows(KvException.class, op::run);
        assertEquals(code, e.code(), e.getMessage());
    }

    /** FDB's NEXT_WRITE_NO_WRITE_CONFLICT_RANGE (option 30) is set right before the write it is for, so an empty setAll uses it up. */
    @Test
    void theNoWriteConflictOptionReachesFdbWithTheWriteItIsFor() {
        fake.calls.clear();
        tx.nextWriteNoWriteConflictRange();
        assertEquals(List.of(), fake.calls, "nothing set on fdb's transaction yet");
        tx.setAll(List.of());
        tx.set(b("k"), b("v"));
        assertEquals(List.of("set(k, v)"), fake.calls, "the empty setAll used the option up");
        fake.calls.clear();
        tx.nextWriteNoWriteConflictRange();
        tx.setAll(List.of(new KeyValue(b("a"), b("1")), new KeyValue(b("b"), b("2"))));
        tx.clear(b("c"));
        assertEquals(List.of("options()", "option(30)", "set(a, 1)", "options()", "option(30)", "set(b, 2)", "clear(c)"), fake.calls);
    }

    /** Under a directory's prefix: every key fdb sees is prefixed, every key the seam gets back is not. */
    @Test
    void everyKeyGoesUnderTheStoresPrefix() {
        FakeFdbTransaction f = new FakeFdbTransaction();
        FdbTransaction ptx = new FdbTransaction(f.transaction(), timer, new KeyPrefix(b("P")));
        f.calls.clear(); // the wrapper takes fdb's snapshot view up front
        ptx.set(b("k"), b("v"));
        ptx.clear(b("c"));
        ptx.clear(b("a"), b("b"));
        ptx.mutate(MutationType.ADD, b("n"), new byte[] {1});
        ptx.setVersionstampedValue(b("vv"), Versionstamps.packWithVersionstamp(new byte[0], Tuple.from(Versionstamp.incomplete(0))));
        ptx.addReadConflictRange(b("r"), b("s"));
        ptx.addWriteConflictRange(b("w"), b("x"));
        ptx.watch(b("watched"));
        ptx.get(b("g"));
        assertEquals(List.of("set(Pk, v)", "clear(Pc)", "clear(Pa, Pb)", "mutate(ADD, Pn, \\x01)"), f.calls.subList(0, 4));
        assertTrue(f.calls.get(4).startsWith("mutate(SET_VERSIONSTAMPED_VALUE, Pvv, "), f.calls.get(4));
        assertEquals(List.of("addReadConflictRange(Pr, Ps)", "addWriteConflictRange(Pw, Px)", "watch(Pwatched)", "get(Pg)"), f.calls.subList(5, 9));

        byte[] operand = Versionstamps.packWithVersionstamp(b("ch/"), Tuple.from(Versionstamp.incomplete(0)));
        f.calls.clear();
        ptx.setVersionstampedKey(operand, b("v"));
        assertEquals("mutate(SET_VERSIONSTAMPED_KEY, " + dev.chaise.kv.Keys.printable(new KeyPrefix(b("P")).addToVersionstampedKey(operand)) + ", v)",
                f.calls.get(0));

        f.rangeRows = List.of(new com.apple.foundationdb.KeyValue(b("Pa1"), b("1")), new com.apple.foundationdb.KeyValue(b("Pa2"), b("2")));
        f.calls.clear();
        List<KeyValue> rows = ptx.getRangeAsList(b("a"), b("b"), 0, false);
        assertEquals(List.of("getRange(Pa, Pb, 0, false, ITERATOR)"), f.calls);
        assertEquals(List.of("a1", "a2"), rows.stream().map(kv -> new String(kv.key(), StandardCharsets.ISO_8859_1)).toList());
        List<List<KeyValue>> many = ptx.getRanges(List.<byte[][]>of(new byte[][] {b("a"), b("b")}), 0, false);
        assertEquals("a1", new String(many.get(0).get(0).key(), StandardCharsets.ISO_8859_1));
        // The fake resolves a selector to its own key: under the prefix, stripped back.
        assertArrayEquals(b("s"), ptx.getKey(KeySelector.firstGreaterOrEqual(b("s"))));
        assertCode(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> ptx.getRange(b("a"), b("\u00ff\u0000"), 0, false));
    }

    @Test
    void limitsAreCheckedBeforeFdbSeesTheWrite() {
        byte[] bigKey = new byte[KvLimits.MAX_KEY_BYTES + 1];
        byte[] bigValue = new byte[KvLimits.MAX_VALUE_BYTES + 1];
        fake.calls.clear();
        assertCode(KvException.KEY_TOO_LARGE, () -> tx.set(bigKey, b("v")));
        assertCode(KvException.VALUE_TOO_LARGE, () -> tx.set(b("k"), bigValue));
        assertCode(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.set(b("\u00ffk"), b("v")));
        assertCode(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.clear(b("\u00ff")));
        assertCode(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.clear(b("a"), b("\u00ff\u0000")));
        assertCode(KvException.INVERTED_RANGE, () -> tx.clear(b("b"), b("a")));
        assertCode(KvException.KEY_TOO_LARGE, () -> tx.mutate(MutationType.ADD, bigKey, new byte[8]));
        assertCode(KvException.VALUE_TOO_LARGE, () -> tx.mutate(MutationType.APPEND_IF_FITS, b("k"), bigValue));
        assertCode(KvException.INVERTED_RANGE, () -> tx.addReadConflictRange(b("b"), b("a")));
        assertCode(KvException.INVERTED_RANGE, () -> tx.addWriteConflictRange(b("b"), b("a")));
        assertCode(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.watch(b("\u00ffw")));
        assertEquals(List.of(), fake.calls, "nothing reached fdb");
    }

    @Test
    void writesPassThroughWithFdbsMutationTypes() {
        tx.set(b("k"), b("v"));
        tx.clear(b("k"));
        tx.clear(b(""), b("\u00ff"));
        tx.mutate(MutationType.ADD, b("n"), new byte[] {1, 0, 0, 0});
        tx.mutate(MutationType.BIT_XOR, b("x"), new byte[] {3});
        tx.addReadConflictKey(b("r"));
        tx.addWriteConflictRange(b("a"), b("b"));
        assertEquals(List.of(
                "snapshot()",
                "set(k, v)",
                "clear(k)",
                "clear(, \\xff)",
                "mutate(ADD, n, \\x01\\x00\\x00\\x00)",
                "mutate(BIT_XOR, x, \\x03)",
                "addReadConflictRange(r, r\\x00)",
                "addWriteConflictRange(a, b)"), fake.calls);
    }

    @Test
    void versionstampedOperandsPassThroughUnchanged() {
        byte[] key = Versionstamps.packWithVersionstamp(b("p"), Tuple.from("doc", Versionstamp.incomplete(7)));
        byte[] value = Versionstamps.packWithVersionstamp(new byte[0], Tuple.from(Versionstamp.incomplete(0)));
        fake.calls.clear();
        tx.setVersionstampedKey(key, b("v"));
        tx.setVersionstampedValue(b("k"), value);
        assertEquals("mutate(SET_VERSIONSTAMPED_KEY, " + dev.chaise.kv.Keys.printable(key) + ", v)", fake.calls.get(0));
        assertEquals("mutate(SET_VERSIONSTAMPED_VALUE, k, " + dev.chaise.kv.Keys.printable(value) + ")", fake.calls.get(1));
        // A bad offset fails here, as on the embedded engine, not at commit.
        assertCode(KvException.CLIENT_INVALID_OPERATION, () -> tx.setVersionstampedKey(new byte[] {1, 2, 3, 4, 99, 0, 0, 0}, b("v")));
        assertCode(KvException.KEY_OUTSIDE_LEGAL_RANGE, () -> tx.setVersionstampedValue(b("\u00ff"), value));
    }

    @Test
    void readsAreTimedAndSnapshotReadsGoToTheSnapshotView() {
        fake.values.put("k", CompletableFuture.completedFuture(b("v")));
        assertArrayEquals(b("v"), tx.get(b("k")));
        assertNull(tx.snapshot().get(b("other")));
        assertEquals(42, tx.getReadVersion());
        assertArrayEquals(b("a"), tx.getKey(KeySelector.firstGreaterOrEqual(b("a"))));
        assertTrue(fake.calls.contains("get(k)"));
        assertTrue(fake.calls.contains("snapshot.get(other)"));
        assertEquals(2, timer.stat(StoreTimer.Waits.GET).count());
        assertEquals(1, timer.stat(StoreTimer.Waits.GET_READ_VERSION).count());
        assertEquals(1, timer.stat(StoreTimer.Waits.GET_KEY).count());
    }

    @Test
    void readErrorsBecomeKvExceptions() {
        fake.values.put("old", CompletableFuture.failedFuture(new FDBException("Transaction is too old to perform reads or be committed", 1007)));
        assertCode(KvException.TRANSACTION_TOO_OLD, () -> tx.get(b("old")));
        assertEquals(1, timer.count(StoreTimer.Counts.TOO_OLD));
    }

    @Test
    void rangeReadsStreamInIteratorModeAndTimeTheirWaits() throws Exception {
        fake.rangeRows = List.of(new com.apple.foundationdb.KeyValue(b("a"), b("1")), new com.apple.foundationdb.KeyValue(b("b"), b("2")));
        fake.firstBatch = new CompletableFuture<>();
        // Complete the batch only once this thread is blocked on it, 50 ms later: the timed wait must
        // then contain the whole sleep, however loaded the machine (a fixed delay raced the reader).
        Thread reader = Thread.currentThread();
        Thread.ofVirtual().start(() -> {
            try {
                while (reader.getState() != Thread.State.WAITING && reader.getState() != Thread.State.TIMED_WAITING) Thread.sleep(1);
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            fake.firstBatch.complete(true);
        });
        List<KeyValue> rows = tx.getRangeAsList(b("a"), b("z"), 0, true);
        assertEquals(2, rows.size());
        assertArrayEquals(b("b"), rows.get(1).key());
        assertTrue(fake.calls.contains("getRange(a, z, 0, true, ITERATOR)"), fake.calls.toString());
        StoreTimer.Stat rangeRead = timer.stat(StoreTimer.Waits.RANGE_READ);
        assertEquals(1, rangeRead.count(), "one event per range read");
        assertTrue(rangeRead.totalNanos() >= TimeUnit.MILLISECONDS.toNanos(50), "the blocked batch was timed: " + rangeRead);
    }

    @Test
    void closingTheTransactionClosesItsIterators() {
        fake.rangeRows = List.of(new com.apple.foundationdb.KeyValue(b("a"), b("1")));
        RangeIterator it = tx.snapshot().getRange(b("a"), b("z"), 5, false);
        assertTrue(fake.calls.contains("snapshot.getRange(a, z, 5, false, ITERATOR)"), fake.calls.toString());
        tx.close();
        assertTrue(fake.rangeCancelled);
        assertFalse(it.hasNext());
        assertTrue(fake.calls.contains("close()"));
        assertCode(KvException.CLIENT_INVALID_OPERATION, () -> tx.get(b("a")));
    }

    @Test
    void versionstampIsRequestedBeforeCommitAndReadAfter() {
        byte[] vs = Versionstamps.txVersionstamp(1234, 1);
        fake.versionstampResult = CompletableFuture.completedFuture(vs);
        fake.committedVersion = 1234;
        assertCode(dev.chaise.kv.KvException.NO_COMMIT_VERSION, tx::getVersionstamp);
        tx.set(b("k"), b("v"));
        tx.commit();
        int requested = fake.calls.indexOf("getVersionstamp()");
        assertTrue(requested >= 0 && requested < fake.calls.indexOf("commit()"), fake.calls.toString());
        tx.close();
        assertArrayEquals(vs, tx.getVersionstamp(), "still there after close");
        assertEquals(1234, tx.getCommittedVersion());
        assertEquals(1, timer.stat(StoreTimer.Waits.COMMIT).count());
        assertEquals(1, timer.count(StoreTimer.Counts.COMMITS));
    }

    @Test
    void readOnlyCommitIsCountedAndItsVersionstampFailsAsOnFdb() {
        fake.versionstampResult = CompletableFuture.failedFuture(
                new FDBException("Transaction is read-only and therefore does not have a commit version", 2021));
        tx.commit();
        assertEquals(1, timer.count(StoreTimer.Counts.READ_ONLY_COMMITS));
        assertEquals(-1, tx.getCommittedVersion());
        assertCode(2021, tx::getVersionstamp);
    }

    @Test
    void commitFailuresKeepFdbsCode() {
        fake.commitResult = CompletableFuture.failedFuture(new CompletionException(
                new FDBException("Transaction may or may not have committed", 1021)));
        KvException e = assertThrows(KvException.class, tx::commit);
        assertEquals(1021, e.code());
        assertTrue(e.maybeCommitted());
        assertEquals(1, timer.count(StoreTimer.Counts.COMMIT_UNKNOWN));
        assertCode(dev.chaise.kv.KvException.NO_COMMIT_VERSION, tx::getVersionstamp);
        assertEquals(-1, tx.getCommittedVersion());
    }

    @Test
    void synchronousFdbErrorsAreMapped() {
        fake.syncFailure = new FDBException("Operation issued while a commit was outstanding", 2017);
        assertCode(KvException.USED_DURING_COMMIT, () -> tx.set(b("k"), b("v")));
        assertCode(KvException.USED_DURING_COMMIT, () -> tx.addReadConflictRange(b("a"), b("b")));
    }

    @Test
    void watchFailuresAreMappedAndCancellationReachesFdb() throws Exception {
        CompletableFuture<Void> w = tx.watch(b("w"));
        fake.watchResult.completeExceptionally(new FDBException("Operation aborted because the transaction was cancelled", 1025));
        ExecutionException e = assertThrows(ExecutionException.class, () -> w.get(5, TimeUnit.SECONDS));
        assertEquals(KvException.TRANSACTION_CANCELLED, assertInstanceOf(KvException.class, e.getCause()).code());

        FakeFdbTransaction fake2 = new FakeFdbTransaction();
        FdbTransaction tx2 = new FdbTransaction(fake2.transaction(), timer);
        CompletableFuture<Void> w2 = tx2.watch(b("w"));
        w2.cancel(true);
        assertTrue(fake2.watchResult.isCancelled());
    }

    @Test
    void approximateSizeIsFdbs() {
        assertEquals(123, tx.getApproximateSize());
        assertEquals(1, timer.stat(FdbWaits.APPROXIMATE_SIZE).count());
    }
}

package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;

/**
 * The commit path: one thread that plays FDB's sequencer, resolver and log at once. It takes
 * every queued commit as one batch, gives the batch one commit version, checks each
 * transaction's read-conflict ranges against writes committed after its read version (and
 * against earlier transactions of the same batch), assigns versionstamps in batch order, applies
 * atomic mutations to the latest values, and writes the accepted transactions as one RocksDB
 * WriteBatch: one fsync a batch (group commit). A commit is acknowledged only after that write.
 */
final class Sequencer implements AutoCloseable {
    /** Versionstamps give two bytes to the order within a batch. */
    static final int MAX_BATCH = 4096;
    private static final byte[] TOMBSTONE = new byte[0];

    record Request(long readVersion, List<byte[][]> readConflicts, List<byte[][]> writeConflicts, WriteBuffer writes,
                   CompletableFuture<Result> done) {
        Request(long readVersion, List<byte[][]> readConflicts, List<byte[][]> writeConflicts, WriteBuffer writes) {
            this(readVersion, readConflicts, writeConflicts, writes, new CompletableFuture<>());
        }
    }

    record Result(long version, int order) {}

    private enum Fault { NONE, NOT_COMMITTED, TOO_OLD, UNKNOWN_NOT_COMMITTED, UNKNOWN_COMMITTED }

    private final EmbeddedKvStore store;
    private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final ConflictHistory history = new ConflictHistory();
    private final FaultInjection faults;
    private final Random random;
    private final Thread thread;
    private volatile boolean running = true;

    Sequencer(EmbeddedKvStore store, FaultInjection faults) {
        this.store = store;
        this.faults = faults;
        this.random = new Random(faults.seed());
        this.thread = Thread.ofPlatform().name("chaise-sequencer").daemon().start(this::loop);
    }

    /** Queues the request and blocks until it is durable or refused. */
    Result commit(Request r) {
        if (!running) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
        queue.add(r);
        try {
            return store.timer().time(StoreTimer.Waits.COMMIT, r.done()::join);
        } catch (CompletionException e) {
            if (e.getCause() instanceof KvException k) throw k;
            throw e;
        }
    }

    private void loop() {
        List<Request> batch = new ArrayList<>();
        while (running) {
            try {
                Request first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) continue;
                batch.add(first);
                queue.drainTo(batch, MAX_BATCH - 1);
                process(batch);
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException | Error e) {
                for (Request r : batch) r.done().completeExceptionally(new KvException(KvException.INTERNAL_ERROR, "internal_error: " + e, e));
            } finally {
                batch.clear();
            }
        }
        Request r;
        while ((r = queue.poll()) != null) {
            r.done().completeExceptionally(new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed"));
        }
    }

    private void process(List<Request> batch) {
        long version = store.beginBatch();
        long oldestReadable = store.timeVersion() - KvLimits.MVCC_WINDOW_VERSIONS;
        history.expire(oldestReadable);
        Overlay overlay = new Overlay();
        List<Request> accepted = new ArrayList<>();
        List<Fault> acceptedFaults = new ArrayList<>();
        List<byte[]> touchedKeys = new ArrayList<>();
        List<byte[][]> touchedRanges = new ArrayList<>();
        boolean wrote = false;
        try (WriteBatch wb = new WriteBatch()) {
            for (Request r : batch) {
                Fault fault = drawFault();
                if (fault == Fault.NOT_COMMITTED || fault == Fault.TOO_OLD || fault == Fault.UNKNOWN_NOT_COMMITTED) {
                    fail(r, fault);
                    continue;
                }
                if (r.readVersion() < oldestReadable && !r.readConflicts().isEmpty()) { // as FDB's resolver: a blind write has nothing to validate
                    store.timer().increment(StoreTimer.Counts.TOO_OLD);
                    r.done().completeExceptionally(KvException.tooOld());
                    continue;
                }
                if (conflicts(r)) {
                    store.timer().increment(StoreTimer.Counts.CONFLICTS);
                    r.done().completeExceptionally(KvException.notCommitted());
                    continue;
                }
                byte[] stamp = Versionstamps.txVersionstamp(version, accepted.size());
                for (byte[][] w : apply(r.writes(), wb, overlay, stamp, touchedKeys, touchedRanges)) {
                    history.recordWrite(w[0], w[1], version);
                }
                for (byte[][] w : r.writeConflicts()) history.recordWrite(w[0], w[1], version);
                accepted.add(r);
                acceptedFaults.add(fault);
            }
            if (!accepted.isEmpty()) {
                wb.put(store.metaCf(), EmbeddedKvStore.VERSION_KEY, Versionstamps.txVersionstamp(version, 0));
                store.db().write(store.writeOptions(), wb);
                wrote = true;
            }
        } catch (RocksDBException e) {
            for (Request r : accepted) r.done().completeExceptionally(new KvException(KvException.IO_ERROR, "io_error: " + e.getMessage(), e));
            accepted.clear();
        } finally {
            store.endBatch(version, wrote);
        }
        if (wrote) store.watches().touched(touchedKeys, touchedRanges); // before any commit returns, or a watch armed after it would fire
        for (int i = 0; i < accepted.size(); i++) {
            Request r = accepted.get(i);
            if (acceptedFaults.get(i) == Fault.UNKNOWN_COMMITTED) fail(r, Fault.UNKNOWN_COMMITTED);
            else r.done().complete(new Result(version, i));
        }
    }

    private boolean conflicts(Request r) {
        for (byte[][] rc : r.readConflicts()) {
            if (history.conflicts(rc[0], rc[1], r.readVersion())) return true;
        }
        return false;
    }

    /** Adds the transaction's writes to the batch; returns the ranges it wrote. */
    private List<byte[][]> apply(WriteBuffer w, WriteBatch wb, Overlay overlay, byte[] stamp,
                                 List<byte[]> touchedKeys, List<byte[][]> touchedRanges) throws RocksDBException {
        List<byte[][]> written = new ArrayList<>();
        for (Map.Entry<byte[], byte[]> c : w.cleared.entrySet()) {
            wb.deleteRange(store.dataCf(), c.getKey(), c.getValue());
            overlay.clear(c.getKey(), c.getValue());
            written.add(new byte[][] {c.getKey(), c.getValue()});
            touchedRanges.add(new byte[][] {c.getKey(), c.getValue()});
        }
        for (Map.Entry<byte[], WriteBuffer.Op> e : w.points.entrySet()) {
            byte[] key = e.getKey();
            byte[] value = switch (e.getValue()) {
                case WriteBuffer.SetOp s -> s.value();
                case WriteBuffer.ClearOp c -> null;
                case WriteBuffer.AtomicOp a -> a.applyTo(overlay.current(key));
            };
            put(wb, overlay, key, value);
            written.add(new byte[][] {key, Keys.keyAfter(key)});
            touchedKeys.add(key);
        }
        for (WriteBuffer.VersionstampedWrite v : w.versionstamped) {
            byte[] key = v.stampInKey() ? Versionstamps.fill(v.key(), stamp) : v.key();
            byte[] value = v.stampInKey() ? v.value() : Versionstamps.fill(v.value(), stamp);
            put(wb, overlay, key, value);
            written.add(new byte[][] {key, Keys.keyAfter(key)});
            touchedKeys.add(key);
        }
        return written;
    }

    private void put(WriteBatch wb, Overlay overlay, byte[] key, byte[] valueOrNull) throws RocksDBException {
        if (valueOrNull == null) wb.delete(store.dataCf(), key);
        else wb.put(store.dataCf(), key, valueOrNull);
        overlay.values.put(key, valueOrNull == null ? TOMBSTONE : valueOrNull);
    }

    private Fault drawFault() {
        if (!faults.enabled()) return Fault.NONE;
        double x = random.nextDouble();
        if (x < faults.notCommitted()) return Fault.NOT_COMMITTED;
        x -= faults.notCommitted();
        if (x < faults.tooOld()) return Fault.TOO_OLD;
        x -= faults.tooOld();
        if (x < faults.commitUnknown()) return random.nextDouble() < faults.unknownButCommitted() ? Fault.UNKNOWN_COMMITTED : Fault.UNKNOWN_NOT_COMMITTED;
        return Fault.NONE;
    }

    private void fail(Request r, Fault fault) {
        store.timer().increment(StoreTimer.Counts.INJECTED_FAULTS);
        r.done().completeExceptionally(switch (fault) {
            case NOT_COMMITTED -> KvException.notCommitted();
            case TOO_OLD -> KvException.tooOld();
            default -> KvException.commitUnknown();
        });
    }

    /** The batch's own writes, so atomic mutations see earlier transactions of the same batch. */
    private final class Overlay {
        final TreeMap<byte[], byte[]> values = new TreeMap<>(Keys::compare);
        final List<byte[][]> cleared = new ArrayList<>();

        void clear(byte[] begin, byte[] end) {
            values.subMap(begin, true, end, false).clear();
            cleared.add(new byte[][] {begin, end});
        }

        byte[] current(byte[] key) throws RocksDBException {
            byte[] v = values.get(key);
            if (v != null) return v == TOMBSTONE ? null : v;
            for (byte[][] c : cleared) {
                if (Keys.compare(key, c[0]) >= 0 && Keys.compare(key, c[1]) < 0) return null;
            }
            return store.db().get(store.dataCf(), key);
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

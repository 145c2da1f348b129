package dev.chaise.kv.embedded;

import dev.chaise.kv.KvException;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.rocksdb.RocksDBException;
import org.rocksdb.Snapshot;
import org.rocksdb.WriteBatch;

/**
 * The commit path, in two pipelined stages as in FDB. The resolver thread takes every queued
 * commit as one batch, gives the batch one commit version, checks each transaction's
 * read-conflict ranges against writes committed after its read version (and against earlier
 * transactions of the same batch), assigns versionstamps in batch order, applies atomic
 * mutations to the latest values, and writes each accepted transaction to RocksDB unsynced, as
 * one WriteBatch. So RocksDB itself holds the latest value of every key for the next atomic
 * mutation, and nothing keeps a second copy of the writes. Readers cannot see those writes yet:
 * they read through snapshots, and the batch's snapshot (taken right after its last write) is
 * published only once the batch is durable. The log thread takes every batch resolved so far,
 * makes the group durable with one WAL fsync (group commit), publishes the newest snapshot as
 * the read version, and only then acknowledges. Resolution never waits for the disk, and each
 * fsync carries what arrived during the last one.
 */
final class Sequencer implements AutoCloseable {
    /** Versionstamps give two bytes to the order within a batch. */
    static final int MAX_BATCH = 4096;
    static final int MAX_UNLOGGED_BATCHES = 256;

    record Request(long readVersion, List<byte[][]> readConflicts, List<byte[][]> writeConflicts, WriteBuffer writes,
                   Encoded encoded, CompletableFuture<Result> done) {}

    /**
     * The part of a transaction's WriteBatch that does not depend on the commit: cleared ranges,
     * sets and clears. It is encoded on the committing thread, so the single resolver thread only
     * appends what needs the commit's moment (atomic operations, versionstamps).
     */
    record Encoded(WriteBatchEncoder batch, List<byte[]> touchedKeys, List<byte[][]> touchedRanges,
                   List<Map.Entry<byte[], WriteBuffer.AtomicOp>> atomics) {}

    record Result(long version, int order) {}

    private enum Fault { NONE, NOT_COMMITTED, TOO_OLD, UNKNOWN_NOT_COMMITTED, UNKNOWN_COMMITTED }

    private final EmbeddedKvStore store;
    private final int dataCfId;
    private final int metaCfId;
    private final LinkedBlockingQueue<Request> queue = new LinkedBlockingQueue<>();
    private final ConflictHistory history = new ConflictHistory();
    private final FaultInjection faults;
    private final Random random;
    /** Resolved batches waiting for the log thread. */
    private final LinkedBlockingQueue<Resolved> toLog = new LinkedBlockingQueue<>();
    /** Resolved but not yet durable batches, bounded so a stalled disk stops resolution. */
    private final Semaphore slots = new Semaphore(MAX_UNLOGGED_BATCHES);
    /** Batches are logged in resolution order; whoever holds this lock logs the next one. */
    private final ReentrantLock logLock = new ReentrantLock();
    private long resolvedSeq;
    private volatile long nextToLog;
    private final Thread resolver;
    private final Thread logger;
    private volatile boolean running = true;
    private volatile boolean resolverDone;

    /** A batch written to RocksDB but not yet durable; {@code snapshot} sees exactly the batches up to this one. */
    private record Resolved(long seq, long version, Snapshot snapshot, List<Request> accepted, List<Fault> faults,
                            List<byte[]> touchedKeys, List<byte[][]> touchedRanges) {}

    Sequencer(EmbeddedKvStore store, FaultInjection faults) {
        this.store = store;
        this.dataCfId = store.dataCf().getID();
        this.metaCfId = store.metaCf().getID();
        this.faults = faults;
        this.random = new Random(faults.seed());
        this.resolver = Thread.ofPlatform().name("chaise-resolver").daemon().start(this::resolveLoop);
        this.logger = Thread.ofPlatform().name("chaise-log").daemon().start(this::logLoop);
    }

    /** Queues a transaction's commit and blocks until it is durable or refused. */
    Result commit(long readVersion, List<byte[][]> readConflicts, List<byte[][]> writeConflicts, WriteBuffer writes) {
        if (!running) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
        Request r = new Request(readVersion, readConflicts, writeConflicts, writes, encode(writes), new CompletableFuture<>());
        queue.add(r);
        try {
            return store.timer().time(StoreTimer.Waits.COMMIT, r.done()::join);
        } catch (CompletionException e) {
            if (e.getCause() instanceof KvException k) throw k;
            throw e;
        }
    }

    private void resolveLoop() {
        List<Request> batch = new ArrayList<>();
        try {
            while (running) {
                try {
                    if (!slots.tryAcquire(100, TimeUnit.MILLISECONDS)) continue;
                    Request first = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (first == null) {
                        slots.release();
                        continue;
                    }
                    batch.add(first);
                    queue.drainTo(batch, MAX_BATCH - 1);
                    Resolved b = resolve(batch);
                    if (b == null) {
                        slots.release();
                    } else if (queue.isEmpty() && toLog.isEmpty() && b.seq() == nextToLog && logLock.tryLock()) {
                        // Nothing else waits and the log stage is idle: skip the hand-off. With
                        // commits waiting, hand off, so the next batch resolves during this fsync.
                        try {
                            log(List.of(b));
                        } finally {
                            logLock.unlock();
                        }
                    } else {
                        toLog.put(b);
                    }
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
        } finally {
            resolverDone = true;
        }
    }

    private void logLoop() {
        while (true) {
            Resolved b;
            try {
                b = toLog.poll(100, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (b == null) {
                if (resolverDone && toLog.isEmpty()) return;
                continue;
            }
            List<Resolved> group = new ArrayList<>();
            group.add(b);
            toLog.drainTo(group);
            logLock.lock();
            try {
                log(group);
            } finally {
                logLock.unlock();
            }
        }
    }

    /** Makes a group of written batches durable with one fsync, publishes the newest snapshot, then acknowledges. */
    private void log(List<Resolved> group) {
        boolean durable = false;
        Exception failure = null;
        try {
            store.syncLog();
            durable = true;
            store.timer().increment(StoreTimer.Counts.COMMIT_BATCHES);
        } catch (RocksDBException | RuntimeException e) {
            failure = e;
        } finally {
            for (int i = 0; i < group.size(); i++) {
                Resolved b = group.get(i);
                boolean publish = durable && i == group.size() - 1; // one snapshot for the group
                store.endBatch(b.version(), publish ? b.snapshot() : null);
                if (!publish) store.releaseSnapshot(b.snapshot());
            }
            nextToLog = group.getLast().seq() + 1;
            slots.release(group.size());
        }
        for (Resolved b : group) {
            if (!durable) {
                // Written but not synced may or may not survive a crash: that is 1021's meaning.
                KvException e = new KvException(KvException.COMMIT_UNKNOWN_RESULT, "commit_unknown_result: " + failure.getMessage(), failure);
                for (Request r : b.accepted()) r.done().completeExceptionally(e);
                continue;
            }
            store.watches().touched(b.touchedKeys(), b.touchedRanges()); // before any commit returns, or a watch armed after it would fire
        }
        if (!durable) return;
        for (Resolved b : group) {
            for (int i = 0; i < b.accepted().size(); i++) {
                Request r = b.accepted().get(i);
                if (b.faults().get(i) == Fault.UNKNOWN_COMMITTED) fail(r, Fault.UNKNOWN_COMMITTED);
                else r.done().complete(new Result(b.version(), i));
            }
        }
    }

    /** Resolves a batch and writes what it accepted (unsynced); null if it accepted nothing. */
    private Resolved resolve(List<Request> batch) {
        long version = store.beginBatch();
        long oldestReadable = store.timeVersion() - KvLimits.MVCC_WINDOW_VERSIONS;
        history.expire(oldestReadable);
        List<Request> accepted = new ArrayList<>();
        List<Fault> acceptedFaults = new ArrayList<>();
        List<byte[]> touchedKeys = new ArrayList<>();
        List<byte[][]> touchedRanges = new ArrayList<>();
        int next = 0;
        try {
            for (; next < batch.size(); next++) {
                Request r = batch.get(next);
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
                Encoded encoded = r.encoded();
                WriteBatchEncoder enc = encoded.batch();
                touchedKeys.addAll(encoded.touchedKeys());
                touchedRanges.addAll(encoded.touchedRanges());
                apply(r.writes(), encoded, stamp, version, touchedKeys);
                if (accepted.isEmpty()) enc.put(metaCfId, EmbeddedKvStore.VERSION_KEY, Versionstamps.txVersionstamp(version, 0));
                try (WriteBatch wb = enc.toWriteBatch()) {
                    store.db().write(store.writeOptions(), wb); // atomic per transaction, as the WAL replays it
                }
                for (byte[][] w : r.writeConflicts()) history.recordWrite(w[0], w[1], version);
                accepted.add(r);
                acceptedFaults.add(fault);
            }
        } catch (RocksDBException | RuntimeException e) {
            // Those written may reach the disk with a later fsync; the rest never will.
            KvException unknown = new KvException(KvException.COMMIT_UNKNOWN_RESULT, "commit_unknown_result: " + e, e);
            for (Request r : accepted) r.done().completeExceptionally(unknown);
            for (int i = next; i < batch.size(); i++) {
                batch.get(i).done().completeExceptionally(new KvException(KvException.INTERNAL_ERROR, "internal_error: " + e, e));
            }
            store.endBatch(version, null);
            return null;
        }
        if (accepted.isEmpty()) {
            store.endBatch(version, null);
            return null;
        }
        return new Resolved(resolvedSeq++, version, store.db().getSnapshot(), accepted, acceptedFaults, touchedKeys, touchedRanges);
    }

    private boolean conflicts(Request r) {
        for (byte[][] rc : r.readConflicts()) {
            if (history.conflicts(rc[0], rc[1], r.readVersion())) return true;
        }
        return false;
    }

    /** Encodes what does not depend on the commit; on the committing thread. */
    private Encoded encode(WriteBuffer w) {
        int runKeys = 0;
        for (WriteBuffer.Run run : w.runs.values()) runKeys += run.keys().length;
        WriteBatchEncoder wb = new WriteBatchEncoder(64 * (w.points.size() + runKeys + w.versionstamped.size() + w.cleared.size()));
        List<byte[]> keys = new ArrayList<>(w.points.size() + runKeys + w.versionstamped.size());
        List<byte[][]> ranges = new ArrayList<>(w.cleared.size());
        List<Map.Entry<byte[], WriteBuffer.AtomicOp>> atomics = new ArrayList<>(2);
        for (Map.Entry<byte[], byte[]> c : w.cleared.entrySet()) {
            wb.deleteRange(dataCfId, c.getKey(), c.getValue());
            ranges.add(new byte[][] {c.getKey(), c.getValue()});
        }
        // Cleared ranges come first: a point write after a clear in the transaction survives it.
        for (Map.Entry<byte[], WriteBuffer.Op> e : w.points.entrySet()) {
            switch (e.getValue()) {
                case WriteBuffer.SetOp s -> put(wb, e.getKey(), s.value());
                case WriteBuffer.ClearOp c -> put(wb, e.getKey(), null);
                case WriteBuffer.AtomicOp a -> atomics.add(Map.entry(e.getKey(), a));
            }
            keys.add(e.getKey());
        }
        for (WriteBuffer.Run run : w.runs.values()) { // no cleared range or point lies in a run's span
            for (int i = 0; i < run.keys().length; i++) {
                wb.put(dataCfId, run.keys()[i], run.values()[i]);
                keys.add(run.keys()[i]);
            }
        }
        return new Encoded(wb, keys, ranges, atomics);
    }

    /**
     * Adds what needs the commit's moment: atomic operations on the latest values (every
     * transaction resolved before this one is already in RocksDB), and versionstamped writes.
     * Their write-conflict ranges come separately (the transaction's list, as in FDB), except for
     * stamped keys, known only here.
     */
    private void apply(WriteBuffer w, Encoded encoded, byte[] stamp, long version, List<byte[]> touchedKeys) throws RocksDBException {
        WriteBatchEncoder wb = encoded.batch();
        for (Map.Entry<byte[], WriteBuffer.AtomicOp> a : encoded.atomics()) {
            put(wb, a.getKey(), a.getValue().applyTo(store.db().get(store.dataCf(), a.getKey())));
        }
        for (WriteBuffer.VersionstampedWrite v : w.versionstamped) {
            byte[] key = v.stampInKey() ? Versionstamps.fill(v.key(), stamp) : v.key();
            byte[] value = v.stampInKey() ? v.value() : Versionstamps.fill(v.value(), stamp);
            put(wb, key, value);
            if (v.writeConflict()) history.recordPoint(key, version);
            touchedKeys.add(key);
        }
    }

    private void put(WriteBatchEncoder wb, byte[] key, byte[] valueOrNull) {
        if (valueOrNull == null) wb.delete(dataCfId, key);
        else wb.put(dataCfId, key, valueOrNull);
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

    /** Stops taking commits and waits for the resolver and log threads to end. */
    @Override
    public void close() {
        running = false;
        try {
            resolver.join();
            logger.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

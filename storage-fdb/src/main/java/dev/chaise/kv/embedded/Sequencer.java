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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.rocksdb.RocksDBException;
import org.rocksdb.Snapshot;
import org.rocksdb.WriteBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The commit path, modelled on FDB's resolver and log but run by the committers themselves, as
 * RocksDB's write groups are: the first committer to find no leader becomes the leader, takes
 * every queued commit as one batch, gives the batch one commit version, checks each
 * transaction's read-conflict ranges against writes committed after its read version (and
 * against earlier transactions of the same batch), assigns versionstamps in batch order, applies
 * atomic mutations to the latest values, and writes each accepted transaction to RocksDB
 * unsynced, as one WriteBatch. So RocksDB itself holds the latest value of every key for the
 * next atomic mutation, and nothing keeps a second copy of the writes. Readers cannot see those
 * writes yet: they read through snapshots, and the batch's snapshot (taken right after its last
 * write) is published only once the batch is durable. The leader then makes the batch durable
 * with one WAL fsync, publishes the snapshot as the read version, and only then acknowledges.
 * Commits arriving meanwhile queue; the leader hands the lead to the first of them (one wake-up),
 * which takes all that gathered as the next batch (group commit). A lone committer resolves,
 * writes and syncs its own commit with no thread hand-off at all.
 *
 * <p>Big transactions are written on writer threads. A transaction whose WriteBatch reaches
 * {@link #HAND_OFF_BYTES} (a part of a {@code _bulk_docs}: hundreds of documents, thousands
 * of KVs, milliseconds of RocksDB's time) is handed to a writer thread, and the leader goes on:
 * it records the transaction (conflict history, atomics' cache, touched keys), resolves the
 * next, and while such writes are in flight takes in the commits that arrive (a committer that
 * finds the lead taken wakes it), then, once they are done, those queued by then, so that they
 * share the batch's version and fsync. A bulk
 * request's second part queues a fraction of a millisecond after its first took the lead; it
 * used to wait for the first's write and fsync, then pay a hand-off and its own fsync. Why the
 * serial path's guarantees hold:
 * <ul>
 * <li><b>RocksDB applies the batch in its order.</b> The store writes unordered
 * ({@code unordered_write}): RocksDB gives a write its sequence numbers and WAL record in order,
 * then inserts it into the memtable outside its write queue. A big write is issued once the one
 * handed off before it has its sequence numbers (two writer threads take them in turn, the second
 * waiting on the first's), so its memtable insert overlaps the one before; the leader waits for
 * them all before it writes a small one. So RocksDB's WAL and sequence numbers follow the
 * versionstamps, as when the leader wrote each in turn: on a key two transactions write, the
 * later wins (a blind set, a versionstamped value, a clear), and the atomic operations, computed
 * by the leader in the batch's order as the sum so far and written as plain values, come out as a
 * serial execution's. A snapshot taken while an unordered write is in flight could still change;
 * none is: the batch's snapshot is taken once its writes have returned, and nothing else writes.</li>
 * <li><b>A crash keeps a prefix.</b> Recovery replays whole WriteBatches up to the first torn one,
 * and the WAL holds the batch in its order, so what survives of an unsynced batch is a prefix of
 * it, whose first transaction carries {@link EmbeddedKvStore#VERSION_KEY}, as before (a big
 * transaction carries it too, with the same value: its WriteBatch is sized for it).</li>
 * <li><b>Nothing is seen early.</b> The batch's snapshot is taken after every write of the batch
 * returned (the leader waits for its writer threads first), and published and acknowledged only
 * after the batch's one fsync. The leader reads RocksDB's latest value only for an atomic
 * operation on a key {@link LatestAtomics} does not hold, and waits for the batch's writes before
 * it does.</li>
 * <li><b>Conflicts.</b> A transaction handed to a writer thread is in the conflict history and the
 * atomics' cache before the next one resolves, so the next conflicts with it as with any earlier
 * transaction of the batch.</li>
 * <li><b>Failures.</b> A failed write stops the sequencer, as on the serial path: it is 1021, a
 * write of the batch behind it is never issued (1510), and the batch's others get 1021 when it
 * is not logged.</li>
 * </ul>
 * A small transaction is written by the leader itself, so a lone PUT pays no hand-off.
 *
 * <p>Failures. A transaction that fails before its write gets an error and nothing else in its
 * batch is harmed; one that fails after its write stays in the batch and gets 1021 once the
 * batch is durable. A failed RocksDB write or fsync leaves the WAL's content unknown until the
 * next open, so the sequencer stops: what was written gets 1021, every later commit 1510
 * io_error (reads go on). Every request is answered, whatever is thrown, and a committer that
 * waits for a leader waits at most the commit timeout; a leader is bounded by its own disk.
 *
 * <p>A committer waits for its answer without a timer of its own: one thread per store
 * ({@link #watchTimeouts}) answers those that waited past the commit timeout. A virtual thread's
 * timed wait books a timer with the JDK's scheduler thread and cancels it when woken, and both
 * wake that thread: 1.5 context switches a PUT, a fifth of a loaded PUT phase's (docs/benchmarks.md,
 * issue 27, "the commit's timer").
 */
final class Sequencer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Sequencer.class);
    /** Versionstamps give two bytes to the order within a batch. */
    static final int MAX_BATCH = 4096;
    /** A transaction's WriteBatch this big is written on a writer thread while the leader goes on; a small one is not worth the hand-off. */
    static final int HAND_OFF_BYTES = 64 << 10;
    /** A batch takes in arrivals while its writes are in flight until it has handed this much to writer threads. */
    static final long GATHER_BYTES = 4L << 20;
    /** Writer threads a batch's handed-off writes use at once. */
    static final int WRITERS = 2;
    /** How often a write waiting for the one before to have its sequence numbers looks again. */
    private static final long SEQUENCE_POLL_NANOS = 20_000;
    /** Completes a queued request's future to hand it the lead (the lead's permit goes with it). */
    private static final Result LEAD = new Result(-1, -1);

    record Request(long readVersion, List<byte[][]> readConflicts, List<byte[][]> writeConflicts, WriteBuffer writes,
                   Encoded encoded, CompletableFuture<Result> done) {
        // Identity: the queue's remove withdraws exactly this request.
        @Override
        public boolean equals(Object o) {
            return this == o;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(this);
        }

        /** The same commit with a new future: one that was handed the lead leads it in its own batch. */
        Request renewed() {
            return new Request(readVersion, readConflicts, writeConflicts, writes, encoded, new CompletableFuture<>());
        }
    }

    /**
     * The part of a transaction's WriteBatch that does not depend on the commit: cleared ranges,
     * sets and clears. It is encoded on the committing thread before it queues, so the leader only
     * appends what needs the commit's moment (atomic operations, versionstamps).
     */
    record Encoded(WriteBatchEncoder batch, List<byte[]> touchedKeys, List<byte[][]> touchedRanges,
                   List<Map.Entry<byte[], WriteBuffer.Op>> atCommit, boolean carriesVersion) {}

    record Result(long version, int order) {}

    private enum Fault { NONE, NOT_COMMITTED, TOO_OLD, UNKNOWN_NOT_COMMITTED, UNKNOWN_COMMITTED }

    private final EmbeddedKvStore store;
    private final int dataCfId;
    private final int metaCfId;
    private final ConcurrentLinkedQueue<Request> queue = new ConcurrentLinkedQueue<>();
    /**
     * The lead: one permit, held by the committer leading batches. A semaphore, not a lock, so the
     * leader can hand it to the committer it wakes without releasing it in between.
     */
    private final Semaphore lead = new Semaphore(1);
    private final ConflictHistory history = new ConflictHistory();
    private final LatestAtomics latestAtomics = new LatestAtomics();
    private final FaultInjection faults;
    /** Write big transactions' WriteBatches while the leader goes on; platform threads, as a JNI write holds its thread throughout. */
    private final ExecutorService writers = Executors.newCachedThreadPool(Thread.ofPlatform().name("chaise-kv-writer-", 0).daemon().factory());
    /** The leader while it waits for its writer threads and takes in arrivals; committers wake it. */
    private volatile Thread gatherer;
    private final long commitTimeoutNanos;
    /** Committers waiting for an answer, with the {@link System#nanoTime} past which {@link #watchTimeouts} gives them up. */
    private final ConcurrentHashMap<Request, Long> waiting = new ConcurrentHashMap<>();
    private final Thread timeouts;
    private final Random random;
    private volatile boolean running = true;
    /** Why the sequencer stopped taking commits (a failed write or fsync), or null. */
    private volatile String stopped;

    /**
     * A batch written to RocksDB but not yet durable; {@code snapshot} sees exactly the batches up
     * to this one. {@code answers} holds, per accepted request, the error it gets even though it
     * was written (a 1021), or null for success.
     */
    private record Resolved(long version, Snapshot snapshot, List<Request> accepted, List<KvException> answers, List<Touched> touched) {}

    Sequencer(EmbeddedKvStore store, FaultInjection faults, long commitTimeoutNanos) {
        this.store = store;
        this.dataCfId = store.dataCf().getID();
        this.metaCfId = store.metaCf().getID();
        this.faults = faults;
        this.commitTimeoutNanos = commitTimeoutNanos;
        this.random = new Random(faults.seed());
        this.timeouts = Thread.ofPlatform().name("chaise-kv-commit-timeouts").daemon().start(this::watchTimeouts);
    }

    /**
     * Queues a transaction's commit and returns once it is durable or refused: it leads the batch
     * itself if no one leads, else waits for the leader at most the commit timeout.
     */
    Result commit(long readVersion, List<byte[][]> readConflicts, List<byte[][]> writeConflicts, WriteBuffer writes) {
        if (!running) throw closed();
        String why = stopped;
        if (why != null) throw stoppedError(why);
        Request r = new Request(readVersion, readConflicts, writeConflicts, writes, encode(writes), new CompletableFuture<>());
        faults.at(FaultInjection.Point.COMMIT_ENQUEUE);
        queue.add(r);
        // A close between the check above and the add may have drained the queue already.
        if (!running && queue.remove(r)) throw closed();
        // Timed by hand, not through a lambda: C2 compiled the lambda's copy of the commit path
        // only in a restart's first bulk load (a hidden class keeps no profile in the AOT cache).
        long start = System.nanoTime();
        try {
            if (lead.tryAcquire()) {
                lead(null); // r is in the queue: this batch or an earlier leader's answers it
            } else {
                Thread g = gatherer; // a leader waiting for its writers takes r into its batch
                if (g != null) LockSupport.unpark(g);
            }
            return await(r);
        } finally {
            store.timer().record(StoreTimer.Waits.COMMIT, System.nanoTime() - start);
        }
    }

    private Result await(Request r) {
        Result result;
        try {
            if (r.done().isDone()) {
                result = r.done().get(); // led: its own batch answered it
            } else {
                waiting.put(r, System.nanoTime() + commitTimeoutNanos);
                try {
                    result = r.done().get();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    abandon(r, new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: interrupted while committing", e),
                            new KvException(KvException.COMMIT_UNKNOWN_RESULT, "commit_unknown_result: interrupted while committing", e));
                    result = r.done().get(); // completed now: not a wait
                } finally {
                    waiting.remove(r);
                }
            }
            if (result != LEAD) return result;
            Request mine = r.renewed();
            lead(mine);
            return mine.done().get(); // answered by this thread's own batch
        } catch (ExecutionException e) {
            if (e.getCause() instanceof KvException k) throw k;
            throw internal(e.getCause());
        } catch (InterruptedException e) { // not reached: the future was complete
            Thread.currentThread().interrupt();
            throw unknown(e);
        }
    }

    /**
     * Gives up a committer that waited too long or was interrupted: withdrawn with {@code ifQueued}
     * if still queued (certainly not written), else answered {@code ifTaken} (a 1021), unless a
     * leader answered it or handed it the lead first (a leader handing the lead to a request
     * completed here picks another).
     */
    private void abandon(Request r, KvException ifQueued, KvException ifTaken) {
        r.done().completeExceptionally(queue.remove(r) ? ifQueued : ifTaken);
    }

    /**
     * Gives up the committers waiting past the commit timeout, looking every eighth of it (at
     * least every millisecond, at most every second), until {@link #close} has answered every queued one.
     */
    private void watchTimeouts() {
        long period = Math.clamp(commitTimeoutNanos / 8, TimeUnit.MILLISECONDS.toNanos(1), TimeUnit.SECONDS.toNanos(1));
        while (!Thread.currentThread().isInterrupted()) {
            LockSupport.parkNanos(this, period);
            long now = System.nanoTime();
            waiting.forEach((r, deadline) -> {
                if (now - deadline < 0) return;
                long ms = TimeUnit.NANOSECONDS.toMillis(commitTimeoutNanos);
                abandon(r, new KvException(KvException.TRANSACTION_TIMED_OUT, "transaction_timed_out: the commit waited " + ms
                                + " ms for the sequencer and was withdrawn"),
                        new KvException(KvException.COMMIT_UNKNOWN_RESULT, "commit_unknown_result: the sequencer did not answer within "
                                + ms + " ms; the commit may still land"));
            });
        }
    }

    /** Requests waiting for a leader (for tests that force a batch's contents). */
    int queued() {
        return queue.size();
    }

    /** Committers waiting for their answer, as {@link #watchTimeouts} sees them (for tests). */
    int waiting() {
        return waiting.size();
    }

    /** The thread that gives up committers past the commit timeout (for tests: it ends with {@link #close}). */
    Thread timeoutWatcher() {
        return timeouts;
    }

    private static KvException closed() {
        return new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
    }

    private static KvException stoppedError(String why) {
        return new KvException(KvException.IO_ERROR, "io_error: the store stopped taking commits after " + why
                + "; restart the server to recover");
    }

    private static KvException internal(Throwable t) {
        return new KvException(KvException.INTERNAL_ERROR, "internal_error: " + t, t);
    }

    private static KvException unknown(Throwable t) {
        return new KvException(KvException.COMMIT_UNKNOWN_RESULT, "commit_unknown_result: " + t, t);
    }

    /** Stops taking commits: after a failed write or fsync, only the next open knows what the WAL holds. */
    private void stop(String why) {
        if (stopped != null) return;
        stopped = why;
        log.error("The embedded store stopped taking commits after {}. Reads go on; restart the server so that recovery "
                + "settles what the write-ahead log holds.", why);
    }

    /**
     * With the lead's permit: one batch of {@code first} (a request handed the lead, or null) and
     * every queued commit, then the lead goes to the first commit queued meanwhile, or is released.
     */
    private void lead(Request first) {
        List<Request> batch = new ArrayList<>();
        if (first != null) batch.add(first);
        while (true) {
            Request r;
            while (batch.size() < MAX_BATCH && (r = queue.poll()) != null) batch.add(r);
            try {
                if (!batch.isEmpty()) {
                    Resolved b = resolve(batch);
                    if (b != null) log(b);
                }
            } catch (Throwable t) {
                // resolve() and log() answer what they hold; this is for a bug outside them.
                for (Request q : batch) q.done().completeExceptionally(internal(t));
            }
            batch.clear();
            // Hand the lead on without releasing it; one that gave up meanwhile refuses it.
            while ((r = queue.poll()) != null) {
                if (r.done().complete(LEAD)) return;
            }
            lead.release();
            // A commit queued after the poll above and before the release found the lead taken: take it back for it.
            if (queue.isEmpty() || !lead.tryAcquire()) return;
        }
    }

    /**
     * Makes a written batch durable with one fsync, publishes its snapshot, then acknowledges.
     * Answers every request of the batch, whatever is thrown.
     */
    private void log(Resolved b) {
        Throwable failure = null;
        try {
            String why = stopped;
            if (why != null) throw stoppedError(why);
            faults.at(FaultInjection.Point.SYNC);
            store.syncLog();
            store.timer().increment(StoreTimer.Counts.COMMIT_BATCHES);
        } catch (Throwable e) {
            failure = e;
            stop("a failed WAL fsync (" + e + ")");
        }
        try {
            store.endBatch(b.version(), failure == null ? b.snapshot() : null);
            if (failure != null) store.releaseSnapshot(b.snapshot());
        } catch (Throwable t) {
            if (failure == null) failure = t;
            stop("a failure while publishing a batch (" + t + ")");
        }
        answer(b, failure);
    }

    private void answer(Resolved b, Throwable failure) {
        try {
            if (failure == null) {
                // Before any commit returns, or a watch armed after it would fire.
                store.watches().touched(b.touched());
                faults.at(FaultInjection.Point.ACKNOWLEDGE);
            }
            // Written but not durable may or may not survive a crash: that is 1021's meaning.
            KvException notDurable = failure == null ? null : unknown(failure);
            for (int i = 0; i < b.accepted().size(); i++) {
                Request r = b.accepted().get(i);
                KvException error = notDurable != null ? notDurable : b.answers().get(i);
                if (error == null) r.done().complete(new Result(b.version(), i));
                else r.done().completeExceptionally(error);
            }
        } catch (Throwable t) {
            KvException e = unknown(t);
            for (Request r : b.accepted()) r.done().completeExceptionally(e); // no-op for those answered
        }
    }

    /**
     * A batch being resolved: what it accepted so far, in versionstamp order, and its writes still
     * in flight on writer threads. Only the leader touches it, except {@link #writing}.
     */
    private static final class Batch {
        final long version;
        final long oldestReadable;
        final Thread leader = Thread.currentThread();
        final List<Request> accepted = new ArrayList<>();
        final List<KvException> answers = new ArrayList<>();
        final List<Touched> touched = new ArrayList<>();
        /** The writes handed to the writer thread since the last wait for them, in batch order. */
        final List<Write> writes = new ArrayList<>(0);
        /** Of {@link #writes}, those not done yet; each unparks the leader when it is. */
        final AtomicInteger writing = new AtomicInteger();
        /** The writer threads' queue, in batch order; each write waits for the one before it to have its sequence numbers. */
        final ConcurrentLinkedQueue<Write> toWrite = new ConcurrentLinkedQueue<>();
        /** Writer threads draining {@link #toWrite}: at most {@link #WRITERS}. */
        final AtomicInteger draining = new AtomicInteger();
        /** Requests taken into the batch, gathered ones included. */
        int taken;
        /** WriteBatch bytes handed to writer threads. */
        long handedOff;
        /** The last write handed off, which the next one waits for; null once the leader has written one itself (nothing is then in flight). */
        Write last;

        Batch(long version, long oldestReadable, int taken) {
            this.version = version;
            this.oldestReadable = oldestReadable;
            this.taken = taken;
        }
    }

    /** A handed-off write's outcome; SKIPPED: not written, as an earlier write of the batch failed and the sequencer stopped. */
    private enum WriteState { RUNNING, WRITTEN, FAILED, SKIPPED }

    /** An accepted transaction's WriteBatch, written on the batch's writer thread after the ones handed off before it. */
    private final class Write implements Runnable {
        final Batch batch;
        final int index;
        final WriteBatchEncoder encoded;
        /** Set last; the fields below are read after it. */
        volatile WriteState state = WriteState.RUNNING;
        Throwable failure;
        KvException afterWrite;

        /** The write handed off before it in this batch, or null; set before it is queued. */
        Write prev;
        /** RocksDB's last sequence number once this write has its own. */
        long seqEnd;

        Write(Batch batch, int index, WriteBatchEncoder encoded) {
            this.batch = batch;
            this.index = index;
            this.encoded = encoded;
        }

        @Override
        public void run() {
            WriteState outcome = WriteState.SKIPPED;
            try {
                if (prev != null) awaitSequence(prev);
                if (stopped != null) return; // one before it failed: nothing more may be written
                try {
                    write(encoded);
                } catch (RocksDBException | RuntimeException | Error e) {
                    failure = e;
                    outcome = WriteState.FAILED;
                    stop("a failed RocksDB write (" + e + ")");
                    return;
                }
                outcome = WriteState.WRITTEN;
                try {
                    faults.at(FaultInjection.Point.AFTER_WRITE);
                } catch (RuntimeException | Error e) {
                    afterWrite = unknown(e);
                }
            } finally {
                state = outcome;
                batch.writing.decrementAndGet();
                LockSupport.unpark(batch.leader);
            }
        }
    }

    /**
     * Resolves a batch and writes what it accepted (unsynced); null if it wrote nothing. Every
     * request it does not return in the batch is answered here.
     */
    private Resolved resolve(List<Request> batch) {
        faults.at(FaultInjection.Point.RESOLVE_BATCH);
        WalHeadroom headroom = store.walHeadroom();
        if (headroom != null) headroom.ensure(); // none of this batch's writes, nor an earlier one's, is in flight
        long oldestReadable = store.timeVersion() - KvLimits.MVCC_WINDOW_VERSIONS;
        Batch b = new Batch(store.beginBatch(), oldestReadable, batch.size());
        try {
            // A transaction conflicts only with writes above its read version, and every live or
            // future one reads at the oldest live view or above: older writes can go now, not
            // after the whole window (in a bulk load they were most of what survived a young GC).
            history.expire(Math.max(oldestReadable, store.oldestReadableView()));
            for (Request r : batch) resolveSafely(r, b);
            if (!b.writes.isEmpty()) gather(b);
            awaitWrites(b);
            if (b.accepted.isEmpty()) return null;
            return new Resolved(b.version, store.db().getSnapshot(), b.accepted, b.answers, b.touched);
        } catch (Throwable t) {
            // The written ones cannot be logged now: stop, so that the next open settles them.
            stop("a failure while resolving a batch (" + t + ")");
            quiesce(b); // no writer thread may still be writing once the batch is answered
            KvException e = unknown(t);
            for (Request r : b.accepted) r.done().completeExceptionally(e);
            b.accepted.clear();
            return null;
        } finally {
            if (b.accepted.isEmpty()) store.endBatch(b.version, null);
        }
    }

    private void resolveSafely(Request r, Batch b) {
        try {
            resolveOne(r, b);
        } catch (Throwable t) {
            r.done().completeExceptionally(internal(t)); // failed before its write: nothing of it was written
        }
    }

    /**
     * While some of the batch's writes are in flight on writer threads, takes in the commits that
     * arrive (a committer that finds the lead taken wakes the leader), and once they are done,
     * those that queued meanwhile: they would otherwise wait for those writes and this batch's
     * fsync, then pay their own. A bulk request's second part queues a fraction of a millisecond
     * after its first took the lead, and so joins its batch, also when the leader itself got no
     * core until the write was done (on two cores, the writer thread often takes the leader's).
     */
    private void gather(Batch b) {
        gatherer = Thread.currentThread();
        boolean interrupted = false;
        try {
            while (true) {
                boolean writing = b.writing.get() > 0; // read before the poll: a commit queued after it is polled next round
                Request r = b.taken < MAX_BATCH && b.handedOff < GATHER_BYTES && stopped == null ? queue.poll() : null;
                if (r != null) {
                    b.taken++;
                    resolveSafely(r, b);
                } else if (!writing) {
                    return;
                } else {
                    LockSupport.park(this);
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            gatherer = null;
            if (interrupted) Thread.currentThread().interrupt();
        }
    }

    /** Waits until no write of the batch is in flight, then takes in their outcomes. */
    private void awaitWrites(Batch b) {
        quiesce(b);
        for (Write w : b.writes) {
            Request r = b.accepted.get(w.index);
            switch (w.state) {
                case WRITTEN -> {
                    if (w.afterWrite != null) b.answers.set(w.index, w.afterWrite);
                }
                case FAILED -> r.done().completeExceptionally(unknown(w.failure)); // RocksDB may have logged it or not
                default -> r.done().completeExceptionally(stoppedError(stopped)); // skipped: certainly not written
            }
        }
        b.writes.clear();
    }

    /**
     * A writer thread: writes the batch's handed-off transactions in their order until none is
     * queued. With two of them, a write's memtable insert overlaps the next one's WAL record and
     * insert; a third would only wait.
     */
    private static void drain(Batch b) {
        while (true) {
            Write w = b.toWrite.poll();
            if (w != null) {
                w.run();
                continue;
            }
            b.draining.decrementAndGet();
            // One queued after the poll found this thread still counted: take it, unless another thread does.
            if (b.toWrite.isEmpty() || !claimDrainer(b)) return;
        }
    }

    private static boolean claimDrainer(Batch b) {
        for (int n = b.draining.get(); n < WRITERS; n = b.draining.get()) {
            if (b.draining.compareAndSet(n, n + 1)) return true;
        }
        return false;
    }

    /**
     * Until {@code prev} has its sequence numbers (RocksDB's unordered_write takes them, and
     * publishes them as the latest, when it has written the WAL record, before its memtable
     * insert), or has ended. A write issued after that comes after it in the WAL and in sequence
     * order. That is a WAL record's time, a fraction of a millisecond for a bulk part: it looks
     * every few tens of microseconds, sleeping in between, so the core stays free for others.
     */
    private void awaitSequence(Write prev) {
        while (prev.state == WriteState.RUNNING && store.db().getLatestSequenceNumber() < prev.seqEnd) {
            LockSupport.parkNanos(SEQUENCE_POLL_NANOS);
        }
    }

    private static void quiesce(Batch b) {
        boolean interrupted = false;
        while (b.writing.get() > 0) {
            LockSupport.park(b);
            interrupted |= Thread.interrupted();
        }
        if (interrupted) Thread.currentThread().interrupt();
    }

    private void write(WriteBatchEncoder encoded) throws RocksDBException {
        faults.at(FaultInjection.Point.WRITE);
        try (WriteBatch wb = encoded.toWriteBatch()) {
            store.db().write(store.writeOptions(encoded), wb); // atomic per transaction, as the WAL replays it
        }
    }

    /** One transaction of a batch: refused, failed, or written (or handed to a writer thread) and added to the batch. Throws only before its write. */
    private void resolveOne(Request r, Batch b) throws RocksDBException {
        String why = stopped;
        if (why != null) {
            r.done().completeExceptionally(stoppedError(why));
            return;
        }
        Fault fault = drawFault();
        if (fault == Fault.NOT_COMMITTED || fault == Fault.TOO_OLD || fault == Fault.UNKNOWN_NOT_COMMITTED) {
            fail(r, fault);
            return;
        }
        if (r.readVersion() < b.oldestReadable && !r.readConflicts().isEmpty()) { // as FDB's resolver: a blind write has nothing to validate
            store.timer().increment(StoreTimer.Counts.TOO_OLD);
            r.done().completeExceptionally(KvException.tooOld());
            return;
        }
        if (conflicts(r)) {
            store.timer().increment(StoreTimer.Counts.CONFLICTS);
            r.done().completeExceptionally(KvException.notCommitted());
            return;
        }
        byte[] stamp = Versionstamps.txVersionstamp(b.version, b.accepted.size());
        Encoded encoded = r.encoded();
        List<byte[]> keys = new ArrayList<>(encoded.touchedKeys().size() + r.writes().versionstamped.size());
        keys.addAll(encoded.touchedKeys());
        List<byte[]> atomicKeys = new ArrayList<>(encoded.atCommit().size());
        List<byte[]> atomicValues = new ArrayList<>(encoded.atCommit().size());
        List<byte[]> stampedConflicts = apply(r.writes(), encoded, stamp, keys, atomicKeys, atomicValues, b);
        Touched touched = new Touched(r.writes(), keys, encoded.touchedKeys().size(), encoded.touchedRanges());
        WriteBatchEncoder enc = encoded.batch();
        if (b.accepted.isEmpty() || encoded.carriesVersion()) enc.put(metaCfId, EmbeddedKvStore.VERSION_KEY, Versionstamps.txVersionstamp(b.version, 0));
        faults.at(FaultInjection.Point.BEFORE_WRITE);
        boolean handOff = enc.size() >= HAND_OFF_BYTES;
        WalHeadroom headroom = store.walHeadroom();
        if (headroom != null) headroom.wrote(enc.size()); // counted whether or not it is written: an estimate for the next ensure()
        if (!handOff) quiesce(b); // after the ones handed off; if one failed, stopped says so
        why = stopped;
        if (why != null) {
            r.done().completeExceptionally(stoppedError(why));
            return;
        }
        if (handOff) {
            Write w = new Write(b, b.accepted.size(), enc);
            w.prev = b.last;
            // A sequence number a record, after the last write's (with none, nothing is in flight: RocksDB's latest).
            w.seqEnd = (b.last == null ? store.db().getLatestSequenceNumber() : b.last.seqEnd) + enc.count();
            b.last = w;
            b.handedOff += enc.size();
            b.writes.add(w);
            b.writing.incrementAndGet();
            b.toWrite.add(w);
            if (claimDrainer(b)) {
                try {
                    writers.execute(() -> drain(b));
                } catch (Throwable t) { // no thread to be had: write here rather than leave the batch waiting
                    drain(b);
                }
            }
            // Its write runs meanwhile; what follows is the leader's own bookkeeping.
            written(r, b, fault, touched, atomicKeys, atomicValues, stampedConflicts);
            faultAfterWrite(FaultInjection.Point.HANDED_OFF, b);
            return;
        }
        b.last = null; // written here, after the ones handed off (quiesced above): the next hand-off reads the sequence afresh
        try {
            write(enc);
        } catch (RocksDBException | RuntimeException | Error e) {
            // RocksDB may have logged it or not: only the next open knows.
            stop("a failed RocksDB write (" + e + ")");
            r.done().completeExceptionally(unknown(e));
            return;
        }
        written(r, b, fault, touched, atomicKeys, atomicValues, stampedConflicts);
        faultAfterWrite(FaultInjection.Point.AFTER_WRITE, b);
    }

    /** An injected fault once the batch's last transaction is written (or being written): it is answered 1021. */
    private void faultAfterWrite(FaultInjection.Point point, Batch b) {
        try {
            faults.at(point);
        } catch (RuntimeException | Error e) {
            b.answers.set(b.answers.size() - 1, unknown(e));
        }
    }

    /**
     * A transaction written, or being written: from here on it is part of the batch, whatever
     * happens. Its writes go to the conflict history (so that later transactions of the batch
     * conflict with it) and to the atomic operations' cache, before the next transaction resolves.
     */
    private void written(Request r, Batch b, Fault fault, Touched touched, List<byte[]> atomicKeys, List<byte[]> atomicValues,
                         List<byte[]> stampedConflicts) {
        b.accepted.add(r);
        b.answers.add(fault == Fault.UNKNOWN_COMMITTED ? injectedUnknown() : null);
        try {
            latestAtomics.written(touched, atomicKeys, atomicValues);
            b.touched.add(touched);
            for (byte[][] w : r.writeConflicts()) history.recordWrite(w[0], w[1], b.version);
            for (byte[] k : stampedConflicts) history.recordPoint(k, b.version);
        } catch (Throwable t) {
            // Later transactions could no longer be checked against this one: nothing more may commit.
            stop("a failure while recording a written transaction (" + t + ")");
        }
    }

    /** The conflict history's generations, for tests: call it with no commit in flight (a finished commit happens-before). */
    int historyGenerations() {
        return history.generationCount();
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
        long bytes = 0;
        for (WriteBuffer.Run run : w.runs.values()) {
            runKeys += run.keys().length;
            for (int i = 0; i < run.keys().length; i++) bytes += WriteBatchEncoder.recordBytes(dataCfId, run.keys()[i].length, run.values()[i].length);
        }
        for (Map.Entry<byte[], byte[]> c : w.cleared.entrySet()) bytes += WriteBatchEncoder.rangeBytes(dataCfId, c.getKey().length, c.getValue().length);
        for (Map.Entry<byte[], WriteBuffer.Op> e : w.points.entrySet()) bytes += WriteBatchEncoder.recordBytes(dataCfId, e.getKey().length, valueBytes(e.getValue()));
        for (WriteBuffer.VersionstampedKey v : w.versionstamped) {
            bytes += WriteBatchEncoder.recordBytes(dataCfId, Math.max(0, v.key().length - Versionstamps.OFFSET_BYTES), v.value().length);
        }
        // A big transaction always carries the batch's version (the first of a batch must, and
        // any may: the same value), so its size is known here and its hundreds of KB are handed
        // to RocksDB as they are, not grown for the version at the end and copied to trim.
        boolean carriesVersion = bytes >= HAND_OFF_BYTES;
        if (carriesVersion) bytes += WriteBatchEncoder.recordBytes(metaCfId, EmbeddedKvStore.VERSION_KEY.length, Versionstamps.TX_BYTES);
        // Exact unless an atomic operation's result is not its operand's length (the batch then grows or is copied once).
        WriteBatchEncoder wb = new WriteBatchEncoder((int) Math.min(bytes, Integer.MAX_VALUE - 64));
        List<byte[]> keys = new ArrayList<>(w.points.size() + runKeys + w.versionstamped.size());
        List<byte[][]> ranges = new ArrayList<>(w.cleared.size());
        List<Map.Entry<byte[], WriteBuffer.Op>> atCommit = new ArrayList<>(2);
        for (Map.Entry<byte[], byte[]> c : w.cleared.entrySet()) {
            wb.deleteRange(dataCfId, c.getKey(), c.getValue());
            ranges.add(new byte[][] {c.getKey(), c.getValue()});
        }
        // Cleared ranges come first: a point write after a clear in the transaction survives it.
        for (Map.Entry<byte[], WriteBuffer.Op> e : w.points.entrySet()) {
            switch (e.getValue()) {
                case WriteBuffer.SetOp s -> put(wb, e.getKey(), s.value());
                case WriteBuffer.ClearOp c -> put(wb, e.getKey(), null);
                case WriteBuffer.AtomicOp a -> atCommit.add(e);
                case WriteBuffer.StampedOp st -> atCommit.add(e);
            }
            keys.add(e.getKey());
        }
        for (WriteBuffer.Run run : w.runs.values()) { // no cleared range or point lies in a run's span
            for (int i = 0; i < run.keys().length; i++) {
                wb.put(dataCfId, run.keys()[i], run.values()[i]);
                keys.add(run.keys()[i]);
            }
        }
        return new Encoded(wb, keys, ranges, atCommit, carriesVersion);
    }

    /** A point operation's value length in the batch, -1 for a delete; an atomic result counts as its last operand's length (as an add's is). */
    private static int valueBytes(WriteBuffer.Op op) {
        return switch (op) {
            case WriteBuffer.SetOp s -> s.value().length;
            case WriteBuffer.ClearOp c -> -1;
            case WriteBuffer.AtomicOp a -> a.mutations().isEmpty() ? 0 : a.mutations().getLast().param().length;
            case WriteBuffer.StampedOp st -> st.then().isEmpty() ? Math.max(0, st.template().length - Versionstamps.OFFSET_BYTES) : st.then().getLast().param().length;
        };
    }

    /**
     * Adds what needs the commit's moment: atomic operations on the latest values (every
     * transaction resolved before this one is already in RocksDB), versionstamped values (with the
     * mutations made on them since), and versionstamped keys.
     * Their write-conflict ranges come separately (the transaction's list, as in FDB), except for
     * stamped keys, known only here: those are returned, to be recorded once the write succeeded.
     * The atomic operations' keys and results go to {@code atomicKeys} and {@code atomicValues}.
     */
    private List<byte[]> apply(WriteBuffer w, Encoded encoded, byte[] stamp, List<byte[]> touchedKeys, List<byte[]> atomicKeys,
                               List<byte[]> atomicValues, Batch b) throws RocksDBException {
        List<byte[]> stampedConflicts = new ArrayList<>(0);
        WriteBatchEncoder wb = encoded.batch();
        for (Map.Entry<byte[], WriteBuffer.Op> e : encoded.atCommit()) {
            byte[] value = switch (e.getValue()) {
                case WriteBuffer.AtomicOp a -> {
                    byte[] v = a.applyTo(latest(e.getKey(), b));
                    atomicKeys.add(e.getKey());
                    atomicValues.add(v);
                    yield v;
                }
                case WriteBuffer.StampedOp st -> st.valueFor(stamp);
                default -> throw new IllegalStateException("not a commit-time operation: " + e.getValue());
            };
            put(wb, e.getKey(), value);
        }
        for (WriteBuffer.VersionstampedKey v : w.versionstamped) {
            byte[] key = Versionstamps.fill(v.key(), stamp);
            put(wb, key, v.value());
            if (v.writeConflict()) stampedConflicts.add(key);
            touchedKeys.add(key);
        }
        return stampedConflicts;
    }

    /**
     * The key's latest value: the atomic results in {@link #latestAtomics}, else RocksDB's, once
     * no write of the batch is in flight (every transaction resolved before this one is then in
     * RocksDB).
     */
    private byte[] latest(byte[] key, Batch b) throws RocksDBException {
        byte[] known = latestAtomics.get(key);
        if (known != null) return known;
        if (!b.writes.isEmpty()) awaitWrites(b); // a write in flight is in writes until awaitWrites takes it in
        return store.db().get(store.dataCf(), key);
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

    /** An injected 1021 for a transaction that did commit. */
    private KvException injectedUnknown() {
        store.timer().increment(StoreTimer.Counts.INJECTED_FAULTS);
        return KvException.commitUnknown();
    }

    private void fail(Request r, Fault fault) {
        store.timer().increment(StoreTimer.Counts.INJECTED_FAULTS);
        r.done().completeExceptionally(switch (fault) {
            case NOT_COMMITTED -> KvException.notCommitted();
            case TOO_OLD -> KvException.tooOld();
            default -> KvException.commitUnknown();
        });
    }

    /** Stops taking commits: the queued ones get 1025, and the batch being led finishes first. */
    @Override
    public void close() {
        running = false;
        lead.acquireUninterruptibly(); // kept: no one leads after close
        writers.shutdown(); // idle: a leader waits for its writes before it gives up the lead
        Request r;
        while ((r = queue.poll()) != null) r.done().completeExceptionally(closed());
        timeouts.interrupt();
    }
}

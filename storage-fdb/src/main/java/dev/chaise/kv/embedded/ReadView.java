package dev.chaise.kv.embedded;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksIterator;
import org.rocksdb.Snapshot;

/**
 * A RocksDB snapshot pinned at a committed version, shared by every transaction that reads at or
 * after it until the next batch commits. Reference-counted: the store holds one reference while
 * the view is current, each transaction one while it reads.
 *
 * <p>It also keeps what its transactions can share: the read options that name the snapshot, and
 * the unbounded iterators over it that ended transactions gave back ({@link #takeIdle},
 * {@link #keepIdle}). Opening an iterator merges the memtables and every L0 file, and a
 * transaction's snapshot range reads (a document GET's) need only one; between writes every
 * transaction reads at the same view, so the next one takes it over (issue 27). They go when the
 * view does, so an idle iterator pins no memtable past the next commit's new view.
 */
final class ReadView {
    /** Iterators kept for reuse at most: about the transactions that read at once. */
    private static final int MAX_IDLE = 8;

    final long version;
    final Snapshot snapshot;
    /** The options of every read at this view: RocksDB copies what it needs, so transactions share them. */
    final ReadOptions readOptions;
    private final EmbeddedKvStore store;
    private final AtomicInteger refs = new AtomicInteger(1);
    private final ConcurrentLinkedQueue<RocksIterator> idle = new ConcurrentLinkedQueue<>();
    private final AtomicInteger idleCount = new AtomicInteger();

    ReadView(EmbeddedKvStore store, long version, Snapshot snapshot) {
        this.store = store;
        this.version = version;
        this.snapshot = snapshot;
        this.readOptions = new ReadOptions().setSnapshot(snapshot);
    }

    /** Called only while the store holds its reference, so the count is above zero. */
    void retain() {
        refs.incrementAndGet();
    }

    void release() {
        if (refs.decrementAndGet() == 0) store.releaseView(this); // a no-op once the store closed: RocksDB freed it
    }

    /** An iterator over this view that a transaction gave back, or null. The caller holds a reference and the native gate. */
    RocksIterator takeIdle() {
        RocksIterator it = idle.poll();
        if (it != null) idleCount.decrementAndGet();
        return it;
    }

    /**
     * Keeps {@code it} (an unbounded iterator over this view) for the next transaction, or false
     * if enough are kept: the caller then closes it. The caller holds a reference and the native gate.
     */
    boolean keepIdle(RocksIterator it) {
        if (idleCount.incrementAndGet() > MAX_IDLE) {
            idleCount.decrementAndGet();
            return false;
        }
        idle.add(it);
        return true;
    }

    /** Closes the kept iterators, with the native gate held: when the view goes, or the store closes. */
    void closeIdle() {
        for (RocksIterator it; (it = takeIdle()) != null; ) it.close();
    }
}

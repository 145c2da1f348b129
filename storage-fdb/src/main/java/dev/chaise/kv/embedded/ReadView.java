package dev.chaise.kv.embedded;

import java.util.concurrent.atomic.AtomicInteger;
import org.rocksdb.Snapshot;

/**
 * A RocksDB snapshot pinned at a committed version, shared by every transaction that reads at or
 * after it until the next batch commits. Reference-counted: the store holds one reference while
 * the view is current, each transaction one while it reads.
 */
final class ReadView {
    final long version;
    final Snapshot snapshot;
    private final EmbeddedKvStore store;
    private final AtomicInteger refs = new AtomicInteger(1);

    ReadView(EmbeddedKvStore store, long version, Snapshot snapshot) {
        this.store = store;
        this.version = version;
        this.snapshot = snapshot;
    }

    /** Called only while the store holds its reference, so the count is above zero. */
    void retain() {
        refs.incrementAndGet();
    }

    void release() {
        if (refs.decrementAndGet() == 0) store.releaseSnapshot(snapshot); // a no-op once the store closed: RocksDB freed it
    }
}

package dev.chaise.kv.embedded;

import java.util.concurrent.atomic.AtomicInteger;
import org.rocksdb.RocksDB;
import org.rocksdb.Snapshot;

/**
 * A RocksDB snapshot pinned at a committed version, shared by every transaction that reads at or
 * after it until the next batch commits. Reference-counted: the store holds one reference while
 * the view is current, each transaction one while it reads.
 */
final class ReadView {
    final long version;
    final Snapshot snapshot;
    private final RocksDB db;
    private final java.util.function.BooleanSupplier dbClosed;
    private final AtomicInteger refs = new AtomicInteger(1);

    ReadView(RocksDB db, long version, Snapshot snapshot, java.util.function.BooleanSupplier dbClosed) {
        this.db = db;
        this.dbClosed = dbClosed;
        this.version = version;
        this.snapshot = snapshot;
    }

    /** Called only while the store holds its reference, so the count is above zero. */
    void retain() {
        refs.incrementAndGet();
    }

    void release() {
        if (refs.decrementAndGet() == 0 && !dbClosed.getAsBoolean()) { // after close, RocksDB freed it
            db.releaseSnapshot(snapshot);
            snapshot.close();
        }
    }
}

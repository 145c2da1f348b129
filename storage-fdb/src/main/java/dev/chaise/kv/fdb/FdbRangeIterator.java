package dev.chaise.kv.fdb;

import com.apple.foundationdb.async.AsyncIterator;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.StoreTimer;
import java.util.NoSuchElementException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A range read over fdb-java's batch-fetching iterator. Time spent blocked on batches adds up and
 * is recorded as one {@link StoreTimer.Waits#RANGE_READ} when the iterator ends, as the embedded
 * engine records one per range read.
 */
final class FdbRangeIterator implements RangeIterator {
    private final AsyncIterator<com.apple.foundationdb.KeyValue> it;
    private final KeyPrefix prefix;
    private final StoreTimer timer;
    private final Consumer<FdbRangeIterator> onClose;
    private long waitedNanos;
    private Boolean more;
    private boolean closed;

    FdbRangeIterator(AsyncIterator<com.apple.foundationdb.KeyValue> it, KeyPrefix prefix, StoreTimer timer, Consumer<FdbRangeIterator> onClose) {
        this.it = it;
        this.prefix = prefix;
        this.timer = timer;
        this.onClose = onClose;
    }

    @Override
    public synchronized boolean hasNext() {
        if (closed) return false;
        if (more != null) return more;
        try {
            CompletableFuture<Boolean> f = it.onHasNext();
            if (!f.isDone()) {
                long start = System.nanoTime();
                try {
                    f.join();
                } finally {
                    waitedNanos += System.nanoTime() - start;
                }
            }
            more = f.join();
        } catch (RuntimeException e) {
            close();
            throw FdbMapping.counted(timer, FdbMapping.rethrow(e));
        }
        if (!more) close();
        return more;
    }

    @Override
    public synchronized KeyValue next() {
        if (!hasNext()) throw new NoSuchElementException();
        more = null;
        com.apple.foundationdb.KeyValue kv = it.next(); // ready: onHasNext completed
        return new KeyValue(prefix.strip(kv.getKey()), kv.getValue());
    }

    @Override
    public synchronized void close() {
        if (closed) return;
        closed = true;
        it.cancel();
        timer.record(StoreTimer.Waits.RANGE_READ, waitedNanos);
        onClose.accept(this);
    }
}

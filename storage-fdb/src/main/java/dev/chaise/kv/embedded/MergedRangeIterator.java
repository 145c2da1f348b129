package dev.chaise.kv.embedded;

import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvException;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.StoreTimer;
import java.util.Iterator;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NoSuchElementException;
import java.util.TreeMap;
import org.rocksdb.RocksIterator;

/**
 * A range read: the snapshot's keys merged with the transaction's own writes. RocksDB's rows are
 * taken in batches ({@link #refill}: up to {@link #BATCH_ROWS} rows or {@link #BATCH_BYTES}
 * bytes, fewer first), so the range streams, and a row handed out of a batch costs no RocksDB
 * call, no clock read and no pass through the store's native gate: a document body is about ten
 * rows, and those per-row costs were a tenth of a document GET's CPU (issue 27). The rows actually read become the read-conflict range
 * when the transaction commits, as in FDB: up to the last row seen, or the whole range once
 * the iterator ran off its end.
 *
 * <p>Every call holds the transaction's monitor, as the transaction's own methods do, so a commit
 * or close on another thread waits for a step in progress and then ends the iterator: later calls
 * fail instead of touching a freed RocksDB iterator, or of looking like the end of the range.
 * RocksDB itself is used only between {@link EmbeddedKvStore#enterNative} and its exit, so closing
 * the store waits for the step too.
 */
final class MergedRangeIterator implements RangeIterator {
    private final EmbeddedTransaction tx;
    /** The most rows a reverse read takes forward instead of seeking backwards. */
    private static final int BUFFERED = 4;
    /** The first batch (most reads are a document's few rows), then the most a batch holds. */
    private static final int FIRST_BATCH_ROWS = 16;
    private static final int BATCH_ROWS = 64;
    /** A batch ends after the row that reaches this many bytes (attachment chunks are large). */
    private static final int BATCH_BYTES = 64 * 1024;
    private final RocksIterator rocks;
    /** What this read owns and closes: the iterator first, then its options; none when the iterator is shared. */
    private final AutoCloseable[] natives;
    private final byte[] begin;
    private final byte[] end;
    private final int limit;
    private final boolean reverse;
    private final Iterator<Map.Entry<byte[], WriteBuffer.Op>> local;
    private final TreeMap<byte[], byte[]> cleared;
    /** This transaction's unreadable ranges within the range (versionstamped writes): reading into one is 1036. */
    private final TreeMap<byte[], byte[]> unreadable;
    private Map.Entry<byte[], WriteBuffer.Op> localPeek;
    private KeyValue next;
    private byte[] lastSeen;
    private int returned;
    private boolean exhausted;
    /** RocksDB holds nothing more in the range than what is left of the batch. */
    private boolean rocksDone;
    private boolean done;
    private boolean closed;
    /** Time spent in RocksDB (the seek, the batches): recorded as one {@code wait.RANGE_READ} when the read ends. */
    private long nanos;
    /** Whether this read records its own wait (a batch's reads do not: {@link EmbeddedTransaction#getRanges} records theirs). */
    private final boolean timed;
    private int steps;
    private boolean advancing;
    /** RocksDB's rows read ahead, in the read's order: those from {@link #batchAt} to {@link #batchSize} are still to merge. */
    private byte[][] batchKeys;
    private byte[][] batchValues;
    private int batchAt;
    private int batchSize;
    /** Set when the transaction ended while this iterator still had rows to give. */
    private String endedBecause;

    MergedRangeIterator(EmbeddedTransaction tx, RocksIterator rocks, AutoCloseable[] natives, byte[] begin, byte[] end, int limit, boolean reverse,
                        NavigableMap<byte[], WriteBuffer.Op> localRange, TreeMap<byte[], byte[]> cleared,
                        TreeMap<byte[], byte[]> unreadable, long createdAt) {
        this(tx, rocks, natives, begin, end, limit, reverse, localRange, cleared, unreadable, createdAt, true, false);
    }

    /**
     * One of a batch of reads ({@link EmbeddedTransaction#getRanges}), read whole at once: the
     * batch records one wait, as FDB's getRanges does, so this one takes no clock readings (two a
     * row were 1.2 % of a view build's CPU).
     *
     * @param positioned {@code rocks} already stands at the first key at or after {@code begin} (a forward read): no seek
     */
    MergedRangeIterator(EmbeddedTransaction tx, RocksIterator rocks, byte[] begin, byte[] end, int limit, boolean reverse,
                        NavigableMap<byte[], WriteBuffer.Op> localRange, TreeMap<byte[], byte[]> cleared,
                        TreeMap<byte[], byte[]> unreadable, boolean positioned) {
        this(tx, rocks, new AutoCloseable[0], begin, end, limit, reverse, localRange, cleared, unreadable, 0, false, positioned);
    }

    /** @param createdAt when the read began (System.nanoTime), if {@code timed} */
    private MergedRangeIterator(EmbeddedTransaction tx, RocksIterator rocks, AutoCloseable[] natives, byte[] begin, byte[] end, int limit, boolean reverse,
                        NavigableMap<byte[], WriteBuffer.Op> localRange, TreeMap<byte[], byte[]> cleared,
                        TreeMap<byte[], byte[]> unreadable, long createdAt, boolean timed, boolean positioned) {
        this.tx = tx;
        this.rocks = rocks;
        this.natives = natives;
        this.begin = begin;
        this.end = end;
        this.limit = limit;
        this.reverse = reverse;
        this.local = (reverse ? localRange.descendingMap() : localRange).entrySet().iterator();
        this.cleared = cleared;
        this.unreadable = unreadable;
        this.timed = timed;
        this.localPeek = local.hasNext() ? local.next() : null;
        // The iterator may be bounded to this range or shared by several reads (natives then
        // owns nothing), so positions are checked against the range, not only isValid().
        if (!positioned || reverse) rocks.seek(begin);
        if (reverse) {
            // A forward seek first: it answers "empty" without SeekForPrev, which opens the last
            // block of every level (RFC C reads an absent document this way on every insert).
            if (rocks.isValid() && Keys.compare(rocks.key(), end) < 0) {
                if (!bufferForward()) {
                    rocks.seekForPrev(end);
                    if (rocks.isValid() && Keys.compare(rocks.key(), end) >= 0) rocks.prev();
                }
            } else {
                rocksDone = true;
            }
        }
        if (timed) nanos = System.nanoTime() - createdAt; // opening the iterator and the first seek count as the read's time
    }

    /**
     * A reverse range of at most {@link #BUFFERED} rows, read forward from the first seek and then
     * given backwards (the whole range as one batch), or false (the iterator then past them) if
     * it holds more. RFC C reads a document's winner as the last row of its one or few branches:
     * stepping on from the seek costs less than SeekForPrev, a second search of the memtable's
     * skip list and of every level (3-5 % of a document GET's CPU, issue 27).
     */
    private boolean bufferForward() {
        byte[][] keys = new byte[BUFFERED][];
        byte[][] values = new byte[BUFFERED][];
        int n = 0;
        while (rocks.isValid()) {
            byte[] k = rocks.key();
            if (Keys.compare(k, end) >= 0) break;
            if (n == BUFFERED) return false;
            keys[n] = k;
            values[n++] = rocks.value();
            rocks.next();
        }
        batchKeys = new byte[n][];
        batchValues = new byte[n][];
        for (int i = 0; i < n; i++) {
            batchKeys[i] = keys[n - 1 - i];
            batchValues[i] = values[n - 1 - i];
        }
        batchSize = n;
        rocksDone = true;
        return true;
    }

    /**
     * The next batch of RocksDB's rows in the range, in the read's order (with the native gate
     * held): at most what the limit leaves, so a read with a limit reads no further than before.
     */
    private void refill() {
        int most = batchKeys == null ? FIRST_BATCH_ROWS : BATCH_ROWS;
        if (limit > 0) most = Math.min(most, limit - returned);
        if (batchKeys == null || batchKeys.length < most) {
            batchKeys = new byte[most][];
            batchValues = new byte[most][];
        }
        int n = 0;
        long bytes = 0;
        while (n < most && bytes < BATCH_BYTES) {
            if (!rocks.isValid()) {
                rocksDone = true;
                break;
            }
            byte[] k = rocks.key();
            if (reverse ? Keys.compare(k, begin) < 0 : Keys.compare(k, end) >= 0) {
                rocksDone = true;
                break;
            }
            byte[] v = rocks.value();
            batchKeys[n] = k;
            batchValues[n++] = v;
            bytes += k.length + v.length;
            if (reverse) rocks.prev();
            else rocks.next();
        }
        batchAt = 0;
        batchSize = n;
    }

    @Override
    public boolean hasNext() {
        synchronized (tx) {
            if (endedBecause != null) throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: " + endedBecause);
            if (next == null && !done) advance();
            return next != null;
        }
    }

    @Override
    public KeyValue next() {
        synchronized (tx) {
            if (!hasNext()) throw new NoSuchElementException();
            KeyValue kv = next;
            next = null;
            returned++;
            return kv;
        }
    }

    private void advance() {
        if (closed) throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: range iterator used after close");
        if (limit > 0 && returned >= limit) {
            finish(false);
            return;
        }
        // A row of the batch with none of the transaction's own writes before it: no RocksDB call, so no gate and no clock
        // (and no ITERATOR_STEP, which is a step through RocksDB); a closed store still fails the read at its next row.
        while (batchAt < batchSize && localPeek == null) {
            if (tx.store.isClosed()) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
            if ((++steps & 0xff) == 0) tx.checkNotTooOld();
            byte[] k = batchKeys[batchAt];
            byte[] v = batchValues[batchAt++];
            if (isCleared(k)) continue;
            emit(k, v);
            return;
        }
        tx.store.enterNative();
        long start = timed ? System.nanoTime() : 0;
        advancing = true;
        try {
            tx.store.options().faults().at(FaultInjection.Point.ITERATOR_STEP);
            if ((++steps & 0xff) == 0) tx.checkNotTooOld();
            while (true) {
                byte[] rk = rocksKey();
                byte[] lk = localPeek == null ? null : localPeek.getKey();
                if (rk == null && lk == null) {
                    finish(true);
                    return;
                }
                int c = rk == null ? 1 : lk == null ? -1 : (reverse ? -Keys.compare(rk, lk) : Keys.compare(rk, lk));
                if (c < 0) {
                    byte[] v = rocksValue();
                    step();
                    if (isCleared(rk)) continue;
                    emit(rk, v);
                    return;
                }
                Map.Entry<byte[], WriteBuffer.Op> e = localPeek;
                localPeek = local.hasNext() ? local.next() : null;
                byte[] base = null;
                if (c == 0) {
                    base = rocksValue();
                    step();
                }
                byte[] v = switch (e.getValue()) {
                    case WriteBuffer.SetOp s -> s.value();
                    case WriteBuffer.ClearOp c2 -> null;
                    case WriteBuffer.AtomicOp a -> a.applyTo(base);
                    case WriteBuffer.StampedOp st -> throw unreadable(); // its range is unreadable too; this is belt and braces
                };
                if (v != null) {
                    emit(e.getKey(), v);
                    return;
                }
            }
        } finally {
            advancing = false;
            if (timed) nanos += System.nanoTime() - start;
            tx.store.exitNative();
            if (closed) recordWait();
        }
    }

    private void recordWait() {
        if (timed) tx.store.timer().record(StoreTimer.Waits.RANGE_READ, nanos);
    }

    /** RocksDB's next row in the range (a new batch read if the last is used up), or null at the range's end. */
    private byte[] rocksKey() {
        if (batchAt == batchSize) {
            if (rocksDone) return null;
            refill();
            if (batchSize == 0) return null;
        }
        return batchKeys[batchAt];
    }

    private byte[] rocksValue() {
        return batchValues[batchAt];
    }

    private void step() {
        batchAt++;
    }

    private boolean isCleared(byte[] key) {
        Map.Entry<byte[], byte[]> e = cleared.floorEntry(key);
        return e != null && Keys.compare(key, e.getValue()) < 0;
    }

    private void emit(byte[] key, byte[] value) {
        // Every key between the last row and this one was read: none of it may be unreadable.
        if (!unreadable.isEmpty() && (reverse ? Keys.compare(unreadable.lastEntry().getValue(), key) > 0
                : Keys.compare(unreadable.firstKey(), key) <= 0)) {
            throw unreadable();
        }
        next = new KeyValue(key, value);
        lastSeen = key;
    }

    static KvException unreadable() {
        return new KvException(KvException.ACCESSED_UNREADABLE, "accessed_unreadable: read or wrote an unreadable key");
    }

    private void finish(boolean ranOffEnd) {
        if (ranOffEnd && !unreadable.isEmpty()) throw unreadable();
        done = true;
        exhausted = ranOffEnd;
        close();
    }

    /** Whether the read ran off its range's end: a forward read's RocksDB iterator then stands at the first key at or after it. */
    boolean ranOffEnd() {
        return exhausted;
    }

    /** What this iterator read, as a conflict range, or null if it read nothing. */
    byte[][] conflictRange() {
        if (exhausted) return new byte[][] {begin, end};
        if (lastSeen == null) return null;
        return reverse ? new byte[][] {lastSeen, end} : new byte[][] {begin, Keys.keyAfter(lastSeen)};
    }

    /** Called by the transaction, under its monitor, when it commits or closes: a later call fails with {@code why}. */
    void end(String why) {
        if (!done) endedBecause = why;
        close();
    }

    @Override
    public void close() {
        synchronized (tx) {
            if (closed) return;
            closed = true;
            done = true;
            if (natives.length > 0 && tx.store.tryEnterNative()) { // else the store closed and RocksDB freed them
                try {
                    for (AutoCloseable n : natives) closeQuietly(n);
                } finally {
                    tx.store.exitNative();
                }
            }
            tx.giveBack(rocks);
            if (!advancing) recordWait(); // else advance() records it with its own time included
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            throw new IllegalStateException(e); // RocksObject.close() declares no checked exception
        }
    }
}

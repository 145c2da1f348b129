package dev.chaise.storage;

import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * A scan of a key range that may outlive one transaction: each transaction reads at most
 * {@link #ROWS_PER_TRANSACTION} rows or {@link #MILLIS_PER_TRANSACTION} ms, then the next one
 * resumes after the last key read (the continuation). Rows are mapped inside the transaction
 * that read them, so a mapper can read more (a document body) at the same version.
 *
 * <p>As RFC D says of long {@code _changes} responses, rows from different transactions may
 * reflect different versions: a key updated during the scan may appear again later.
 *
 * @param <T> a mapped row; the mapper returns null to skip a row
 */
public final class RangeCursor<T> implements Iterator<T> {
    static final int ROWS_PER_TRANSACTION = 1_000;
    static final long MILLIS_PER_TRANSACTION = 2_000;

    /** Maps a row inside its transaction. Snapshot reads only: the scan never conflicts. */
    @FunctionalInterface
    public interface Mapper<T> {
        T map(ReadTransaction tx, DbHandle db, KeyValue kv);
    }

    private final KvStore kv;
    private final Function<ReadTransaction, DbHandle> opener;
    private final boolean reverse;
    private final Mapper<T> mapper;
    private byte[] begin;
    private byte[] end;
    private long remaining;
    private boolean exhausted;
    private final ArrayDeque<T> buffer = new ArrayDeque<>();
    private byte[] lastKey;

    /**
     * @param opener opens (and checks) the database inside each transaction
     * @param limit at most this many mapped rows; 0 for no limit
     */
    public RangeCursor(KvStore kv, Function<ReadTransaction, DbHandle> opener, byte[] begin, byte[] end, boolean reverse, long limit, Mapper<T> mapper) {
        this.kv = kv;
        this.opener = opener;
        this.begin = begin;
        this.end = end;
        this.reverse = reverse;
        this.remaining = limit <= 0 ? Long.MAX_VALUE : limit;
        this.mapper = mapper;
        this.exhausted = Keys.compare(begin, end) >= 0;
    }

    /** The last key read: where a new cursor would resume. Null before the first row. */
    public byte[] continuation() {
        return lastKey;
    }

    @Override
    public boolean hasNext() {
        while (buffer.isEmpty() && !exhausted && remaining > 0) fill();
        return !buffer.isEmpty();
    }

    @Override
    public T next() {
        if (!hasNext()) throw new NoSuchElementException();
        remaining--;
        return buffer.poll();
    }

    private void fill() {
        kv.run((Transaction tx) -> {
            buffer.clear(); // a retried attempt starts over from the same continuation
            ReadTransaction snap = tx.snapshot();
            DbHandle db = opener.apply(tx);
            long deadline = System.currentTimeMillis() + MILLIS_PER_TRANSACTION;
            byte[] last = null;
            int rows = 0;
            boolean ranOut = true;
            try (var it = snap.getRange(begin, end, ROWS_PER_TRANSACTION, reverse)) {
                while (it.hasNext()) {
                    KeyValue row = it.next();
                    last = row.key();
                    rows++;
                    T mapped = mapper.map(snap, db, row);
                    if (mapped != null) buffer.add(mapped);
                    if (buffer.size() >= remaining || System.currentTimeMillis() > deadline) {
                        ranOut = false;
                        break;
                    }
                }
            }
            if (rows == ROWS_PER_TRANSACTION) ranOut = false;
            if (last != null) {
                lastKey = last;
                if (reverse) end = last;
                else begin = Keys.keyAfter(last);
            }
            if (ranOut) exhausted = true;
            return null;
        });
    }
}

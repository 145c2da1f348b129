package dev.chaise.storage;

import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.StoreTimer;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.function.Function;

/**
 * A scan of one key range of a database, in the shape of the Record Layer's {@code RecordCursor}:
 * values come with a continuation that resumes the scan in a new transaction, a new request or
 * another process, and a cursor that ends says why ({@link #noNextReason()}).
 *
 * <p>Each transaction reads at most {@link ScanProperties#rowsPerTransaction()} rows, for at most
 * {@link ScanProperties#millisPerTransaction()} and {@link ScanProperties#bytesPerTransaction()}
 * (the mapper's own reads included), far inside FDB's five seconds. A cursor that spans
 * transactions then goes on in the next one; one held to a single transaction stops and names the
 * limit it reached. As RFC D says of long {@code _changes} responses, rows read in different
 * transactions may reflect different versions: a key rewritten during the scan may appear again.
 *
 * <p>Rows are mapped inside the transaction that read them, through a {@link DbReader} at the
 * same version, so a mapper can read a document's body without a second transaction; it returns
 * null to skip a row. Skipped rows count against the per-transaction limits, not the return limit.
 *
 * <p>Every transaction of a database's cursor opens the database through {@link Database#handle}:
 * a cursor never reads on into a database deleted and re-created under the same name.
 *
 * <p>The continuation is the last key the cursor has moved past, relative to the range's
 * subspace prefix, so it names no database id and a client may carry it (a Mango bookmark, a
 * replication checkpoint). Not thread-safe.
 *
 * @param <T> a mapped row
 */
public final class Cursor<T> implements Iterator<T> {

    /** Maps one row inside its transaction; null skips it. Reads through {@code reader} see the same version. */
    @FunctionalInterface
    public interface RowMapper<T> {
        T map(DbReader reader, KeyValue row);

        /**
         * How many rows to read ahead and hand to {@link #prefetch} before mapping them; 0 (the
         * default) maps each row as it is read. Never more than the rows the return limit can use.
         * Asked before every read-ahead, so a mapper may size the next one by what the last cost.
         */
        default int prefetchSize() {
            return 0;
        }

        /**
         * The rows about to be mapped, in order, in their transaction: a mapper that reads a
         * document per row can read them all at once here. Rows after a limit are not mapped.
         */
        default void prefetch(DbReader reader, java.util.List<KeyValue> rows) {}
    }

    /** A key range under one subspace: {@code prefix <= begin <= end}, continuations relative to {@code prefix}. */
    public record Range(byte[] prefix, byte[] begin, byte[] end) {
        public static Range of(byte[][] beginEnd, byte[] prefix) {
            return new Range(prefix, beginEnd[0], beginEnd[1]);
        }
    }

    private record Entry<T>(T value, byte[] key) {}

    /** Runs one snapshot transaction of the cursor's keys: a database's ({@link Database#read}), or the deployment's. */
    @FunctionalInterface
    interface Reads {
        Object read(Function<DbReader, Object> body);
    }

    private final Reads reads;
    private final StoreTimer timer;
    private final byte[] prefix;
    private final ScanProperties props;
    private final RowMapper<T> mapper;
    private byte[] begin;
    private byte[] end;
    private long returned;
    private final ArrayDeque<Entry<T>> buffer = new ArrayDeque<>();
    /** The last key read by the last transaction, so far unreported because every row after the last value was skipped. */
    private byte[] scannedTo;
    private byte[] lastReturned;
    private NoNextReason stopped;

    /**
     * @param continuation where an earlier cursor over the same range stopped, or null to start at
     *     the beginning; one that does not lie in the range is a {@code bad_request}
     */
    Cursor(Database db, Range range, ScanProperties props, byte[] continuation, RowMapper<T> mapper) {
        this(body -> db.read(body), db.timer(), range, props, continuation, mapper);
    }

    Cursor(Reads reads, StoreTimer timer, Range range, ScanProperties props, byte[] continuation, RowMapper<T> mapper) {
        this.reads = reads;
        this.timer = timer;
        this.prefix = range.prefix();
        this.props = props;
        this.mapper = mapper;
        this.begin = range.begin();
        this.end = range.end();
        if (continuation != null) resumeAfter(Keys.concat(prefix, continuation));
        if (Keys.compare(begin, end) >= 0) stopped = NoNextReason.SOURCE_EXHAUSTED;
    }

    private void resumeAfter(byte[] key) {
        if (Keys.compare(key, begin) < 0 || Keys.compare(key, end) >= 0) {
            throw StorageException.badRequest("Invalid continuation: it does not belong to this scan");
        }
        if (props.reverse()) end = key;
        else begin = Keys.keyAfter(key);
        lastReturned = key;
    }

    @Override
    public boolean hasNext() {
        while (buffer.isEmpty() && stopped == null) fill();
        return !buffer.isEmpty();
    }

    @Override
    public T next() {
        if (!hasNext()) throw new NoSuchElementException();
        Entry<T> e = buffer.poll();
        lastReturned = e.key();
        returned++;
        return e.value();
    }

    /** Why the cursor has ended; null while it may still have values (ask {@link #hasNext()} first). */
    public NoNextReason noNextReason() {
        return buffer.isEmpty() ? stopped : null;
    }

    /**
     * Where a new cursor over the same range resumes: after the last value returned, or, once the
     * values read so far are all returned, after every row read (skipped ones too, so a filtered
     * feed does not examine them again). Null before the cursor has moved.
     */
    public byte[] continuation() {
        byte[] key = buffer.isEmpty() && scannedTo != null ? scannedTo : lastReturned;
        return key == null ? null : Arrays.copyOfRange(key, prefix.length, key.length);
    }

    private void fill() {
        @SuppressWarnings("unchecked")
        Fill<T> f = (Fill<T>) reads.read(this::readOne);
        buffer.addAll(f.values());
        if (f.lastKey() != null) {
            scannedTo = f.lastKey();
            if (props.reverse()) end = f.lastKey();
            else begin = Keys.keyAfter(f.lastKey());
        }
        boolean perTransaction = f.stop() != NoNextReason.SOURCE_EXHAUSTED && f.stop() != NoNextReason.RETURN_LIMIT_REACHED;
        if (!perTransaction || !props.spanTransactions()) stopped = f.stop();
    }

    private record Fill<T>(java.util.List<Entry<T>> values, byte[] lastKey, NoNextReason stop) {}

    /** One transaction's rows; runs again from the same place if the transaction is retried. */
    private Fill<T> readOne(DbReader reader) {
        java.util.List<Entry<T>> out = new java.util.ArrayList<>();
        long deadline = System.currentTimeMillis() + props.millisPerTransaction();
        long limit = props.returnLimit() == 0 ? Long.MAX_VALUE : props.returnLimit() - returned - buffer.size();
        byte[] last = null;
        int rows = 0;
        NoNextReason stop = NoNextReason.SOURCE_EXHAUSTED;
        java.util.ArrayDeque<KeyValue> fetched = new java.util.ArrayDeque<>();
        try (RangeIterator it = reader.tx().getRange(begin, end, props.rowsPerTransaction(), props.reverse())) {
            while (!fetched.isEmpty() || it.hasNext()) {
                int ahead = fetched.isEmpty() ? mapper.prefetchSize() : 0;
                if (ahead > 0) {
                    long room = Math.min(Math.min(ahead, limit - out.size()), props.rowsPerTransaction() - rows);
                    while (fetched.size() < Math.max(1, room) && it.hasNext()) fetched.add(it.next());
                    mapper.prefetch(reader, java.util.List.copyOf(fetched));
                }
                KeyValue row = fetched.isEmpty() ? it.next() : fetched.poll();
                last = row.key();
                rows++;
                T mapped = mapper.map(reader, row);
                if (mapped != null) out.add(new Entry<>(mapped, row.key()));
                if (out.size() >= limit) {
                    stop = NoNextReason.RETURN_LIMIT_REACHED;
                    break;
                }
                if (rows >= props.rowsPerTransaction()) {
                    stop = NoNextReason.SCAN_LIMIT_REACHED;
                    break;
                }
                if (props.bytesPerTransaction() > 0 && reader.bytesRead() >= props.bytesPerTransaction()) {
                    stop = NoNextReason.BYTE_LIMIT_REACHED;
                    break;
                }
                if (System.currentTimeMillis() > deadline) {
                    stop = NoNextReason.TIME_LIMIT_REACHED;
                    break;
                }
            }
        }
        timer.add(StorageCounts.CURSOR_TRANSACTIONS, 1);
        timer.add(StorageCounts.CURSOR_ROWS_SCANNED, rows);
        return new Fill<>(out, last, stop);
    }
}

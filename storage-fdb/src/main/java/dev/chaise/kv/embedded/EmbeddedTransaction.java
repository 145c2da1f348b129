package dev.chaise.kv.embedded;

import dev.chaise.kv.KeySelector;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.rocksdb.ReadOptions;
import org.rocksdb.Slice;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;

/**
 * A transaction of the embedded engine. Reads go to a pinned RocksDB snapshot merged with the
 * transaction's {@link WriteBuffer}; non-snapshot reads record read-conflict ranges, which the
 * {@link Sequencer} checks at commit. Methods are synchronized: a transaction holds native
 * resources that must not be used after it ends.
 */
final class EmbeddedTransaction implements Transaction {
    private enum State { OPEN, COMMITTING, DONE }

    private static final byte[] HIGHEST_STAMP = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};

    private record PendingWatch(byte[] key, byte[] seen, CompletableFuture<Void> future) {}

    final EmbeddedKvStore store;
    private final WriteBuffer writes = new WriteBuffer();
    private final List<byte[][]> readConflicts = new ArrayList<>();
    private final List<byte[][]> writeConflicts = new ArrayList<>();
    private final List<MergedRangeIterator> iterators = new ArrayList<>();
    private final List<MergedRangeIterator> snapshotIterators = new ArrayList<>();
    private final List<PendingWatch> watches = new ArrayList<>();
    private final ReadTransaction snapshotView = new SnapshotView();
    private static final AutoCloseable[] SHARED = new AutoCloseable[0];

    private State state = State.OPEN;
    /**
     * An unbounded RocksDB iterator over the snapshot, lent to one snapshot range read at a time:
     * a document GET's two range reads (its revisions, then its body) open one iterator instead of
     * two, and opening one (a merge over the memtables and every level) cost about as much as
     * reading a small range (issue 27). Reads that record conflicts keep iterators bounded to their
     * range, so an insert's read of an absent document stops at its bounds. Taken from the view's
     * kept iterators if it has one, and given back to them at the end ({@link ReadView#keepIdle}).
     */
    private RocksIterator spare;
    private boolean spareLent;
    private ReadView view;
    private long readVersion = -1;
    private long size;
    private boolean noWriteConflictNext;
    private long committedVersion = -1;
    private byte[] versionstamp;

    EmbeddedTransaction(EmbeddedKvStore store) {
        this.store = store;
    }

    // ---- reads

    @Override
    public synchronized long getReadVersion() {
        ensureOpen();
        ensureView();
        return readVersion;
    }

    @Override
    public byte[] get(byte[] key) {
        return get(key, false);
    }

    @Override
    public byte[] getKey(KeySelector selector) {
        return getKey(selector, false);
    }

    @Override
    public RangeIterator getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
        return range(begin, end, limit, reverse, false);
    }

    @Override
    public ReadTransaction snapshot() {
        return snapshotView;
    }

    private synchronized byte[] get(byte[] key, boolean snapshot) {
        ensureOpen();
        if (writes.isUnreadable(key)) throw MergedRangeIterator.unreadable();
        WriteBuffer.Op op = writes.op(key);
        if (op instanceof WriteBuffer.SetOp s) return s.value();
        if (op == WriteBuffer.ClearOp.INSTANCE || (op == null && writes.isCleared(key))) return null;
        ensureView();
        checkNotTooOld();
        long start = System.nanoTime();
        byte[] base;
        store.enterNative();
        try {
            base = store.db().get(store.dataCf(), view.readOptions, key);
        } catch (RocksDBException e) {
            throw new KvException(KvException.IO_ERROR, "io_error: " + e.getMessage(), e);
        } finally {
            store.exitNative();
            store.timer().record(StoreTimer.Waits.GET, System.nanoTime() - start);
        }
        if (!snapshot) addConflict(readConflicts, key, Keys.keyAfter(key));
        return op instanceof WriteBuffer.AtomicOp a ? a.applyTo(base) : base;
    }

    private synchronized byte[] getKey(KeySelector sel, boolean snapshot) {
        long start = System.nanoTime();
        try {
            if (sel.offset() >= 1) {
                byte[] from = sel.orEqual() ? Keys.keyAfter(sel.key()) : sel.key();
                return nth(from, Keys.SYSTEM_PREFIX, sel.offset() - 1, false, snapshot, Keys.SYSTEM_PREFIX);
            }
            byte[] to = sel.orEqual() ? Keys.keyAfter(sel.key()) : sel.key();
            return nth(Keys.EMPTY, to, -sel.offset(), true, snapshot, Keys.EMPTY);
        } finally {
            store.timer().record(StoreTimer.Waits.GET_KEY, System.nanoTime() - start);
        }
    }

    /** The key {@code skip} rows into the range, or {@code ifNone}. */
    private byte[] nth(byte[] begin, byte[] end, int skip, boolean reverse, boolean snapshot, byte[] ifNone) {
        byte[] b = min(begin, Keys.SYSTEM_PREFIX);
        byte[] e = min(end, Keys.SYSTEM_PREFIX);
        if (Keys.compare(b, e) >= 0) return ifNone;
        try (RangeIterator it = range(b, e, skip + 1, reverse, snapshot)) {
            KeyValue last = null;
            int n = 0;
            while (n <= skip && it.hasNext()) {
                last = it.next();
                n++;
            }
            return n == skip + 1 ? last.key() : ifNone;
        }
    }

    private static byte[] min(byte[] a, byte[] b) {
        return Keys.compare(a, b) <= 0 ? a : b;
    }

    private synchronized RangeIterator range(byte[] begin, byte[] end, int limit, boolean reverse, boolean snapshot) {
        ensureOpen();
        byte[] e = checkRange(begin, end, limit);
        ensureView();
        checkNotTooOld();
        long start = System.nanoTime();
        if (snapshot && !spareLent) return lendSpare(begin, e, limit, reverse, start);
        // Bounds let RocksDB skip files outside the range and stop at its edges instead of
        // positioning on a neighbour's key: a reverse limit-1 read of an absent document (RFC C's
        // insert path) cost ~25 us without them.
        Slice lower = new Slice(begin);
        Slice upper = new Slice(e);
        ReadOptions bounded = new ReadOptions().setSnapshot(view.snapshot).setIterateLowerBound(lower).setIterateUpperBound(upper);
        MergedRangeIterator it;
        store.enterNative();
        try {
            RocksIterator ri = store.db().newIterator(store.dataCf(), bounded);
            it = new MergedRangeIterator(this, ri, new AutoCloseable[] {ri, bounded, lower, upper},
                    begin, e, limit, reverse, writes.snapshotOf(begin, e), new TreeMap<>(writes.cleared), writes.unreadableIn(begin, e), start);
        } finally {
            store.exitNative();
        }
        if (!snapshot) iterators.add(it);
        else snapshotIterators.add(it);
        return it;
    }

    private RangeIterator lendSpare(byte[] begin, byte[] end, int limit, boolean reverse, long start) {
        MergedRangeIterator it;
        store.enterNative();
        try {
            if (spare == null) spare = view.takeIdle();
            if (spare == null) spare = store.db().newIterator(store.dataCf(), view.readOptions);
            it = new MergedRangeIterator(this, spare, SHARED, begin, end, limit, reverse,
                    writes.snapshotOf(begin, end), new TreeMap<>(writes.cleared), writes.unreadableIn(begin, end), start);
        } finally {
            store.exitNative();
        }
        spareLent = true;
        snapshotIterators.add(it);
        return it;
    }

    /** A range read ends (under this transaction's monitor): the iterator it was lent may be lent again. */
    void giveBack(RocksIterator it) {
        if (it == spare) spareLent = false;
    }

    /** The range's end, after FDB's checks: an inverted range reads as empty; past the user key space is an error. */
    private static byte[] checkRange(byte[] begin, byte[] end, int limit) {
        if (limit < 0) throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: negative limit");
        byte[] e = Keys.compare(begin, end) > 0 ? begin : end;
        if (Keys.compare(e, Keys.SYSTEM_PREFIX) > 0) {
            throw new KvException(KvException.KEY_OUTSIDE_LEGAL_RANGE, "key_outside_legal_range: key outside legal range");
        }
        return e;
    }

    /**
     * Many small reads with one RocksDB iterator, sought in key order: opening an iterator (a
     * merge over the memtables and every L0 file) and seeking from cold cost more than the read
     * itself, ~13-23 us per document on a bulk insert. Each read is still its own merged read
     * with its own conflict range; it is read whole before the next, so later writes cannot
     * change it.
     */
    private synchronized List<List<KeyValue>> ranges(List<byte[][]> ranges, int limit, boolean reverse, boolean snapshot) {
        ensureOpen();
        byte[][] ends = new byte[ranges.size()][];
        for (int i = 0; i < ends.length; i++) ends[i] = checkRange(ranges.get(i)[0], ranges.get(i)[1], limit);
        List<List<KeyValue>> out = new ArrayList<>(java.util.Collections.nCopies(ranges.size(), (List<KeyValue>) null));
        if (ranges.isEmpty()) return out;
        ensureView();
        checkNotTooOld();
        Integer[] order = new Integer[ranges.size()];
        for (int i = 0; i < order.length; i++) order[i] = i;
        Arrays.sort(order, (a, b) -> Keys.compare(ranges.get(a)[0], ranges.get(b)[0]));
        long start = System.nanoTime();
        store.enterNative();
        RocksIterator ri = null;
        try {
            ri = store.db().newIterator(store.dataCf(), view.readOptions);
            byte[] ranOff = null; // set when ri stands at the first key at or after this key (a forward read ran off its end there)
            for (int i : order) {
                byte[] begin = ranges.get(i)[0];
                boolean positioned = ranOff != null && Keys.compare(ranOff, begin) <= 0 && stepTo(ri, begin);
                MergedRangeIterator it = new MergedRangeIterator(this, ri, begin, ends[i], limit, reverse,
                        writes.snapshotOf(begin, ends[i]), writes.cleared, writes.unreadableIn(begin, ends[i]), positioned);
                List<KeyValue> rows = new ArrayList<>();
                try (it) {
                    it.forEachRemaining(rows::add);
                }
                out.set(i, rows);
                ranOff = !reverse && it.ranOffEnd() ? ends[i] : null;
                if (!snapshot) iterators.add(it);
            }
        } finally {
            if (ri != null) ri.close();
            store.exitNative();
            store.timer().record(StoreTimer.Waits.RANGE_READ, System.nanoTime() - start); // the batch's one wait, as FDB's getRanges
        }
        return out;
    }

    /** The most steps {@link #stepTo} takes before a seek is cheaper. */
    private static final int STEPS_BEFORE_SEEK = 4;

    /**
     * Steps {@code ri}, which stands at the first key at or after some key at or before {@code begin},
     * to the first key at or after {@code begin}: true if it got there, false if a seek must (a
     * {@code next()} costs a fraction of a seek, which searches the memtables and every level again).
     * A batch's bodies are mostly adjacent (sequential ids), so the next range usually starts where
     * the iterator stands.
     */
    private static boolean stepTo(RocksIterator ri, byte[] begin) {
        for (int n = 0; ri.isValid(); n++) {
            if (Keys.compare(ri.key(), begin) >= 0) return true;
            if (n == STEPS_BEFORE_SEEK) return false;
            ri.next();
        }
        return false;
    }

    @Override
    public List<List<KeyValue>> getRanges(List<byte[][]> ranges, int limit, boolean reverse) {
        return ranges(ranges, limit, reverse, false);
    }

    // ---- writes

    @Override
    public synchronized void set(byte[] key, byte[] value) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        KvLimits.checkValue(value);
        byte[] k = key.clone();
        writes.set(k, value.clone());
        size += key.length + value.length;
        writeConflict(k);
    }

    @Override
    public synchronized void setAll(List<KeyValue> kvs) {
        ensureOpen();
        KvLimits.checkSetAll(kvs);
        byte[][] keys = new byte[kvs.size()][];
        byte[][] values = new byte[kvs.size()][];
        long bytes = 0;
        for (int i = 0; i < keys.length; i++) { // not copied: the caller hands them over (a bulk load's bodies were 6 % of its garbage)
            KeyValue kv = kvs.get(i);
            keys[i] = kv.key();
            values[i] = kv.value();
            bytes += keys[i].length + values[i].length;
        }
        boolean conflict = takeWriteConflict(); // even an empty setAll uses the option up: it was meant for this call
        if (keys.length == 0) return;
        writes.setAll(keys, values);
        size += bytes;
        if (conflict) for (byte[] k : keys) addConflict(writeConflicts, k, Keys.keyAfter(k));
    }

    @Override
    public synchronized void clear(byte[] key) {
        ensureOpen();
        if (key.length > KvLimits.MAX_KEY_BYTES && key[0] != (byte) 0xff) return; // as FDB: no key that long exists, nothing to clear
        KvLimits.checkWritableKey(key);
        byte[] k = key.clone();
        writes.clear(k);
        size += key.length;
        writeConflict(k);
    }

    @Override
    public synchronized void clear(byte[] begin, byte[] end) {
        ensureOpen();
        KvLimits.checkRange(begin, end);
        if (Keys.compare(end, Keys.SYSTEM_PREFIX) > 0) {
            throw new KvException(KvException.KEY_OUTSIDE_LEGAL_RANGE, "key_outside_legal_range: key outside legal range");
        }
        byte[] b = begin.clone();
        byte[] e = end.clone();
        writes.clear(b, e);
        size += begin.length + end.length;
        if (takeWriteConflict()) addConflict(writeConflicts, b, e);
    }

    @Override
    public synchronized void mutate(MutationType type, byte[] key, byte[] param) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        KvLimits.checkValue(param);
        byte[] k = key.clone();
        writes.mutate(type, k, param.clone());
        size += key.length + param.length;
        writeConflict(k);
    }

    @Override
    public synchronized void setVersionstampedKey(byte[] key, byte[] value) {
        ensureOpen();
        Versionstamps.fill(key, new byte[Versionstamps.TX_BYTES]); // validates the offset now, not mid-batch
        KvLimits.checkWritableKey(Arrays.copyOf(key, key.length - Versionstamps.OFFSET_BYTES));
        KvLimits.checkValue(value);
        // The key is known only at commit, so the sequencer adds its conflict range. Until then it
        // may be any key from the lowest stamp this transaction can get (above its read version,
        // if it has one, as FDB bounds it) to the highest: that range is unreadable.
        byte[] k = key.clone();
        byte[] lowest = Versionstamps.fill(k, Versionstamps.txVersionstamp(Math.max(readVersion, 0), 0));
        byte[] highest = Versionstamps.fill(k, HIGHEST_STAMP);
        byte[] end = Keys.compare(Keys.keyAfter(highest), Keys.SYSTEM_PREFIX) < 0 ? Keys.keyAfter(highest) : Keys.SYSTEM_PREFIX;
        writes.setVersionstampedKey(new WriteBuffer.VersionstampedKey(k, value.clone(), lowest, takeWriteConflict()), end);
        size += key.length + value.length;
    }

    @Override
    public synchronized void setVersionstampedValue(byte[] key, byte[] value) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        Versionstamps.fill(value, new byte[Versionstamps.TX_BYTES]);
        KvLimits.checkValue(Arrays.copyOf(value, value.length - Versionstamps.OFFSET_BYTES));
        byte[] k = key.clone();
        writes.setVersionstampedValue(k, value.clone());
        writeConflict(k);
        size += key.length + value.length;
    }

    @Override
    public synchronized void nextWriteNoWriteConflictRange() {
        ensureOpen();
        noWriteConflictNext = true;
    }

    /** Whether the write being made adds a write-conflict range; consumes the option. */
    private boolean takeWriteConflict() {
        boolean conflict = !noWriteConflictNext;
        noWriteConflictNext = false;
        return conflict;
    }

    private void writeConflict(byte[] key) {
        if (takeWriteConflict()) addConflict(writeConflicts, key, Keys.keyAfter(key));
    }

    @Override
    public synchronized void addReadConflictRange(byte[] begin, byte[] end) {
        ensureOpen();
        KvLimits.checkRange(begin, end);
        addConflict(readConflicts, begin.clone(), end.clone());
    }

    @Override
    public synchronized void addWriteConflictRange(byte[] begin, byte[] end) {
        ensureOpen();
        KvLimits.checkRange(begin, end);
        addConflict(writeConflicts, begin.clone(), end.clone());
    }

    private void addConflict(List<byte[][]> into, byte[] begin, byte[] end) {
        if (Keys.compare(begin, end) >= 0) return;
        into.add(new byte[][] {begin, end});
        size += begin.length + end.length;
    }

    @Override
    public synchronized CompletableFuture<Void> watch(byte[] key) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        byte[] seen = get(key, true);
        CompletableFuture<Void> f = new CompletableFuture<>();
        watches.add(new PendingWatch(key.clone(), seen, f));
        return f;
    }

    // ---- commit

    @Override
    public synchronized void commit() {
        ensureOpen();
        state = State.COMMITTING;
        boolean ok = false;
        try {
            for (MergedRangeIterator it : iterators) {
                it.end("range iterator used after its transaction committed");
                byte[][] r = it.conflictRange();
                if (r != null) addConflict(readConflicts, r[0], r[1]);
            }
            iterators.clear();
            if (writes.isEmpty() && writeConflicts.isEmpty()) {
                store.timer().increment(StoreTimer.Counts.READ_ONLY_COMMITS);
                ok = true;
                return;
            }
            KvLimits.checkTransactionSize(size);
            // Never read: it still takes the current view, and holds it until the commit ends, so the
            // conflict history keeps every write its explicit read-conflict ranges could meet.
            ensureView();
            Sequencer.Result r = store.sequencer().commit(readVersion, readConflicts, writeConflicts, writes);
            committedVersion = r.version();
            versionstamp = Versionstamps.txVersionstamp(r.version(), r.order());
            store.timer().increment(StoreTimer.Counts.COMMITS);
            ok = true;
        } finally {
            state = State.DONE;
            if (ok) {
                for (PendingWatch w : watches) store.watches().register(w.key(), w.seen(), w.future());
                watches.clear();
            }
            release();
        }
    }

    @Override
    public synchronized byte[] getVersionstamp() {
        if (versionstamp == null) {
            throw new KvException(KvException.NO_COMMIT_VERSION, "no_commit_version: transaction is read-only or not committed and has no versionstamp");
        }
        return versionstamp.clone();
    }

    @Override
    public synchronized long getCommittedVersion() {
        return committedVersion;
    }

    @Override
    public synchronized long getApproximateSize() {
        return size;
    }

    @Override
    public synchronized void close() {
        if (state == State.DONE && view == null) return;
        state = State.DONE;
        release();
    }

    private void release() {
        String why = "range iterator used after its transaction " + (committedVersion >= 0 ? "committed" : "ended");
        for (MergedRangeIterator it : iterators) it.end(why);
        for (MergedRangeIterator it : snapshotIterators) it.end(why);
        iterators.clear();
        snapshotIterators.clear();
        for (PendingWatch w : watches) {
            w.future().completeExceptionally(new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the watch's transaction did not commit"));
        }
        watches.clear();
        if (spare != null) {
            if (store.tryEnterNative()) { // else the store closed and RocksDB freed it
                try {
                    if (!view.keepIdle(spare)) spare.close(); // before the snapshot it reads is released
                } finally {
                    store.exitNative();
                }
            }
            spare = null;
            spareLent = false;
        }
        if (view != null) {
            view.release();
            view = null;
        }
    }

    // ---- helpers

    private void ensureOpen() {
        if (store.isClosed()) {
            throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
        }
        if (state != State.OPEN) {
            throw new KvException(state == State.COMMITTING ? KvException.USED_DURING_COMMIT : KvException.CLIENT_INVALID_OPERATION,
                    state == State.COMMITTING ? "used_during_commit: operation issued while a commit was outstanding"
                            : "client_invalid_operation: transaction already committed or closed");
        }
    }

    private void ensureView() {
        if (view != null) return;
        EmbeddedKvStore.Lease lease = store.acquireReadView();
        view = lease.view();
        readVersion = lease.readVersion();
    }

    void checkNotTooOld() {
        if (store.timeVersion() - readVersion > KvLimits.MVCC_WINDOW_VERSIONS) {
            store.timer().increment(StoreTimer.Counts.TOO_OLD);
            throw KvException.tooOld();
        }
    }

    /** Reads through this transaction without recording read conflicts. */
    private final class SnapshotView implements ReadTransaction {
        @Override
        public long getReadVersion() {
            return EmbeddedTransaction.this.getReadVersion();
        }

        @Override
        public byte[] get(byte[] key) {
            return EmbeddedTransaction.this.get(key, true);
        }

        @Override
        public byte[] getKey(KeySelector selector) {
            return EmbeddedTransaction.this.getKey(selector, true);
        }

        @Override
        public RangeIterator getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
            return range(begin, end, limit, reverse, true);
        }

        @Override
        public List<List<KeyValue>> getRanges(List<byte[][]> ranges, int limit, boolean reverse) {
            return ranges(ranges, limit, reverse, true);
        }
    }
}

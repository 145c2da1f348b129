package dev.chaise.kv.fdb;

import static dev.chaise.kv.fdb.FdbMapping.await;
import static dev.chaise.kv.fdb.FdbMapping.call;

import com.apple.foundationdb.StreamingMode;
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
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The seam over one fdb-java transaction. FoundationDB itself provides the semantics; this class
 * times every wait, maps errors to {@link KvException}, raises the size and key-range errors
 * synchronously where the embedded engine raises them (FDB's C API would report some of them only
 * at commit), and places every key under the store's {@link KeyPrefix}.
 */
final class FdbTransaction implements Transaction {
    /** FDB's 2021; the embedded engine raises the same code for a versionstamp before commit. */

    private final com.apple.foundationdb.Transaction tr;
    private final StoreTimer timer;
    private final KeyPrefix prefix;
    private final Reads reads;
    private final Reads snapshotReads;
    private final Set<FdbRangeIterator> iterators = ConcurrentHashMap.newKeySet();
    /** Set by a successful commit only, so that a failed one reports 2021 as the embedded engine does. */
    private volatile CompletableFuture<byte[]> versionstamp;
    private volatile long committedVersion = -1;
    private volatile boolean closed;
    /**
     * Whether the next write is blind. FDB's option is set on the fdb transaction only right before
     * that write (once per pair for setAll), so that a write that turns out to be nothing (an empty
     * setAll) still uses it up instead of leaving it for the next one.
     */
    private volatile boolean noWriteConflictNext;

    FdbTransaction(com.apple.foundationdb.Transaction tr, StoreTimer timer) {
        this(tr, timer, KeyPrefix.NONE);
    }

    FdbTransaction(com.apple.foundationdb.Transaction tr, StoreTimer timer, KeyPrefix prefix) {
        this.tr = tr;
        this.timer = timer;
        this.prefix = prefix;
        this.reads = new Reads(tr);
        this.snapshotReads = new Reads(tr.snapshot());
    }

    // ---- reads

    @Override
    public long getReadVersion() {
        return reads.getReadVersion();
    }

    @Override
    public byte[] get(byte[] key) {
        return reads.get(key);
    }

    @Override
    public byte[] getKey(KeySelector selector) {
        return reads.getKey(selector);
    }

    @Override
    public RangeIterator getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
        return reads.getRange(begin, end, limit, reverse);
    }

    @Override
    public ReadTransaction snapshot() {
        return snapshotReads;
    }

    // ---- writes: limits first, so a bad write fails here and not at commit

    @Override
    public void set(byte[] key, byte[] value) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        KvLimits.checkValue(value);
        boolean blind = takeNoWriteConflict();
        call(() -> {
            blindIf(blind);
            tr.set(prefix.add(key), value);
        });
    }

    @Override
    public void setAll(java.util.List<KeyValue> kvs) {
        ensureOpen();
        KvLimits.checkSetAll(kvs);
        boolean blind = takeNoWriteConflict();
        call(() -> {
            for (KeyValue kv : kvs) {
                blindIf(blind);
                tr.set(prefix.add(kv.key()), kv.value());
            }
        });
    }

    @Override
    public void clear(byte[] key) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        boolean blind = takeNoWriteConflict();
        call(() -> {
            blindIf(blind);
            tr.clear(prefix.add(key));
        });
    }

    @Override
    public void clear(byte[] begin, byte[] end) {
        ensureOpen();
        KvLimits.checkRange(begin, end);
        if (Keys.compare(end, Keys.SYSTEM_PREFIX) > 0) {
            throw new KvException(KvException.KEY_OUTSIDE_LEGAL_RANGE, "key_outside_legal_range: key outside legal range");
        }
        boolean blind = takeNoWriteConflict();
        call(() -> {
            blindIf(blind);
            tr.clear(prefix.add(begin), prefix.add(end));
        });
    }

    @Override
    public void mutate(MutationType type, byte[] key, byte[] param) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        KvLimits.checkValue(param);
        com.apple.foundationdb.MutationType t = FdbMapping.toFdb(type);
        boolean blind = takeNoWriteConflict();
        call(() -> {
            blindIf(blind);
            tr.mutate(t, prefix.add(key), param);
        });
    }

    @Override
    public void setVersionstampedKey(byte[] key, byte[] value) {
        ensureOpen();
        Versionstamps.fill(key, new byte[Versionstamps.TX_BYTES]); // validates the trailing offset
        KvLimits.checkWritableKey(Arrays.copyOf(key, key.length - Versionstamps.OFFSET_BYTES));
        KvLimits.checkValue(value);
        // Operands are already in FDB's API 520+ format: passed through unchanged.
        boolean blind = takeNoWriteConflict();
        call(() -> {
            blindIf(blind);
            tr.mutate(com.apple.foundationdb.MutationType.SET_VERSIONSTAMPED_KEY, prefix.addToVersionstampedKey(key), value);
        });
    }

    @Override
    public void setVersionstampedValue(byte[] key, byte[] value) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        Versionstamps.fill(value, new byte[Versionstamps.TX_BYTES]);
        KvLimits.checkValue(Arrays.copyOf(value, value.length - Versionstamps.OFFSET_BYTES));
        boolean blind = takeNoWriteConflict();
        call(() -> {
            blindIf(blind);
            tr.mutate(com.apple.foundationdb.MutationType.SET_VERSIONSTAMPED_VALUE, prefix.add(key), value);
        });
    }

    @Override
    public void nextWriteNoWriteConflictRange() {
        ensureOpen();
        noWriteConflictNext = true; // set on fdb's transaction by the write it is for
    }

    private boolean takeNoWriteConflict() {
        boolean blind = noWriteConflictNext;
        noWriteConflictNext = false;
        return blind;
    }

    /** Inside call(): fdb's option right before the write it is for. */
    private void blindIf(boolean blind) {
        if (blind) tr.options().setNextWriteNoWriteConflictRange();
    }

    @Override
    public void addReadConflictRange(byte[] begin, byte[] end) {
        ensureOpen();
        KvLimits.checkRange(begin, end);
        call(() -> tr.addReadConflictRange(prefix.add(begin), prefix.add(end)));
    }

    @Override
    public void addWriteConflictRange(byte[] begin, byte[] end) {
        ensureOpen();
        KvLimits.checkRange(begin, end);
        call(() -> tr.addWriteConflictRange(prefix.add(begin), prefix.add(end)));
    }

    @Override
    public CompletableFuture<Void> watch(byte[] key) {
        ensureOpen();
        KvLimits.checkWritableKey(key);
        CompletableFuture<Void> inner = call(() -> tr.watch(prefix.add(key)));
        CompletableFuture<Void> out = new CompletableFuture<>();
        inner.whenComplete((v, t) -> {
            if (t == null) out.complete(null);
            else out.completeExceptionally(FdbMapping.map(t));
        });
        // Cancelling the caller's future must cancel the watch, or it counts against the 10,000 limit.
        out.whenComplete((v, t) -> {
            if (out.isCancelled()) inner.cancel(true);
        });
        return out;
    }

    // ---- commit

    @Override
    public void commit() {
        ensureOpen();
        try {
            // FDB hands out the versionstamp only to a request made before commit.
            CompletableFuture<byte[]> vs = call(tr::getVersionstamp);
            await(timer, StoreTimer.Waits.COMMIT, tr::commit);
            long version = call(tr::getCommittedVersion);
            if (version >= 0) {
                // Ready at commit, but completed on fdb's executor: settle it while the transaction is alive.
                await(timer, FdbWaits.VERSIONSTAMP, () -> vs);
            }
            committedVersion = version;
            versionstamp = vs; // read-only: fails with FDB's 2021, as on the embedded engine
            timer.increment(version < 0 ? StoreTimer.Counts.READ_ONLY_COMMITS : StoreTimer.Counts.COMMITS);
        } finally {
            closeIterators();
        }
    }

    @Override
    public byte[] getVersionstamp() {
        CompletableFuture<byte[]> f = versionstamp;
        if (f == null) {
            throw new KvException(KvException.NO_COMMIT_VERSION, "no_commit_version: transaction is not committed and has no versionstamp");
        }
        return await(timer, FdbWaits.VERSIONSTAMP, () -> f).clone();
    }

    @Override
    public long getCommittedVersion() {
        return committedVersion;
    }

    @Override
    public long getApproximateSize() {
        ensureOpen();
        return await(timer, FdbWaits.APPROXIMATE_SIZE, tr::getApproximateSize);
    }

    @Override
    public void close() {
        if (closed) return;
        closed = true;
        closeIterators();
        tr.close(); // cancels uncommitted watches with 1025, as FDB does
    }

    // ---- helpers

    private void ensureOpen() {
        if (closed) {
            throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: transaction already closed");
        }
    }

    /**
     * A read past the seam's {@code \xff} is 2004, as the embedded engine raises it when the read
     * is made (under a prefix FDB itself would not notice: that key is an ordinary one of its).
     */
    private static void checkReadRange(byte[] begin, byte[] end) {
        if (Keys.compare(begin, Keys.SYSTEM_PREFIX) > 0 || Keys.compare(end, Keys.SYSTEM_PREFIX) > 0) {
            throw new KvException(KvException.KEY_OUTSIDE_LEGAL_RANGE, "key_outside_legal_range: key outside legal range");
        }
    }

    private void closeIterators() {
        for (FdbRangeIterator it : new ArrayList<>(iterators)) it.close();
    }

    /** Reads through the transaction or through its snapshot view; only the former add conflicts. */
    private final class Reads implements ReadTransaction {
        private final com.apple.foundationdb.ReadTransaction rt;

        Reads(com.apple.foundationdb.ReadTransaction rt) {
            this.rt = rt;
        }

        @Override
        public long getReadVersion() {
            ensureOpen();
            return await(timer, StoreTimer.Waits.GET_READ_VERSION, rt::getReadVersion);
        }

        @Override
        public byte[] get(byte[] key) {
            ensureOpen();
            return await(timer, StoreTimer.Waits.GET, () -> rt.get(prefix.add(key)));
        }

        @Override
        public byte[] getKey(KeySelector selector) {
            ensureOpen();
            com.apple.foundationdb.KeySelector s = FdbMapping.toFdb(prefix.add(selector));
            return prefix.resolved(await(timer, StoreTimer.Waits.GET_KEY, () -> rt.getKey(s)));
        }

        @Override
        public RangeIterator getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
            ensureOpen();
            checkReadRange(begin, end);
            // ITERATOR: small first batch, growing ones after; the right mode for a lazy cursor.
            var source = call(() -> rt.getRange(prefix.add(begin), prefix.add(end), limit, reverse, StreamingMode.ITERATOR).iterator());
            FdbRangeIterator it = new FdbRangeIterator(source, prefix, timer, iterators::remove);
            iterators.add(it);
            return it;
        }

        /** Every read issued before the first is awaited: one round trip for all of them. */
        @Override
        public java.util.List<java.util.List<KeyValue>> getRanges(java.util.List<byte[][]> ranges, int limit, boolean reverse) {
            ensureOpen();
            for (byte[][] r : ranges) checkReadRange(r[0], r[1]);
            var futures = call(() -> {
                var fs = new ArrayList<CompletableFuture<java.util.List<com.apple.foundationdb.KeyValue>>>(ranges.size());
                for (byte[][] r : ranges) fs.add(rt.getRange(prefix.add(r[0]), prefix.add(r[1]), limit, reverse, StreamingMode.WANT_ALL).asList());
                return fs;
            });
            await(timer, StoreTimer.Waits.RANGE_READ, () -> CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)));
            var out = new ArrayList<java.util.List<KeyValue>>(ranges.size());
            for (var f : futures) {
                var rows = new ArrayList<KeyValue>();
                for (var kv : f.join()) rows.add(new KeyValue(prefix.strip(kv.getKey()), kv.getValue()));
                out.add(rows);
            }
            return out;
        }
    }
}

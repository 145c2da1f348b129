package dev.chaise.views.index;

import static dev.chaise.storage.KeySpace.Db.VIEWS;
import static dev.chaise.storage.KeySpace.ViewData.ERRORS;
import static dev.chaise.storage.KeySpace.ViewData.ID_RANGE;
import static dev.chaise.storage.KeySpace.ViewData.MAP_RANGE;
import static dev.chaise.storage.KeySpace.ViewInfo.BUILD_STATUS;
import static dev.chaise.storage.KeySpace.ViewInfo.CREATION_VS;
import static dev.chaise.storage.KeySpace.ViewInfo.DEFINITION;
import static dev.chaise.storage.KeySpace.ViewInfo.KV_SIZE;
import static dev.chaise.storage.KeySpace.ViewInfo.ROW_COUNT;
import static dev.chaise.storage.KeySpace.ViewInfo.UPDATE_SEQ;
import static dev.chaise.storage.KeySpace.Views.DATA;
import static dev.chaise.storage.KeySpace.Views.INFO;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import dev.chaise.storage.DatabaseSubspace;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.Sequence;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * RFC E: the map indexes of one database, grouped by View Signature.
 *
 * <pre>
 * (1, DbId, 7 VIEWS)
 * ├── 0 INFO
 * │   ├── 0 UPDATE_SEQ, Sig = (Incarnation, Versionstamp)      the change the index is built up to
 * │   ├── 1 CREATION_VS, Sig = (Incarnation, Versionstamp)     interactive: built in the background up to here
 * │   ├── 2 BUILD_STATUS, Sig = "building" | "ready"           interactive views only
 * │   ├── 3 ROW_COUNT, Sig, ViewId = int64 LE                  atomic adds
 * │   ├── 4 KV_SIZE, Sig, ViewId = int64 LE                    atomic adds: key + value JSON bytes
 * │   └── 5 DEFINITION, Sig = (DDocId, DesignJson)             interactive views: what a document write runs
 * └── 1 DATA, Sig
 *     ├── 0 ID_RANGE, DocId, ViewId = (TotalKeys, TotalSize, SortKey...)   what the doc emitted: its unique keys
 *     ├── 1 MAP_RANGE, ViewId, SortKey, DocId, DupeId = (KeyJson, ValueJson)
 *     ├── 2 ERRORS, ViewId, DocId = (Rev, Error, Reason)        map functions that threw (beyond RFC E)
 *     └── 4 REDUCE_TREE, ViewId, ...                             a B+tree over the map rows with partial
 *                                                                reductions in its entries ({@link ReduceTree})
 * </pre>
 *
 * The tags are {@link dev.chaise.storage.KeySpace}'s. Every view has a reduce tree: a reduce
 * query reads O(log n) of its entries for any range or group, and CouchDB's {@code offset} of a
 * map query is a count over it.
 *
 * SortKey is {@code ViewKeyCodec.encode(key)}: its bytes sort in CouchDB's collation, so rows need
 * no comparator. Rows with equal keys sort by raw doc id, as couch_mrview compares ids. ViewId is
 * the view's position in name order. Counts and sizes are keyed by signature first (RFC E puts
 * the view id first), so {@code _view_cleanup} clears an index with one range per kind.
 */
public final class MapIndexSubspace {

    public static final String BUILDING = "building";
    public static final String READY = "ready";

    private MapIndexSubspace() {}

    /** What one document emitted into one view, as its id-range entry records it. */
    public record DocKeys(long totalKeys, long totalSize, List<byte[]> sortKeys) {}

    /** A stored row. */
    public record Row(String keyJson, String docId, String valueJson) {}

    /**
     * The prefix of a view's map rows: a row's key is this, then (SortKey, DocId, DupeId).
     * Continuations relative to it name no signature.
     */
    public static byte[] rowPrefix(DbHandle db, String sig, int viewId) {
        return db.space().pack(VIEWS, DATA, sig, MAP_RANGE, (long) viewId);
    }

    static byte[] info(DbHandle db, long kind, String sig) {
        return db.space().pack(VIEWS, INFO, kind, sig);
    }

    static byte[] counter(DbHandle db, long kind, String sig, int viewId) {
        return db.space().pack(VIEWS, INFO, kind, sig, (long) viewId);
    }

    // ---------------------------------------------------------------- info

    public static Sequence updateSeq(ReadTransaction tx, DbHandle db, String sig) {
        return sequence(tx.get(info(db, UPDATE_SEQ, sig)));
    }

    public static void setUpdateSeq(Transaction tx, DbHandle db, String sig, Sequence seq) {
        tx.set(info(db, UPDATE_SEQ, sig), Tuple.from((long) seq.incarnation(), seq.versionstamp()).pack());
    }

    public static Sequence creationSeq(ReadTransaction tx, DbHandle db, String sig) {
        return sequence(tx.get(info(db, CREATION_VS, sig)));
    }

    public static String buildStatus(ReadTransaction tx, DbHandle db, String sig) {
        byte[] v = tx.get(info(db, BUILD_STATUS, sig));
        return v == null ? null : Tuple.fromBytes(v).getString(0);
    }

    public static void setBuildStatus(Transaction tx, DbHandle db, String sig, String status) {
        tx.set(info(db, BUILD_STATUS, sig), Tuple.from(status).pack());
    }

    /** The creation versionstamp is this transaction's: {@code 0xFFFF} orders it after every document the transaction writes. */
    public static void setCreationSeqToThisTransaction(Transaction tx, DbHandle db, String sig) {
        tx.setVersionstampedValue(info(db, CREATION_VS, sig), Versionstamps.packWithVersionstamp(new byte[0],
                Tuple.from((long) db.incarnation(), Versionstamp.incomplete(0xFFFF))));
    }

    /** An interactive index: the design document it came from, and its definition as JSON. */
    public record Definition(String sig, String ddocId, String json) {}

    public static void setDefinition(Transaction tx, DbHandle db, String sig, String ddocId, String json) {
        tx.set(info(db, DEFINITION, sig), Tuple.from(ddocId, json).pack());
    }

    public static void clearDefinition(Transaction tx, DbHandle db, String sig) {
        tx.clear(info(db, DEFINITION, sig));
    }

    public static List<Definition> definitions(ReadTransaction tx, DbHandle db) {
        byte[][] r = db.space().range(VIEWS, INFO, DEFINITION);
        List<Definition> out = new ArrayList<>();
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) {
            Tuple v = Tuple.fromBytes(kv.value());
            out.add(new Definition(db.space().unpack(kv.key()).getString(3), v.getString(0), v.getString(1)));
        }
        return out;
    }

    private static Sequence sequence(byte[] v) {
        if (v == null) return null;
        Tuple t = Tuple.fromBytes(v);
        return new Sequence((int) t.getLong(0), t.getVersionstamp(1));
    }

    public static long rowCount(ReadTransaction tx, DbHandle db, String sig, int viewId) {
        return littleEndian(tx.get(counter(db, ROW_COUNT, sig, viewId)));
    }

    public static long kvSize(ReadTransaction tx, DbHandle db, String sig, int viewId) {
        return littleEndian(tx.get(counter(db, KV_SIZE, sig, viewId)));
    }

    static void addCounts(Transaction tx, DbHandle db, String sig, int viewId, long rows, long size) {
        if (rows != 0) tx.mutate(MutationType.ADD, counter(db, ROW_COUNT, sig, viewId), littleEndian(rows));
        if (size != 0) tx.mutate(MutationType.ADD, counter(db, KV_SIZE, sig, viewId), littleEndian(size));
    }

    // ---------------------------------------------------------------- id range

    static byte[] idKey(DbHandle db, String sig, String docId, int viewId) {
        return db.space().pack(VIEWS, DATA, sig, ID_RANGE, docId, (long) viewId);
    }

    /** What {@code docId} emitted into every view, indexed by view id; null where nothing. */
    public static DocKeys[] docKeys(ReadTransaction tx, DbHandle db, String sig, String docId, int views) {
        DocKeys[] out = new DocKeys[views];
        byte[][] r = db.space().range(VIEWS, DATA, sig, ID_RANGE, docId);
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) {
            int viewId = (int) db.space().unpack(kv.key()).getLong(5);
            if (viewId >= views) continue;
            Tuple v = Tuple.fromBytes(kv.value());
            List<byte[]> keys = new ArrayList<>(v.size() - 2);
            for (int i = 2; i < v.size(); i++) keys.add(v.getBytes(i));
            out[viewId] = new DocKeys(v.getLong(0), v.getLong(1), keys);
        }
        return out;
    }

    static void setDocKeys(Transaction tx, DbHandle db, String sig, String docId, int viewId, DocKeys keys) {
        Tuple v = Tuple.from(keys.totalKeys(), keys.totalSize());
        for (byte[] k : keys.sortKeys()) v = v.add(k);
        tx.set(idKey(db, sig, docId, viewId), v.pack());
    }

    /**
     * Removes a document's rows from one view, and its id-range entry; the counters follow.
     *
     * @param removed where the removed rows go (read first), or null when nobody needs them
     */
    static void removeDoc(Transaction tx, DbHandle db, String sig, String docId, int viewId, DocKeys old,
                          List<TreeReducer.Row> removed, Deltas deltas) {
        byte[] prefix = rowPrefix(db, sig, viewId);
        for (byte[] sortKey : old.sortKeys()) {
            byte[] p = db.space().pack(VIEWS, DATA, sig, MAP_RANGE, (long) viewId, sortKey, docId);
            if (removed != null) {
                for (KeyValue kv : tx.getRangeAsList(p, Keys.strinc(p), 0, false)) {
                    Tuple v = Tuple.fromBytes(kv.value());
                    removed.add(new TreeReducer.Row(java.util.Arrays.copyOfRange(kv.key(), prefix.length, kv.key().length),
                            v.getString(0), docId, v.getString(1)));
                }
            }
            tx.clear(p, Keys.strinc(p));
        }
        tx.clear(idKey(db, sig, docId, viewId));
        deltas.count(viewId, -old.totalKeys(), -old.totalSize());
    }

    /**
     * Counter changes gathered over a transaction's documents and written once per view: a batch
     * of 500 documents makes one atomic add per counter, not 500.
     */
    static final class Deltas {
        private final long[] rows;
        private final long[] sizes;

        Deltas(int views) {
            rows = new long[views];
            sizes = new long[views];
        }

        void count(int viewId, long n, long size) {
            rows[viewId] += n;
            sizes[viewId] += size;
        }

        void flush(Transaction tx, DbHandle db, String sig) {
            for (int v = 0; v < rows.length; v++) addCounts(tx, db, sig, v, rows[v], sizes[v]);
        }
    }

    // ---------------------------------------------------------------- map range

    static void putRow(Transaction tx, DbHandle db, String sig, int viewId, byte[] sortKey, String docId, long dupe,
                       String keyJson, String valueJson) {
        tx.set(db.space().pack(VIEWS, DATA, sig, MAP_RANGE, (long) viewId, sortKey, docId, dupe),
                Tuple.from(keyJson, valueJson).pack());
    }

    /** A row by its key's parts: the view's {@link #rowPrefix} and the (SortKey, DocId, DupeId) after it. */
    static void putRow(Transaction tx, byte[] rowPrefix, byte[] suffix, String keyJson, String valueJson) {
        tx.set(Keys.concat(rowPrefix, suffix), Tuple.from(keyJson, valueJson).pack());
    }

    /** Every row of a view. */
    public static byte[][] viewRange(DbHandle db, String sig, int viewId) {
        return db.space().range(VIEWS, DATA, sig, MAP_RANGE, (long) viewId);
    }

    /** The first key of rows with {@code sortKey} (and, if given, doc id at least {@code docId}). */
    public static byte[] rowsFrom(DbHandle db, String sig, int viewId, byte[] sortKey, String docId) {
        return docId == null
                ? db.space().pack(VIEWS, DATA, sig, MAP_RANGE, (long) viewId, sortKey)
                : db.space().pack(VIEWS, DATA, sig, MAP_RANGE, (long) viewId, sortKey, docId);
    }

    /** The key just after every row with {@code sortKey} (and, if given, doc id at most {@code docId}). */
    public static byte[] rowsThrough(DbHandle db, String sig, int viewId, byte[] sortKey, String docId) {
        return Keys.strinc(rowsFrom(db, sig, viewId, sortKey, docId));
    }

    public static Row decodeRow(DbHandle db, KeyValue kv) {
        Tuple k = db.space().unpack(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        return new Row(v.getString(0), k.getString(6), v.getString(1));
    }

    // ---------------------------------------------------------------- errors

    public record MapError(String docId, String rev, String error, String reason) {}

    static void setError(Transaction tx, DbHandle db, String sig, int viewId, String docId, String rev, String error, String reason) {
        tx.set(db.space().pack(VIEWS, DATA, sig, ERRORS, (long) viewId, docId), Tuple.from(rev, error, reason).pack());
    }

    static void clearError(Transaction tx, DbHandle db, String sig, int viewId, String docId) {
        tx.clear(db.space().pack(VIEWS, DATA, sig, ERRORS, (long) viewId, docId));
    }

    public static byte[][] errorRange(DbHandle db, String sig, int viewId) {
        return db.space().range(VIEWS, DATA, sig, ERRORS, (long) viewId);
    }

    public static MapError decodeError(DbHandle db, KeyValue kv) {
        Tuple k = db.space().unpack(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        return new MapError(k.getString(5), v.getString(0), v.getString(1), v.getString(2));
    }

    // ---------------------------------------------------------------- cleanup

    /** Signatures that have an update seq: every index that exists. */
    public static List<String> signatures(ReadTransaction tx, DbHandle db) {
        byte[][] r = db.space().range(VIEWS, INFO, UPDATE_SEQ);
        List<String> out = new ArrayList<>();
        for (KeyValue kv : tx.getRangeAsList(r[0], r[1], 0, false)) out.add(db.space().unpack(kv.key()).getString(3));
        return out;
    }

    /** Clears an index's rows, id range, errors, trees and counters; its info (update seq, status) stays. */
    static void clearData(Transaction tx, DbHandle db, String sig) {
        byte[][] data = db.space().range(VIEWS, DATA, sig);
        // Usually empty: then no range clear at all (RocksDB's range tombstones cost every later read there).
        if (tx.getRangeAsList(data[0], data[1], 1, false).isEmpty()) return;
        for (long kind : new long[] {ROW_COUNT, KV_SIZE}) {
            byte[][] r = db.space().range(VIEWS, INFO, kind, sig);
            tx.clear(r[0], r[1]);
        }
        byte[][] d = db.space().range(VIEWS, DATA, sig);
        tx.clear(d[0], d[1]);
    }

    /** Clears one index entirely. */
    public static void clear(Transaction tx, DbHandle db, String sig) {
        for (long kind : new long[] {UPDATE_SEQ, CREATION_VS, BUILD_STATUS, DEFINITION}) tx.clear(info(db, kind, sig));
        for (long kind : new long[] {ROW_COUNT, KV_SIZE}) {
            byte[][] r = db.space().range(VIEWS, INFO, kind, sig);
            tx.clear(r[0], r[1]);
        }
        byte[][] d = db.space().range(VIEWS, DATA, sig);
        tx.clear(d[0], d[1]);
    }

    static byte[] littleEndian(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    static long littleEndian(byte[] v) {
        return v == null ? 0 : ByteBuffer.wrap(java.util.Arrays.copyOf(v, 8)).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

}

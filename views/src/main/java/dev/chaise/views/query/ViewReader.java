package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Keys;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.RevId;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.Collation;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.PartitionedKeys;
import dev.chaise.views.index.ReduceTree;
import dev.chaise.views.index.TreeReducer;
import dev.chaise.views.index.ViewException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Reads one view's rows for a query: key ranges or key lists over RFC E's map range, each a
 * {@link Cursor} that may span transactions; {@code include_docs} reads each document in the
 * transaction that read its row. Keys are encoded as the view's {@link Collation} stores them.
 */
public final class ViewReader {
    private final Collation collation;

    public ViewReader(Collation collation) {
        this.collation = collation;
    }

    /**
     * How {@code include_docs} documents carry their attachments: bodies inline
     * ({@code attachments=true}), and stubs saying how bodies are stored ({@code att_encoding_info=true}).
     */
    public record DocAttachments(boolean inline, boolean encodingInfo) {
        public static final DocAttachments STUBS = new DocAttachments(false, false);
    }

    /**
     * Map rows in query order, before skip and limit.
     *
     * @param rowLimit at most this many rows per cursor (skip + limit of a map query, so
     *     {@code limit=10} reads ten rows, not a transaction's worth); 0 for no bound
     */
    public Iterator<ViewRow> mapRows(Database db, String sig, int viewId, ViewQuery q, boolean withDocs, long rowLimit, DocAttachments atts) {
        DbHandle db0 = db.handle();
        boolean conflicts = Boolean.TRUE.equals(q.conflicts());
        Cursor.RowMapper<ViewRow> mapper = (reader, row) -> {
            MapIndexSubspace.Row r = MapIndexSubspace.decodeRow(reader.handle(), row);
            JsonNode key = parse(r.keyJson());
            JsonNode value = parse(r.valueJson());
            return new ViewRow(key, r.docId(), value, withDocs ? linkedDoc(reader, r.docId(), value, conflicts, atts) : null);
        };
        if (q.keys() != null) {
            List<Iterator<ViewRow>> parts = new ArrayList<>();
            for (JsonNode k : q.keysInOrder()) {
                byte[][] b = bounds(db0, sig, viewId, q.forKey(k));
                if (b != null) parts.add(lazy(() -> cursor(db, b[0], b[1], q.descending(), rowLimit, mapper)));
            }
            return concat(parts);
        }
        byte[][] b = bounds(db0, sig, viewId, q);
        if (b == null) return Collections.emptyIterator();
        return cursor(db, b[0], b[1], q.descending(), rowLimit, mapper);
    }

    /**
     * CouchDB's {@code offset}: how many rows of the view come before the start key in the query's
     * direction (skip not included), start doc id included. A count over the view's reduce tree,
     * O(log n) entries; while the tree is being built, or for an index that keeps none, a count of
     * the rows themselves.
     *
     * @param treed the index keeps reduce trees ({@code DesignDoc.reduceTrees})
     */
    public long offset(Database db, String sig, int viewId, ViewQuery q, boolean treed) {
        JsonNode start = q.keys() != null ? (q.keys().isEmpty() ? null : q.keys().getFirst()) : q.startKey();
        if (start == null) return 0;
        String startDocId = q.keys() == null ? q.startDocId() : null;
        DbHandle db0 = db.handle();
        byte[] sk = PartitionedKeys.sortKey(collation, q.partition(), start);
        byte[][] all = MapIndexSubspace.viewRange(db0, sig, viewId);
        byte[] lo = q.descending() ? MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, startDocId) : all[0];
        byte[] hi = q.descending() ? all[1] : MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, startDocId);
        if (Keys.compare(lo, hi) >= 0) return 0;
        Long counted = !treed ? null : db.read(r -> {
            ReduceTree tree = new ReduceTree(r.handle(), sig, viewId, null);
            ReduceTree.Meta meta = tree.meta(r.tx());
            if (meta == null) return null;
            byte[] from = q.descending() ? tree.suffix(lo) : new byte[0];
            byte[] to = q.descending() ? null : tree.suffix(hi);
            return tree.reduce(r.tx(), meta, from, to, true).rows();
        });
        if (counted != null) return counted;
        long[] n = {0};
        Iterator<Boolean> c = cursor(db, lo, hi, false, 0, (reader, row) -> {
            n[0]++;
            return null;
        });
        while (c.hasNext()) c.next();
        return n[0];
    }

    /** Whether the view's reduce tree is current: reduce queries read it, else they reduce rows as they stream by. */
    public boolean hasTree(Database db, String sig, int viewId) {
        return db.read(r -> new ReduceTree(r.handle(), sig, viewId, null).meta(r.tx()) != null);
    }

    /** A reduce query from the view's tree, group by group (see {@link TreeGroups}). */
    public Iterator<ViewRow> treeGroups(Database db, String sig, int viewId, Reducer<?> reducer, ViewQuery q, long groupLevel) {
        return new TreeGroups(db, sig, viewId, reducer, q, groupLevel, collation, q.keys() == null ? bounds(db.handle(), sig, viewId, q) : null);
    }

    /** Map rows in query order as reducers see them, for reducing while a tree is being built. */
    public Iterator<TreeReducer.Row> reduceRows(Database db, String sig, int viewId, ViewQuery q) {
        ReduceTree tree = new ReduceTree(db.handle(), sig, viewId, null);
        Cursor.RowMapper<TreeReducer.Row> mapper = (reader, row) -> tree.row(row);
        if (q.keys() != null) throw new IllegalArgumentException("keys: see rowsPerKey");
        byte[][] b = bounds(db.handle(), sig, viewId, q);
        if (b == null) return Collections.emptyIterator();
        return cursor(db, b[0], b[1], q.descending(), 0, mapper);
    }

    /** The rows of each key of {@code keys}, one iterator per key (reduce groups never span two). */
    public List<Iterator<TreeReducer.Row>> rowsPerKey(Database db, String sig, int viewId, ViewQuery q) {
        ReduceTree tree = new ReduceTree(db.handle(), sig, viewId, null);
        Cursor.RowMapper<TreeReducer.Row> mapper = (reader, row) -> tree.row(row);
        DbHandle db0 = db.handle();
        List<Iterator<TreeReducer.Row>> out = new ArrayList<>();
        for (JsonNode k : q.keys()) {
            byte[] sk = PartitionedKeys.sortKey(collation, q.partition(), k);
            byte[] lo = MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, null);
            byte[] hi = MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, null);
            out.add(lazy(() -> cursor(db, lo, hi, q.descending(), 0, mapper)));
        }
        return out;
    }

    /** A cursor over [lo, hi) of the database's view subspace; continuations relative to the database. */
    private static <T> Iterator<T> cursor(Database db, byte[] lo, byte[] hi, boolean descending, long limit, Cursor.RowMapper<T> mapper) {
        return db.subspaces().scan(new Cursor.Range(db.handle().space().prefix(), lo, hi), ScanProperties.of(descending, limit), null, mapper);
    }

    /** [begin, end) of a key range query (within its partition, if it names one), or null when it is empty. */
    byte[][] bounds(DbHandle db, String sig, int viewId, ViewQuery q) {
        byte[][] all = q.partition() == null ? MapIndexSubspace.viewRange(db, sig, viewId) : PartitionedKeys.range(db, sig, viewId, q.partition());
        byte[] lo = all[0];
        byte[] hi = all[1];
        JsonNode low = q.descending() ? q.endKey() : q.startKey();
        String lowId = q.descending() ? q.endDocId() : q.startDocId();
        JsonNode high = q.descending() ? q.startKey() : q.endKey();
        String highId = q.descending() ? q.startDocId() : q.endDocId();
        boolean lowInclusive = !q.descending() || q.inclusiveEnd();
        boolean highInclusive = q.descending() || q.inclusiveEnd();
        if (low != null) {
            byte[] sk = PartitionedKeys.sortKey(collation, q.partition(), low);
            lo = max(lo, lowInclusive ? MapIndexSubspace.rowsFrom(db, sig, viewId, sk, lowId) : MapIndexSubspace.rowsThrough(db, sig, viewId, sk, lowId));
        }
        if (high != null) {
            byte[] sk = PartitionedKeys.sortKey(collation, q.partition(), high);
            hi = min(hi, highInclusive ? MapIndexSubspace.rowsThrough(db, sig, viewId, sk, highId) : MapIndexSubspace.rowsFrom(db, sig, viewId, sk, highId));
        }
        return Keys.compare(lo, hi) >= 0 ? null : new byte[][] {lo, hi};
    }

    /**
     * The document of an {@code include_docs} row: the one a value's {@code _id} (and {@code _rev})
     * names, as CouchDB's linked documents, else the row's own; JSON null if missing or deleted.
     */
    private static JsonNode linkedDoc(DbReader reader, String docId, JsonNode value, boolean conflicts, DocAttachments atts) {
        String id = docId;
        RevId rev = null;
        if (value.isObject() && value.get("_id") != null && value.get("_id").isTextual()) {
            id = value.get("_id").textValue();
            JsonNode r = value.get("_rev");
            if (r != null && r.isTextual()) {
                try {
                    rev = RevId.parse(r.textValue());
                } catch (StorageException e) {
                    return Json.NODES.nullNode();
                }
            }
        }
        try {
            StoredDoc d = reader.get(id, rev, conflicts); // the cursor reads at snapshot already
            ObjectNode out = DocumentJson.renderWithConflicts(d); // branches were read only if conflicts was asked for
            if (atts.inline()) reader.inlineAttachments(d, out, 0);
            if (atts.encodingInfo()) DocumentJson.showEncoding(d, out);
            return out;
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND) return Json.NODES.nullNode();
            throw e;
        }
    }

    static JsonNode parse(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException("a stored view row is not JSON", e);
        }
    }

    private static byte[] max(byte[] a, byte[] b) {
        return Keys.compare(a, b) >= 0 ? a : b;
    }

    private static byte[] min(byte[] a, byte[] b) {
        return Keys.compare(a, b) <= 0 ? a : b;
    }

    static <T> Iterator<T> lazy(java.util.function.Supplier<Iterator<T>> s) {
        return new Iterator<>() {
            Iterator<T> it;

            @Override
            public boolean hasNext() {
                if (it == null) it = s.get();
                return it.hasNext();
            }

            @Override
            public T next() {
                if (!hasNext()) throw new NoSuchElementException();
                return it.next();
            }
        };
    }

    static <T> Iterator<T> concat(List<Iterator<T>> parts) {
        return new Iterator<>() {
            int i;

            @Override
            public boolean hasNext() {
                while (i < parts.size()) {
                    if (parts.get(i).hasNext()) return true;
                    i++;
                }
                return false;
            }

            @Override
            public T next() {
                if (!hasNext()) throw new NoSuchElementException();
                return parts.get(i).next();
            }
        };
    }
}

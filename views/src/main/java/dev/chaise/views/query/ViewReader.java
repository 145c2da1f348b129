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
import dev.chaise.views.collation.ViewKeyCodec;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.ViewException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Reads one view's rows for a query: key ranges or key lists over RFC E's map range, each a
 * {@link Cursor} that may span transactions; {@code include_docs} reads each document in the
 * transaction that read its row.
 */
public final class ViewReader {

    /** Map rows in query order, before skip and limit. */
    public Iterator<ViewRow> mapRows(Database db, String sig, int viewId, ViewQuery q, boolean withDocs) {
        return mapRows(db, sig, viewId, q, withDocs, 0);
    }

    /**
     * @param rowLimit at most this many rows per cursor (skip + limit of a map query, so
     *     {@code limit=10} reads ten rows, not a transaction's worth); 0 for no bound
     */
    public Iterator<ViewRow> mapRows(Database db, String sig, int viewId, ViewQuery q, boolean withDocs, long rowLimit) {
        return mapRows(db, sig, viewId, q, withDocs, rowLimit, false);
    }

    /** @param attachments inline attachment bodies into included documents */
    public Iterator<ViewRow> mapRows(Database db, String sig, int viewId, ViewQuery q, boolean withDocs, long rowLimit, boolean attachments) {
        DbHandle db0 = db.handle();
        boolean conflicts = Boolean.TRUE.equals(q.conflicts());
        Cursor.RowMapper<ViewRow> mapper = (reader, row) -> {
            MapIndexSubspace.Row r = MapIndexSubspace.decodeRow(reader.handle(), row);
            JsonNode key = parse(r.keyJson());
            JsonNode value = parse(r.valueJson());
            return new ViewRow(key, r.docId(), value, withDocs ? linkedDoc(reader, r.docId(), value, conflicts, attachments) : null);
        };
        if (q.keys() != null) {
            List<Iterator<ViewRow>> parts = new ArrayList<>();
            for (JsonNode k : q.keys()) {
                byte[] sk = ViewKeyCodec.encode(k);
                byte[] lo = MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, null);
                byte[] hi = MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, null);
                parts.add(lazy(() -> cursor(db, lo, hi, q.descending(), rowLimit, mapper)));
            }
            return concat(parts);
        }
        byte[][] b = bounds(db0, sig, viewId, q);
        if (b == null) return Collections.emptyIterator();
        return cursor(db, b[0], b[1], q.descending(), rowLimit, mapper);
    }

    /**
     * CouchDB's {@code offset}: how many rows of the view come before the start key in the query's
     * direction (skip not included): the per-key counts of every key before it, plus, with a start
     * doc id, the rows under the start key itself that come before that id. Reads one aggregate
     * entry per distinct key, not every row.
     */
    public long offset(Database db, String sig, int viewId, ViewQuery q) {
        JsonNode start = q.keys() != null ? (q.keys().isEmpty() ? null : q.keys().getFirst()) : q.startKey();
        if (start == null) return 0;
        String startDocId = q.keys() == null ? q.startDocId() : null;
        DbHandle db0 = db.handle();
        byte[] sk = ViewKeyCodec.encode(start);
        byte[][] aggAll = MapIndexSubspace.aggregateRange(db0, sig, viewId);
        byte[] at = MapIndexSubspace.aggregatesFrom(db0, sig, viewId, sk);
        byte[] lo = q.descending() ? Keys.strinc(at) : aggAll[0];
        byte[] hi = q.descending() ? aggAll[1] : at;
        long[] n = {0};
        if (Keys.compare(lo, hi) < 0) {
            Iterator<Boolean> c = cursor(db, lo, hi, false, 0, (reader, row) -> {
                MapIndexSubspace.AggregatePart p = MapIndexSubspace.decodeAggregate(reader.handle(), row);
                if (p.isCount()) n[0] += p.number();
                return null;
            });
            while (c.hasNext()) c.next();
        }
        if (startDocId != null) {
            byte[] rlo = q.descending() ? MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, startDocId) : MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, null);
            byte[] rhi = q.descending() ? MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, null) : MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, startDocId);
            if (Keys.compare(rlo, rhi) < 0) {
                Iterator<Boolean> c = cursor(db, rlo, rhi, false, 0, (reader, row) -> {
                    n[0]++;
                    return null;
                });
                while (c.hasNext()) c.next();
            }
        }
        return n[0];
    }

    /**
     * Per-key aggregates of a {@code _count} or {@code _sum} view as rows whose value is the
     * key's partial reduction, in query order: one entry per distinct key instead of every row.
     * Keys with a zero count (every row removed) are skipped.
     */
    public Iterator<ViewRow> aggregateRows(Database db, String sig, int viewId, ViewQuery q, boolean sum) {
        DbHandle db0 = db.handle();
        Cursor.RowMapper<MapIndexSubspace.AggregatePart> mapper = (reader, row) -> MapIndexSubspace.decodeAggregate(reader.handle(), row);
        List<Iterator<MapIndexSubspace.AggregatePart>> parts = new ArrayList<>();
        if (q.keys() != null) {
            for (JsonNode k : q.keys()) {
                byte[] p = MapIndexSubspace.aggregatesFrom(db0, sig, viewId, ViewKeyCodec.encode(k));
                parts.add(lazy(() -> cursor(db, p, Keys.strinc(p), q.descending(), 0, mapper)));
            }
        } else {
            byte[][] all = MapIndexSubspace.aggregateRange(db0, sig, viewId);
            byte[] lo = all[0];
            byte[] hi = all[1];
            JsonNode low = q.descending() ? q.endKey() : q.startKey();
            JsonNode high = q.descending() ? q.startKey() : q.endKey();
            boolean lowInclusive = !q.descending() || q.inclusiveEnd();
            boolean highInclusive = q.descending() || q.inclusiveEnd();
            if (low != null) {
                byte[] k = MapIndexSubspace.aggregatesFrom(db0, sig, viewId, ViewKeyCodec.encode(low));
                lo = max(lo, lowInclusive ? k : Keys.strinc(k));
            }
            if (high != null) {
                byte[] k = MapIndexSubspace.aggregatesFrom(db0, sig, viewId, ViewKeyCodec.encode(high));
                hi = min(hi, highInclusive ? Keys.strinc(k) : k);
            }
            if (Keys.compare(lo, hi) >= 0) return Collections.emptyIterator();
            byte[] begin = lo;
            byte[] end = hi;
            parts.add(lazy(() -> cursor(db, begin, end, q.descending(), 0, mapper)));
        }
        Iterator<MapIndexSubspace.AggregatePart> it = concat(parts);
        return new Iterator<>() {
            MapIndexSubspace.AggregatePart carry;
            ViewRow next;

            @Override
            public boolean hasNext() {
                while (next == null && (carry != null || it.hasNext())) {
                    MapIndexSubspace.AggregatePart first = carry != null ? carry : it.next();
                    carry = null;
                    long count = 0;
                    long total = 0;
                    long inexact = 0;
                    String key = null;
                    MapIndexSubspace.AggregatePart p = first;
                    while (true) {
                        if (p.isCount()) count = p.number();
                        else if (p.isSum()) total = p.number();
                        else if (p.isInexact()) inexact = p.number();
                        else if (p.keyJson() != null) key = p.keyJson();
                        if (!it.hasNext()) break;
                        p = it.next();
                        if (!java.util.Arrays.equals(p.sortKey(), first.sortKey())) {
                            carry = p;
                            break;
                        }
                    }
                    if (count <= 0 || key == null) continue;
                    if (sum && inexact != 0) throw new IllegalStateException("inexact sums are answered from rows");
                    next = new ViewRow(parse(key), null, Json.NODES.numberNode(sum ? total : count), null);
                }
                return next != null;
            }

            @Override
            public ViewRow next() {
                if (!hasNext()) throw new NoSuchElementException();
                ViewRow r = next;
                next = null;
                return r;
            }
        };
    }

    /** Whether any key of a {@code _sum} view has values that are not int64s (then sums come from rows). */
    public boolean anyInexact(Database db, String sig, int viewId) {
        return db.read(reader -> {
            DbHandle h = reader.handle();
            byte[][] r = MapIndexSubspace.aggregateRange(h, sig, viewId);
            try (var it = reader.tx().getRange(r[0], r[1])) {
                while (it.hasNext()) {
                    MapIndexSubspace.AggregatePart p = MapIndexSubspace.decodeAggregate(h, it.next());
                    if (p.isInexact() && p.number() != 0) return true;
                }
            }
            return false;
        });
    }

    /** Map rows of each key of {@code keys}, one iterator per key (reduce groups never span two). */
    public List<Iterator<ViewRow>> rowsPerKey(Database db, String sig, int viewId, ViewQuery q) {
        List<Iterator<ViewRow>> out = new ArrayList<>();
        for (JsonNode k : q.keys()) {
            ViewQuery one = new ViewQuery(List.of(k), null, null, null, null, true, q.descending(), 0, Long.MAX_VALUE, false,
                    null, false, null, null, null, q.update(), true, false);
            out.add(lazy(() -> mapRows(db, sig, viewId, one, false)));
        }
        return out;
    }

    /** A cursor over [lo, hi) of the database's view subspace; continuations relative to the database. */
    private static <T> Iterator<T> cursor(Database db, byte[] lo, byte[] hi, boolean descending, long limit, Cursor.RowMapper<T> mapper) {
        return db.scan(new Cursor.Range(db.handle().space().prefix(), lo, hi), ScanProperties.of(descending, limit), null, mapper);
    }

    /** [begin, end) of a key range query, or null when it is empty. */
    static byte[][] bounds(DbHandle db, String sig, int viewId, ViewQuery q) {
        byte[][] all = MapIndexSubspace.viewRange(db, sig, viewId);
        byte[] lo = all[0];
        byte[] hi = all[1];
        JsonNode low = q.descending() ? q.endKey() : q.startKey();
        String lowId = q.descending() ? q.endDocId() : q.startDocId();
        JsonNode high = q.descending() ? q.startKey() : q.endKey();
        String highId = q.descending() ? q.startDocId() : q.endDocId();
        boolean lowInclusive = !q.descending() || q.inclusiveEnd();
        boolean highInclusive = q.descending() || q.inclusiveEnd();
        if (low != null) {
            byte[] sk = ViewKeyCodec.encode(low);
            lo = max(lo, lowInclusive ? MapIndexSubspace.rowsFrom(db, sig, viewId, sk, lowId) : MapIndexSubspace.rowsThrough(db, sig, viewId, sk, lowId));
        }
        if (high != null) {
            byte[] sk = ViewKeyCodec.encode(high);
            hi = min(hi, highInclusive ? MapIndexSubspace.rowsThrough(db, sig, viewId, sk, highId) : MapIndexSubspace.rowsFrom(db, sig, viewId, sk, highId));
        }
        return Keys.compare(lo, hi) >= 0 ? null : new byte[][] {lo, hi};
    }

    /**
     * The document of an {@code include_docs} row: the one a value's {@code _id} (and {@code _rev})
     * names, as CouchDB's linked documents, else the row's own; JSON null if missing or deleted.
     */
    private static JsonNode linkedDoc(DbReader reader, String docId, JsonNode value, boolean conflicts, boolean attachments) {
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
            if (attachments) reader.inlineAttachments(id, out, 0);
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

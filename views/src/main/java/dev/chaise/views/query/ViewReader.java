package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.storage.DatabaseDirectory;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentStore;
import dev.chaise.storage.RangeCursor;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.RevId;
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
 * {@link RangeCursor} that may span transactions; {@code include_docs} reads each document in the
 * transaction that read its row.
 */
public final class ViewReader {
    private final KvStore kv;
    private final DatabaseDirectory databases;

    public ViewReader(KvStore kv, DatabaseDirectory databases) {
        this.kv = kv;
        this.databases = databases;
    }

    /** Map rows in query order, before skip and limit. */
    public Iterator<ViewRow> mapRows(String dbName, String sig, int viewId, ViewQuery q, boolean withDocs) {
        return mapRows(dbName, sig, viewId, q, withDocs, 0);
    }

    /**
     * @param rowLimit at most this many rows per cursor (skip + limit of a map query, so
     *     {@code limit=10} reads ten rows, not a transaction's worth); 0 for no bound
     */
    public Iterator<ViewRow> mapRows(String dbName, String sig, int viewId, ViewQuery q, boolean withDocs, long rowLimit) {
        return mapRows(dbName, sig, viewId, q, withDocs, rowLimit, false);
    }

    /** @param attachments inline attachment bodies into included documents */
    public Iterator<ViewRow> mapRows(String dbName, String sig, int viewId, ViewQuery q, boolean withDocs, long rowLimit, boolean attachments) {
        DbHandle db0 = databases.open(dbName);
        boolean conflicts = Boolean.TRUE.equals(q.conflicts());
        RangeCursor.Mapper<ViewRow> mapper = (tx, db, row) -> {
            MapIndexSubspace.Row r = MapIndexSubspace.decodeRow(db, row);
            JsonNode key = parse(r.keyJson());
            JsonNode value = parse(r.valueJson());
            return new ViewRow(key, r.docId(), value, withDocs ? linkedDoc(tx, db, r.docId(), value, conflicts, attachments) : null);
        };
        if (q.keys() != null) {
            List<Iterator<ViewRow>> parts = new ArrayList<>();
            for (JsonNode k : q.keys()) {
                byte[] sk = ViewKeyCodec.encode(k);
                byte[] lo = MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, null);
                byte[] hi = MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, null);
                parts.add(lazy(() -> cursor(dbName, db0, lo, hi, q.descending(), rowLimit, mapper)));
            }
            return concat(parts);
        }
        byte[][] b = bounds(db0, sig, viewId, q);
        if (b == null) return Collections.emptyIterator();
        return cursor(dbName, db0, b[0], b[1], q.descending(), rowLimit, mapper);
    }

    /**
     * CouchDB's {@code offset}: how many rows of the view come before the start key in the query's
     * direction (skip not included): the per-key counts of every key before it, plus, with a start
     * doc id, the rows under the start key itself that come before that id. Reads one aggregate
     * entry per distinct key, not every row.
     */
    public long offset(String dbName, String sig, int viewId, ViewQuery q) {
        JsonNode start = q.keys() != null ? (q.keys().isEmpty() ? null : q.keys().getFirst()) : q.startKey();
        if (start == null) return 0;
        String startDocId = q.keys() == null ? q.startDocId() : null;
        DbHandle db0 = databases.open(dbName);
        byte[] sk = ViewKeyCodec.encode(start);
        byte[][] aggAll = MapIndexSubspace.aggregateRange(db0, sig, viewId);
        byte[] at = MapIndexSubspace.aggregatesFrom(db0, sig, viewId, sk);
        byte[] lo = q.descending() ? Keys.strinc(at) : aggAll[0];
        byte[] hi = q.descending() ? aggAll[1] : at;
        long[] n = {0};
        if (Keys.compare(lo, hi) < 0) {
            RangeCursor<Boolean> c = new RangeCursor<>(kv, tx -> databases.open(tx, dbName), lo, hi, false, 0, (tx, db, row) -> {
                MapIndexSubspace.AggregatePart p = MapIndexSubspace.decodeAggregate(db, row);
                if (p.isCount()) n[0] += p.number();
                return null;
            });
            while (c.hasNext()) c.next();
        }
        if (startDocId != null) {
            byte[] rlo = q.descending() ? MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, startDocId) : MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, null);
            byte[] rhi = q.descending() ? MapIndexSubspace.rowsThrough(db0, sig, viewId, sk, null) : MapIndexSubspace.rowsFrom(db0, sig, viewId, sk, startDocId);
            if (Keys.compare(rlo, rhi) < 0) {
                RangeCursor<Boolean> c = new RangeCursor<>(kv, tx -> databases.open(tx, dbName), rlo, rhi, false, 0, (tx, db, row) -> {
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
    public Iterator<ViewRow> aggregateRows(String dbName, String sig, int viewId, ViewQuery q, boolean sum) {
        DbHandle db0 = databases.open(dbName);
        RangeCursor.Mapper<MapIndexSubspace.AggregatePart> mapper = (tx, db, row) -> MapIndexSubspace.decodeAggregate(db, row);
        List<Iterator<MapIndexSubspace.AggregatePart>> parts = new ArrayList<>();
        if (q.keys() != null) {
            for (JsonNode k : q.keys()) {
                byte[] p = MapIndexSubspace.aggregatesFrom(db0, sig, viewId, ViewKeyCodec.encode(k));
                parts.add(lazy(() -> cursor2(dbName, db0, p, Keys.strinc(p), q.descending(), mapper)));
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
            parts.add(lazy(() -> cursor2(dbName, db0, begin, end, q.descending(), mapper)));
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
    public boolean anyInexact(String dbName, String sig, int viewId) {
        return kv.run(tx -> {
            DbHandle db = databases.open(tx, dbName);
            byte[][] r = MapIndexSubspace.aggregateRange(db, sig, viewId);
            try (var it = tx.snapshot().getRange(r[0], r[1])) {
                while (it.hasNext()) {
                    MapIndexSubspace.AggregatePart p = MapIndexSubspace.decodeAggregate(db, it.next());
                    if (p.isInexact() && p.number() != 0) return true;
                }
            }
            return false;
        });
    }

    private <T> Iterator<T> cursor2(String dbName, DbHandle db0, byte[] lo, byte[] hi, boolean descending, RangeCursor.Mapper<T> mapper) {
        return new RangeCursor<>(kv, tx -> {
            DbHandle now = databases.open(tx, dbName);
            if (now.id() != db0.id()) throw StorageException.notFound("Database does not exist.");
            return now;
        }, lo, hi, descending, 0, mapper);
    }

    /** Map rows of each key of {@code keys}, one iterator per key (reduce groups never span two). */
    public List<Iterator<ViewRow>> rowsPerKey(String dbName, String sig, int viewId, ViewQuery q) {
        List<Iterator<ViewRow>> out = new ArrayList<>();
        for (JsonNode k : q.keys()) {
            ViewQuery one = new ViewQuery(List.of(k), null, null, null, null, true, q.descending(), 0, Long.MAX_VALUE, false,
                    null, false, null, null, null, q.update(), true, false);
            out.add(lazy(() -> mapRows(dbName, sig, viewId, one, false)));
        }
        return out;
    }

    private Iterator<ViewRow> cursor(String dbName, DbHandle db0, byte[] lo, byte[] hi, boolean descending, long limit,
                                     RangeCursor.Mapper<ViewRow> mapper) {
        return new RangeCursor<>(kv, tx -> {
            DbHandle now = databases.open(tx, dbName);
            if (now.id() != db0.id()) throw StorageException.notFound("Database does not exist.");
            return now;
        }, lo, hi, descending, limit, mapper);
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
    private static JsonNode linkedDoc(ReadTransaction tx, DbHandle db, String docId, JsonNode value, boolean conflicts, boolean attachments) {
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
            DocumentStore.StoredDoc d = DocumentStore.get(tx, db, id, rev, conflicts); // the cursor reads at snapshot already
            ObjectNode out = DocumentJson.renderWithConflicts(d); // branches were read only if conflicts was asked for
            if (attachments) dev.chaise.storage.AttachmentsSubspace.inline(tx, db, id, out, 0);
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

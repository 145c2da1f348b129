package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.storage.Cursor;
import dev.chaise.storage.Database;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.PartitionedKeys;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Mango for one server: {@code _find}, {@code _explain} and the index endpoints
 * ({@link MangoIndexes}). A query is planned as CouchDB plans it ({@link Planner}), then its index
 * is read as a storage {@link Cursor} over each range {@link ScanPlanner} gives, in index order
 * (reversed for a descending sort), each row matched against the selector in the transaction that
 * read it:
 *
 * <ul>
 *   <li>a covering JSON index (every field asked for and matched on is a column or {@code _id})
 *       answers from its keys: no document is read (CouchDB 3.4);
 *   <li>otherwise the winning revision is read; with {@code fields}, only the top-level members the
 *       projection and the selector need are read from the exploded body (RFC A), not the whole
 *       document.
 * </ul>
 *
 * Only matching rows count towards {@code skip} and {@code limit}; the bookmark names the last
 * one's position ({@link Bookmark}).
 */
public final class Mango {
    /** Bytes a scan's transaction reads, its documents included, before the cursor goes on in the next one. */
    private static final long BYTES_PER_TRANSACTION = 4_000_000;
    /** Rows whose documents are read in one batch; the cursor never reads ahead past what its limit can use. */
    private static final int PREFETCH_ROWS = 64;

    private final ViewIndexes views;
    private final MangoIndexes indexes = new MangoIndexes();
    private final MangoStats counts;

    /**
     * @param views design documents and index readiness, from the views package
     * @param stats where queries are counted
     */
    public Mango(ViewIndexes views, dev.chaise.stats.Stats stats) {
        this.views = views;
        this.counts = new MangoStats(stats);
    }

    /** CouchDB's {@code mango.*} metrics (mango_cursor, mango_cursor_view, mango_execution_stats, mango_selector). */
    private record MangoStats(dev.chaise.stats.Counter unindexed, dev.chaise.stats.Counter invalidIndex, dev.chaise.stats.Counter tooManyScanned,
                              dev.chaise.stats.Counter keys, dev.chaise.stats.Counter docs, dev.chaise.stats.Counter quorumDocs,
                              dev.chaise.stats.Counter results, dev.chaise.stats.Counter evaluated, dev.chaise.stats.Histogram time) {
        MangoStats(dev.chaise.stats.Stats s) {
            this(s.counter("mango.unindexed_queries", "number of _find queries that read no index but _all_docs"),
                    s.counter("mango.query_invalid_index", "number of _find queries whose use_index could not be used"),
                    s.counter("mango.too_many_docs_scanned", "number of _find queries that examined more than 10 documents per result"),
                    s.counter("mango.keys_examined", "number of index keys _find queries examined"),
                    s.counter("mango.docs_examined", "number of documents _find queries read"),
                    s.counter("mango.quorum_docs_examined", "number of documents _find queries with r above 1 read"),
                    s.counter("mango.results_returned", "number of rows _find queries answered"),
                    s.counter("mango.evaluate_selector", "number of times a _find selector was matched against a document"),
                    s.histogram("mango.query_time", "milliseconds a _find query took"));
        }
    }

    public MangoIndexes indexes() {
        return indexes;
    }

    // ---------------------------------------------------------------- _find

    /** Runs a {@code _find} body. */
    public Find.Result find(Database db, JsonNode body) {
        long start = System.nanoTime();
        Find.Query q = Find.parse(body);
        noTextSearch(q);
        Bookmark bookmark = Bookmark.decode(q.bookmark());
        Planner.Choice choice = choose(db, q, indexes.list(db), Sort.names(q.sort()), false);
        MangoIndex index = choice.index();
        if (bookmark != null && !bookmark.isOn(index)) {
            // A later page stays on the index its first page ran on, while that can still serve the query.
            index = choice.usable().stream().filter(bookmark::isOn).findFirst().orElseThrow(() -> Bookmark.invalid(q.bookmark()));
        }
        Run run = new Run(db, q, index, bookmark);
        boolean nothing = q.limit() == 0 || q.selector().noopRange() || (index == choice.index() && choice.empty());
        if (!nothing) {
            if (index.special()) run.special();
            else run.json();
        }
        List<String> warnings = new ArrayList<>();
        useIndexWarning(q, index, warnings);
        if (index.special()) {
            warnings.add(Find.NO_INDEX_WARNING);
            counts.unindexed().increment();
        }
        long examined = run.docs + run.quorumDocs;
        double ratio = run.out.isEmpty() ? examined : (double) examined / run.out.size();
        if (ratio > 10) {
            warnings.add(Find.SCAN_WARNING);
            counts.tooManyScanned().increment();
        }
        String next = run.last != null ? run.last.encode() : q.bookmark() != null ? q.bookmark() : "nil";
        Find.Stats stats = new Find.Stats(run.keys, run.docs, run.quorumDocs, run.out.size(), (System.nanoTime() - start) / 1e6);
        count(stats, run.evaluated);
        return new Find.Result(run.out, next, warnings, stats);
    }

    /**
     * A {@code _find} body run for a user of a per-document access database over the documents
     * they may read ({@link OwnDocsScan}), never over an index: the planner sees no JSON index,
     * so {@code use_index} is a warning (or {@code invalid_index} without fallback) whatever the
     * database holds, and a sort needs none. The documents come back as the user may see them.
     */
    public Find.Result findOwn(SecuredDb db, JsonNode body) {
        long start = System.nanoTime();
        Find.Query q = Find.parse(body);
        noTextSearch(q);
        Bookmark bookmark = Bookmark.decode(q.bookmark());
        Planner.Choice choice = choose(db.database(), q, List.of(), List.of(), false);
        OwnDocsScan scan = new OwnDocsScan(db, q);
        OwnDocsScan.Page page = scan.run(bookmark);
        List<String> warnings = new ArrayList<>();
        useIndexWarning(q, choice.index(), warnings);
        String next = page.bookmark() != null ? page.bookmark() : q.bookmark() != null ? q.bookmark() : "nil";
        Find.Stats stats = new Find.Stats(scan.keys, scan.docs, scan.quorumDocs, page.docs().size(), (System.nanoTime() - start) / 1e6);
        count(stats, scan.evaluated);
        return new Find.Result(page.docs(), next, warnings, stats);
    }

    private void count(Find.Stats stats, long evaluated) {
        counts.keys().add(stats.keysExamined());
        counts.docs().add(stats.docsExamined());
        counts.quorumDocs().add(stats.quorumDocsExamined());
        counts.results().add(stats.resultsReturned());
        counts.evaluated().add(evaluated);
        counts.time().record(stats.millis());
    }

    /**
     * {@code _explain} for a user of a per-document access database, as {@link #findOwn} runs the
     * query: on the special index (their own {@code _all_docs}), with no other index as a
     * candidate, so nothing tells them which indexes the database's admins built.
     */
    public ObjectNode explainOwn(SecuredDb db, JsonNode body) {
        Find.Query q = Find.parse(body);
        noTextSearch(q);
        return explain(db.database(), q, choose(db.database(), q, List.of(), List.of(), true));
    }

    /** CouchDB's warning when {@code use_index} named an index the query did not run on. */
    private void useIndexWarning(Find.Query q, MangoIndex index, List<String> warnings) {
        if (!q.useIndex().given() || q.useIndex().selects(index.ddoc(), index.name())) return;
        warnings.add(q.useIndex().name() == null
                ? "_design/" + q.useIndex().ddoc() + " was not used because it does not contain a valid index for this query."
                : "_design/" + q.useIndex().ddoc() + ", " + q.useIndex().name() + " was not used because it is not a valid index for this query.");
        counts.invalidIndex().increment();
    }

    /**
     * The index a query runs on ({@link Planner}) among {@code jsonIndexes}, for a sort by
     * {@code sortFields}; a partition's query of a database that is not partitioned can only fall
     * to {@code _all_docs}, which refuses it as CouchDB's does.
     */
    private static Planner.Choice choose(Database db, Find.Query q, List<JsonIndex> jsonIndexes, List<String> sortFields, boolean forExplain) {
        Planner.Choice c = Planner.choose(q.selector(), sortFields, q.useIndex(), q.allowFallback(), jsonIndexes, forExplain,
                db.partitioned(), q.partition() != null);
        if (q.partition() != null && !db.partitioned() && c.index() != null) {
            throw new MangoException("query_parse_error", "`partition` parameter is not supported on this db"); // couch_mrview_util:validate_all_docs_args
        }
        return c;
    }

    /** One query's scan: what it found, and what it examined on the way. */
    private final class Run {
        final Database db;
        final Find.Query q;
        final MangoIndex index;
        final Bookmark from;
        final List<ObjectNode> out = new ArrayList<>();
        final List<String> required;
        final boolean covering;
        /** Top-level members to read instead of whole documents, or null. */
        final Set<String> members;
        final byte[] tag;
        long keys;
        long docs;
        long quorumDocs;
        /** Selector matches run. */
        long evaluated;
        int matched;
        Bookmark last;

        Run(Database db, Find.Query q, MangoIndex index, Bookmark from) {
            this.db = db;
            this.q = q;
            this.index = index;
            this.from = from;
            this.required = q.requiredFields();
            this.covering = index.covers(required);
            this.members = covering ? null : members(required);
            this.tag = Bookmark.tag(index);
        }

        /** Whether enough rows have matched: skip, then limit. */
        boolean done() {
            return matched >= (long) q.skip() + q.limit();
        }

        long remaining() {
            return (long) q.skip() + q.limit() - matched;
        }

        /** A matching row: skipped, or kept; either way the bookmark moves past it. */
        void take(ObjectNode doc, int range, Cursor<?> cursor) {
            if (matched++ >= q.skip()) out.add(doc);
            last = new Bookmark(tag, range, cursor.continuation());
        }

        /** Where range {@code k} (in scan order) starts: skipped before the bookmark, resumed at it. */
        byte[] resumeIn(int k) {
            return from != null && from.range() == k ? from.continuation() : null;
        }

        boolean skipRange(int k) {
            return from != null && k < from.range();
        }

        <T> Cursor<T> open(java.util.function.Supplier<Cursor<T>> cursor) {
            try {
                return cursor.get();
            } catch (StorageException e) {
                if (e.kind() == StorageException.Kind.BAD_REQUEST) throw Bookmark.invalid(q.bookmark()); // a continuation outside the range
                throw e;
            }
        }

        void special() {
            List<ScanPlanner.IdSpan> spans = ScanPlanner.planIds(q.selector());
            boolean desc = q.descending();
            for (int k = 0; k < spans.size() && !done(); k++) {
                if (skipRange(k)) continue;
                ScanPlanner.IdSpan s = spans.get(desc ? spans.size() - 1 - k : k);
                Database.IdRange range = desc ? new Database.IdRange(s.end(), s.start(), true) : new Database.IdRange(s.start(), s.end(), s.inclusiveEnd());
                byte[] resume = resumeIn(k);
                Cursor<ObjectNode> c = open(() -> db.allDocs(q.partition(), range, props(desc), resume, (reader, row) -> {
                    if (row.id().startsWith(DocumentJson.DESIGN_PREFIX)) return null;
                    keys++;
                    return matchDoc(reader, row.id());
                }));
                drain(c, k);
            }
        }

        void json() {
            JsonIndex ji = index.json();
            DesignDoc ddoc;
            try {
                ddoc = views.designDoc(db, ji.ddoc());
            } catch (StorageException e) {
                if (e.kind() == StorageException.Kind.NOT_FOUND) throw changed(ji);
                throw e;
            }
            int viewId = ddoc.viewIndex(ji.name());
            if (viewId < 0) throw changed(ji);
            views.prepare(db, ddoc, !q.readAsIs());
            String sig = ddoc.signature();
            DbHandle h = db.handle();
            byte[] prefix = MapIndexSubspace.rowPrefix(h, sig, viewId);
            // a partitioned index's sort keys start with the partition (PartitionedKeys)
            byte[] part = ji.partitioned() ? PartitionedKeys.prefix(q.partition()) : new byte[0];
            List<ScanPlanner.KeyRange> ranges = ScanPlanner.plan(q.selector(), ji.columns());
            boolean desc = q.descending();
            for (int k = 0; k < ranges.size() && !done(); k++) {
                if (skipRange(k)) continue;
                ScanPlanner.KeyRange r = ranges.get(desc ? ranges.size() - 1 - k : k);
                byte[] lo = MapIndexSubspace.rowsFrom(h, sig, viewId, Keys.concat(part, r.begin()), null);
                byte[] hi = MapIndexSubspace.rowsFrom(h, sig, viewId, Keys.concat(part, r.end()), null);
                byte[] resume = resumeIn(k);
                Cursor.RowMapper<ObjectNode> rows = covering
                        ? (reader, kv) -> {
                            keys++;
                            return matchKey(reader, kv, ji);
                        }
                        : new DocRows();
                Cursor<ObjectNode> c = open(() -> db.subspaces().scan(new Cursor.Range(prefix, lo, hi), props(desc), resume, rows));
                drain(c, k);
            }
        }

        private static MangoException changed(JsonIndex ji) {
            return new MangoException(409, "conflict", "The index " + ji.name() + " of " + ji.ddoc() + " changed while the query ran; try again.");
        }

        private ScanProperties props(boolean desc) {
            return ScanProperties.of(desc, remaining()).bytesPerTransaction(BYTES_PER_TRANSACTION);
        }

        private void drain(Cursor<ObjectNode> c, int k) {
            while (!done() && c.hasNext()) take(c.next(), k, c);
        }

        /**
         * An index's rows mapped to their documents, which are read ahead a run of rows at a time
         * ({@link DbReader#winners}: two batched reads instead of two reads per row), in the
         * transaction that reads the rows.
         */
        private final class DocRows implements Cursor.RowMapper<ObjectNode> {
            private final Map<String, StoredDoc> ahead = new HashMap<>();

            @Override
            public int prefetchSize() {
                return PREFETCH_ROWS;
            }

            @Override
            public void prefetch(DbReader reader, List<KeyValue> rows) {
                ahead.clear();
                List<String> ids = new ArrayList<>(rows.size());
                for (KeyValue kv : rows) ids.add(MapIndexSubspace.decodeRow(reader.handle(), kv).docId());
                List<StoredDoc> read = reader.winners(ids, members, q.conflicts());
                for (int i = 0; i < ids.size(); i++) ahead.put(ids.get(i), read.get(i));
            }

            @Override
            public ObjectNode map(DbReader reader, KeyValue kv) {
                keys++;
                String id = MapIndexSubspace.decodeRow(reader.handle(), kv).docId();
                if (!ahead.containsKey(id)) return matchDoc(reader, id);
                StoredDoc d = ahead.get(id);
                return d == null ? null : match(d); // null: deleted since the row was written
            }
        }

        /** A document read with the row (the same snapshot), matched, and cut to the fields asked for; null if it does not match. */
        private ObjectNode matchDoc(DbReader reader, String id) {
            StoredDoc d;
            try {
                d = members != null ? reader.getMembers(id, members, q.conflicts()) : reader.get(id, null, q.conflicts());
            } catch (StorageException e) {
                if (e.kind() == StorageException.Kind.NOT_FOUND) return null; // deleted since the row was written
                throw e;
            }
            return match(d);
        }

        private ObjectNode match(StoredDoc d) {
            if (q.r() > 1) quorumDocs++;
            else docs++;
            // With conflicts asked for, the selector sees _conflicts, as in CouchDB.
            ObjectNode doc = q.conflicts() ? DocumentJson.renderWithConflicts(d) : DocumentJson.render(d);
            evaluated++;
            if (!q.selector().matches(doc)) return null;
            return q.fields() == null ? doc : Find.project(doc, q.fields());
        }

        /** A covering index's row as a document: {@code _id} and each column's value from the key. */
        private ObjectNode matchKey(DbReader reader, KeyValue kv, JsonIndex ji) {
            MapIndexSubspace.Row row = MapIndexSubspace.decodeRow(reader.handle(), kv);
            JsonNode key;
            try {
                key = Json.MAPPER.readTree(row.keyJson());
            } catch (java.io.IOException e) {
                throw new IllegalStateException("a stored index key is not JSON", e);
            }
            ObjectNode doc = Json.NODES.objectNode();
            doc.put("_id", row.docId());
            for (int i = 0; i < ji.columns().size() && i < key.size(); i++) Find.set(doc, Selector.parseField(ji.columns().get(i)), key.get(i));
            evaluated++;
            if (!q.selector().matches(doc)) return null;
            return Find.project(doc, q.fields());
        }
    }

    /**
     * The body's top-level members a projection needs (its fields' and the selector's first
     * segments), or null when the whole document must be read: no projection, a text search, or
     * a name storage cannot look up alone.
     */
    static Set<String> members(List<String> required) {
        if (required == null) return null;
        Set<String> out = new LinkedHashSet<>();
        for (String f : required) {
            if (f.equals("$default")) return null;
            String top = Selector.parseField(f).getFirst();
            if (top.equals("_id") || top.equals("_rev")) continue; // from the revision, not the body
            if (top.equals("_conflicts") || top.equals("_deleted")) continue; // from the branches, or never
            out.add(top);
        }
        return out;
    }

    /**
     * {@code $text} needs a text index. CouchDB without its search service runs such a query on
     * the special index, where {@code $text} matches every document: an answer that only looks
     * right. Chaise says it cannot.
     */
    private static void noTextSearch(Find.Query q) {
        if (q.selector().isTextSearch()) {
            throw new MangoException(501, "index_not_implemented", "Chaise has no full-text search: $text needs a text index, which it does not build");
        }
    }

    // ---------------------------------------------------------------- _explain

    /** {@code _explain}: CouchDB 3.5's answer, plus {@code ranges}, the key ranges Chaise reads. */
    public ObjectNode explain(Database db, JsonNode body) {
        Find.Query q = Find.parse(body);
        noTextSearch(q);
        return explain(db, q, choose(db, q, indexes.list(db), Sort.names(q.sort()), true));
    }

    private static ObjectNode explain(Database db, Find.Query q, Planner.Choice c) {
        ObjectNode out = Json.NODES.objectNode();
        out.put("dbname", db.name());
        if (c.index() == null) out.putNull("index");
        else out.set("index", c.index().toJson());
        out.put("partitioned", db.partitioned());
        out.set("selector", q.selector().toJson());
        out.set("opts", Find.opts(q));
        out.put("limit", q.limit());
        out.put("skip", q.skip());
        out.set("fields", Find.fieldsJson(q.fields()));
        out.set("index_candidates", Planner.candidates(c, q.fields()));
        out.set("selector_hints", Planner.selectorHints(q.selector()));
        if (c.index() == null) return out;
        MangoIndex index = c.index();
        boolean covering = index.covers(q.requiredFields());
        ObjectNode mr = out.putObject("mrargs");
        mr.put("include_docs", q.r() == 1 && !covering);
        mr.put("view_type", "map");
        mr.put("reduce", false);
        if (q.partition() == null) mr.putNull("partition");
        else mr.put("partition", q.partition());
        JsonNode startKey = c.empty() ? Json.NODES.nullNode() : Planner.startKey(index, c.ranges());
        JsonNode endKey = c.empty() ? Json.NODES.nullNode() : Planner.endKey(index, c.ranges());
        mr.set("start_key", q.descending() ? endKey : startKey);
        mr.set("end_key", q.descending() ? startKey : endKey);
        mr.put("direction", q.descending() ? "rev" : "fwd");
        mr.put("stable", q.stable() || q.staleOk());
        mr.put("update", !q.readAsIs());
        if (q.conflicts()) mr.put("conflicts", true);
        else mr.put("conflicts", "undefined");
        out.put("covering", covering);
        ArrayNode ranges = out.putArray("ranges");
        boolean none = q.selector().noopRange() || c.empty();
        if (!none && index.special()) {
            for (ScanPlanner.IdSpan s : ScanPlanner.planIds(q.selector())) {
                ObjectNode r = ranges.addObject();
                if (s.start() == null) r.putNull("start_key");
                else r.put("start_key", s.start());
                if (s.end() == null) r.putNull("end_key");
                else r.put("end_key", s.end());
                r.put("inclusive_end", s.end() == null || s.inclusiveEnd());
            }
        } else if (!none) {
            for (ScanPlanner.KeyRange r : ScanPlanner.plan(q.selector(), index.columns())) ranges.add(r.describe());
        }
        return out;
    }
}

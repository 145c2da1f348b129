package dev.chaise.views.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import dev.chaise.storage.Database;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.views.JavaMaps;
import dev.chaise.views.ViewQueries;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.collation.ViewCollation;
import dev.chaise.views.js.JsFunctionException;
import dev.chaise.views.query.BuiltinReducers;
import dev.chaise.views.query.Reducer;
import dev.chaise.views.query.ViewQuery;
import dev.chaise.views.query.ViewReader;
import dev.chaise.views.query.ViewRow;
import dev.chaise.views.query.Views;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Model-based: random writes, updates and deletes of documents whose map functions emit random
 * rows (several per document, duplicate keys, array keys), and purges of them, into views with every built-in reduce,
 * two JavaScript-style reduces and a map-only view. After every step, random reduce queries
 * (ranges, doc-id bounds, inclusive_end, descending, group levels, keys) must equal the same
 * reducer run over the view's map rows, recomputed from scratch; map queries' {@code offset} must
 * equal a count of those rows. After every run (and every 25 steps) each tree's structural
 * invariants hold ({@link ReduceTree#check}). Trees get a small order (at most five children per
 * entry), so a few hundred rows make four levels and every split and merge happens often.
 */
class ReduceTreeModelTest {
    static final String DDOC = "_design/r";
    static final ReduceTree.Order SMALL = new ReduceTree.Order(5, 2, 4);

    /** View name, map function, reduce (null: map-only). Names sort in view-id order. */
    static final String[][] VIEWS = {
            {"astats", "arrs", "_stats"}, {"asum", "arrs", "_sum"}, {"bottom", "mixed", "_bottom_2"}, {"count", "nums", "_count"},
            {"distinct", "nums", "_approx_count_distinct"}, {"first", "mixed", "_first"}, {"js", "nums", "jssum"},
            {"js2", "nums", "jscountsum"}, {"last", "mixed", "_last"}, {"rows", "nums", null}, {"stats", "nums", "_stats"},
            {"sum", "nums", "_sum"}, {"top", "mixed", "_top_3"}};

    final JavaMaps js = new JavaMaps()
            .define("nums", emitting("nums"))
            .define("arrs", emitting("arrs"))
            .define("mixed", emitting("mixed"))
            .defineReduce("jssum", (keys, values, rereduce) -> {
                long n = 0;
                double d = 0;
                boolean exact = true;
                for (JsonNode v : values) {
                    if (v.isIntegralNumber()) n += v.longValue();
                    else {
                        exact = false;
                        d += v.doubleValue();
                    }
                }
                return exact ? Json.NODES.numberNode(n) : Json.NODES.numberNode(n + d);
            })
            .defineReduce("jscountsum", (keys, values, rereduce) -> {
                long count = 0;
                double sum = 0;
                for (JsonNode v : values) {
                    count += rereduce ? v.get(0).longValue() : 1;
                    sum += rereduce ? v.get(1).doubleValue() : v.doubleValue();
                }
                return Json.NODES.arrayNode().add(count).add(sum);
            });

    private static JavaMaps.Fn emitting(String field) {
        return (doc, emit) -> {
            for (JsonNode e : doc.path(field)) emit.accept(e.get(0), e.get(1));
        };
    }

    // ---------------------------------------------------------------- runs

    @Test
    void reduceQueriesEqualRecomputationAfterEveryStep() {
        for (long seed = 1; seed <= 2; seed++) run(new Run(seed, FaultInjection.NONE, 1, false, 110, false));
    }

    @Test
    void underFaults() {
        run(new Run(11, new FaultInjection(0.04, 0.03, 0.04, 0.5, 11), 1, false, 90, false));
    }

    /** A first build in parallel segments (the merge loads the trees), then incremental updates; with faults too. */
    @Test
    void afterParallelFirstBuilds() {
        run(new Run(21, FaultInjection.NONE, 3, false, 70, false));
        run(new Run(22, new FaultInjection(0.04, 0.03, 0.04, 0.5, 22), 3, false, 60, false));
    }

    /** A parallel first build (and its merge's bulk load) racing a writer; the next builds catch up incrementally. */
    @Test
    void parallelFirstBuildRacingAWriter() {
        run(new Run(41, FaultInjection.NONE, 3, false, 40, true));
    }

    /** Interactive: trees made with the index, kept by each document's own transaction. */
    @Test
    void interactiveViews() {
        run(new Run(31, FaultInjection.NONE, 1, true, 90, false));
    }

    /** @param racing a second thread writes documents while the first build runs */
    record Run(long seed, FaultInjection faults, int workers, boolean interactive, int steps, boolean racing) {}

    private Database db;
    private ViewsModule views;
    private String sig;
    private Random rnd;
    private int queries;
    private int groupsCompared;

    private void run(Run run) {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(run.faults));
             Storage store = new Storage(kv, "{}")) {
            retry(() -> store.create("m"));
            db = store.open("m");
            rnd = new Random(run.seed);
            views = new ViewsModule(store, js, new ViewsModule.Options(run.workers, 7, SMALL));
            if (run.interactive) views.enableInteractiveViews();
            ObjectNode ddoc = designDoc(run.interactive);
            sig = DesignDoc.parse(DDOC, ddoc).signature();
            int before = run.workers > 1 ? 40 : run.interactive ? 15 : 0;
            for (int i = 0; i < before; i++) step(); // a parallel first build needs a few segments of changes
            write(DDOC, ddoc);
            if (run.racing) {
                Thread writer = Thread.ofPlatform().start(() -> {
                    Random r = new Random(run.seed + 1000);
                    for (int i = 0; i < 80; i++) {
                        String id = "d" + r.nextInt(60);
                        if (r.nextInt(5) == 0) delete(id);
                        else write(id, randomDoc(r));
                    }
                });
                query(VIEWS[0][0], randomQuery(false)); // the first build, racing the writer
                try {
                    writer.join();
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            for (int s = 0; s < run.steps; s++) {
                step();
                rowCache.clear();
                String where = "seed " + run.seed + " step " + s;
                // Every step queries five views at random (every view every tenth step), twice each.
                List<Integer> order = new ArrayList<>();
                for (int v = 0; v < VIEWS.length; v++) order.add(v);
                Collections.shuffle(order, rnd);
                for (int v : s % 10 == 0 ? order : order.subList(0, 5)) {
                    for (int k = 0; k < 2; k++) checkReduce(v, randomQuery(run.interactive), where);
                }
                for (int v : order.subList(5, 7)) checkOffset(v, where);
                if (s % 25 == 24) checkStructure(where);
                if (s == 0) {
                    for (int v = 0; v < VIEWS.length; v++) assertTrue(new ViewReader(dev.chaise.views.collation.Collation.DEFAULT).hasTree(db, sig, v), "the tree answers " + VIEWS[v][0]);
                }
            }
            checkStructure("seed " + run.seed + " end");
            assertTrue(groupsCompared > run.steps * 5, "compared " + groupsCompared + " groups in " + queries + " queries");
            views.close();
        }
    }

    private ObjectNode designDoc(boolean interactive) {
        ObjectNode ddoc = Json.NODES.objectNode();
        ObjectNode vs = ddoc.putObject("views");
        for (String[] v : VIEWS) {
            ObjectNode o = vs.putObject(v[0]).put("map", v[1]);
            if (v[2] != null) o.put("reduce", v[2]);
        }
        if (interactive) ddoc.putObject("options").put("interactive", true);
        return ddoc;
    }

    /** One random write: a new or changed document (sometimes a few at once), a deletion, or a purge. */
    private void step() {
        int n = rnd.nextInt(8) == 0 ? 2 + rnd.nextInt(6) : 1;
        for (int i = 0; i < n; i++) {
            String id = "d" + rnd.nextInt(40);
            int what = rnd.nextInt(20);
            if (what < 4) delete(id);
            else if (what == 4) purge(id); // the purge hook takes the rows out of the trees in its transaction
            else write(id, randomDoc(rnd));
        }
    }

    // ---------------------------------------------------------------- random data

    private static final String[] KEYS = {"1", "2", "2.5", "-1", "10", "\"a\"", "\"A\"", "\"b\"", "\"é\"", "\"z\"", "null", "true", "false",
            "[\"a\"]", "[\"a\",1]", "[\"a\",2]", "[\"a\",1,0]", "[\"a\",1,1]", "[\"b\"]", "[\"b\",1]", "[\"b\",2,\"x\"]", "[1,2]", "[\"a\",1.0]",
            "{\"o\":1}"};
    private static final String[] MIXED = {"1", "1.0", "2", "-3", "0.5", "\"x\"", "\"X\"", "\"y\"", "null", "true", "false", "[1]", "[1,\"a\"]",
            "{\"a\":1}", "{}", "[]"};

    private JsonNode randomKey() {
        return randomKey(rnd);
    }

    private static JsonNode randomKey(Random rnd) {
        return parse(KEYS[rnd.nextInt(KEYS.length)]);
    }

    private static ObjectNode randomDoc(Random rnd) {
        ObjectNode doc = Json.NODES.objectNode();
        ArrayNode nums = doc.putArray("nums");
        for (int i = rnd.nextInt(5); i > 0; i--) {
            JsonNode v = rnd.nextInt(6) == 0 ? Json.NODES.numberNode((rnd.nextInt(9) - 4) / 4.0) : Json.NODES.numberNode(rnd.nextInt(26) - 5);
            nums.addArray().add(randomKey(rnd)).add(v);
        }
        ArrayNode arrs = doc.putArray("arrs");
        for (int i = rnd.nextInt(4); i > 0; i--) {
            ArrayNode v = Json.NODES.arrayNode().add(rnd.nextInt(10)).add(rnd.nextInt(10) - 3);
            if (rnd.nextInt(25) == 0) v.add(1); // a longer array: _stats fails as CouchDB 3.5's does
            arrs.addArray().add(randomKey(rnd)).add(v);
        }
        ArrayNode mixed = doc.putArray("mixed");
        for (int i = rnd.nextInt(4); i > 0; i--) mixed.addArray().add(randomKey(rnd)).add(parse(MIXED[rnd.nextInt(MIXED.length)]));
        return doc;
    }

    private ViewQuery randomQuery(boolean interactive) {
        long[] levels = {0, 1, 2, ViewQuery.EXACT};
        long level = levels[rnd.nextInt(levels.length)];
        boolean descending = rnd.nextBoolean();
        ViewQuery.Update update = interactive ? ViewQuery.Update.FALSE : ViewQuery.Update.TRUE;
        if (rnd.nextInt(6) == 0) {
            List<JsonNode> keys = new ArrayList<>();
            for (int i = 1 + rnd.nextInt(3); i > 0; i--) keys.add(randomKey());
            return new ViewQuery(keys, null, null, null, null, true, descending, 0, Long.MAX_VALUE, false, null, false, null, true, null,
                    update, true, false);
        }
        JsonNode start = rnd.nextInt(3) == 0 ? null : randomKey();
        JsonNode end = rnd.nextInt(3) == 0 ? null : randomKey();
        if (start != null && end != null) {
            int c = ViewCollation.compare(start, end);
            if (descending ? c < 0 : c > 0) {
                JsonNode t = start;
                start = end;
                end = t;
            }
        }
        String startId = start != null && rnd.nextInt(4) == 0 ? "d" + rnd.nextInt(40) : null;
        String endId = end != null && rnd.nextInt(4) == 0 ? "d" + rnd.nextInt(40) : null;
        boolean inclusiveEnd = rnd.nextInt(4) != 0;
        return new ViewQuery(null, start, startId, end, endId, inclusiveEnd, descending, 0, Long.MAX_VALUE, false, null, false, null,
                level == ViewQuery.EXACT ? Boolean.TRUE : null, level == ViewQuery.EXACT || level == 0 ? null : level, update, true, false);
    }

    // ---------------------------------------------------------------- checks

    private void checkReduce(int v, ViewQuery q, String where) {
        String[] view = VIEWS[v];
        if (view[2] == null) return;
        long level = q.keys() != null ? ViewQuery.EXACT : q.groupLevel() != null ? q.groupLevel() : Boolean.TRUE.equals(q.group()) ? ViewQuery.EXACT : 0;
        List<String> actual;
        try {
            actual = query(view[0], q);
        } catch (ViewException e) {
            if (e.kind() == ViewException.Kind.QUERY_PARSE_ERROR) return; // a start doc id past the end doc id of one key
            throw e;
        }
        List<String> expected = expected(v, q, level);
        queries++;
        groupsCompared += expected.size();
        assertEquals(expected, actual, where + " view " + view[0] + " " + describe(q, level));
    }

    private void checkOffset(int v, String where) {
        JsonNode start = randomKey();
        String startId = rnd.nextBoolean() ? "d" + rnd.nextInt(40) : null;
        boolean descending = rnd.nextBoolean();
        ViewQuery q = new ViewQuery(null, start, startId, null, null, true, descending, 0, 3, false, null, false, false, null, null,
                ViewQuery.Update.FALSE, true, false);
        long expected = 0;
        for (TreeReducer.Row r : mapRows(v)) {
            int c = ViewCollation.compare(r.key(), start);
            boolean before = descending ? c > 0 || (c == 0 && startId != null && r.docId().compareTo(startId) > 0)
                    : c < 0 || (c == 0 && startId != null && r.docId().compareTo(startId) < 0);
            if (before) expected++;
        }
        for (int attempt = 0; ; attempt++) {
            try (ViewQueries.Result r = views.queries().query(db, DDOC, VIEWS[v][0], q)) {
                assertEquals(mapRows(v).size(), r.totalRows(), where + " total_rows of " + VIEWS[v][0]);
                assertEquals(expected, r.offset(), where + " offset of " + VIEWS[v][0] + " from " + start + "/" + startId + (descending ? " descending" : ""));
                return;
            } catch (KvException e) {
                if (attempt > 20) throw e;
            }
        }
    }

    private void checkStructure(String where) {
        DesignDoc ddoc = DesignDoc.parse(DDOC, designDoc(false));
        for (int v = 0; v < VIEWS.length; v++) {
            int viewId = v;
            TreeReducer<?> reducer = reducer(v);
            List<String> problems = db.read(r -> new ReduceTree(r.handle(), sig, viewId, reducer).check(r.tx()));
            assertEquals(List.of(), problems, where + " tree of " + VIEWS[v][0]);
            ReduceTree.Meta meta = db.read(r -> new ReduceTree(r.handle(), sig, viewId, null).meta(r.tx()));
            if (mapRows(v).size() > 150) assertTrue(meta.height() >= 3, where + ": " + mapRows(v).size() + " rows should make a tall tree, " + meta);
        }
        assertEquals(ddoc.views().size(), VIEWS.length);
    }

    /** The query through the service; a reduce error ends the rows as it ends a response. */
    private List<String> query(String view, ViewQuery q) {
        for (int attempt = 0; ; attempt++) {
            List<String> out = new ArrayList<>();
            try (ViewQueries.Result r = views.queries().query(db, DDOC, view, q)) {
                try {
                    r.rows().forEachRemaining(x -> out.add(x.key() + "=" + x.value()));
                } catch (ViewException e) {
                    if (e.kind() != ViewException.Kind.REDUCE_ERROR) throw e;
                    out.add("ERROR:" + e.error());
                }
                return out;
            } catch (KvException e) {
                if (attempt > 20) throw e; // faults can exhaust a read's retries too; a client would retry
            }
        }
    }

    private final java.util.Map<Integer, List<TreeReducer.Row>> rowCache = new java.util.HashMap<>();

    /** The view's map rows, in index order, read straight from the map range (once per step). */
    private List<TreeReducer.Row> mapRows(int v) {
        return rowCache.computeIfAbsent(v, x -> {
            for (int attempt = 0; ; attempt++) {
                try {
                    return db.read(r -> new ReduceTree(r.handle(), sig, v, null).rows(r.tx(), new byte[0], null, 0, false));
                } catch (KvException e) {
                    if (attempt > 20) throw e;
                }
            }
        });
    }

    /** The query's answer recomputed: filter the map rows by the query, group them, reduce each group in one call. */
    @SuppressWarnings("unchecked")
    private List<String> expected(int v, ViewQuery q, long level) {
        Reducer<Object> reducer = (Reducer<Object>) reducer(v);
        List<TreeReducer.Row> all = mapRows(v);
        List<List<TreeReducer.Row>> groups = new ArrayList<>();
        if (q.keys() != null) {
            for (JsonNode k : q.keys()) {
                List<TreeReducer.Row> g = new ArrayList<>();
                for (TreeReducer.Row r : all) if (ViewCollation.compare(r.key(), k) == 0) g.add(r);
                if (!g.isEmpty()) groups.add(g);
            }
        } else {
            List<TreeReducer.Row> in = new ArrayList<>();
            for (TreeReducer.Row r : all) if (inRange(r, q)) in.add(r);
            if (q.descending()) Collections.reverse(in);
            JsonNode current = null;
            for (TreeReducer.Row r : in) {
                JsonNode gk = groupKey(r.key(), level);
                if (current == null || ViewCollation.compare(gk, current) != 0) {
                    groups.add(new ArrayList<>());
                    current = gk;
                }
                groups.getLast().add(r);
            }
        }
        List<String> out = new ArrayList<>();
        for (List<TreeReducer.Row> g : groups) {
            JsonNode key = q.keys() != null ? (q.descending() ? g.getLast() : g.getFirst()).key() : groupKey(g.getFirst().key(), level);
            List<TreeReducer.Row> ordered = new ArrayList<>(g);
            if (q.descending() && q.keys() == null) Collections.reverse(ordered); // back to index order
            try {
                out.add(key + "=" + reducer.finish(reducer.reduce(ordered)));
            } catch (ViewException e) {
                out.add("ERROR:" + e.error());
                break;
            }
        }
        return out;
    }

    private static boolean inRange(TreeReducer.Row r, ViewQuery q) {
        JsonNode lowKey = q.descending() ? q.endKey() : q.startKey();
        String lowId = q.descending() ? q.endDocId() : q.startDocId();
        boolean lowInclusive = !q.descending() || q.inclusiveEnd();
        JsonNode highKey = q.descending() ? q.startKey() : q.endKey();
        String highId = q.descending() ? q.startDocId() : q.endDocId();
        boolean highInclusive = q.descending() || q.inclusiveEnd();
        if (lowKey != null) {
            int c = ViewCollation.compare(r.key(), lowKey);
            if (c < 0) return false;
            if (c == 0) {
                if (lowInclusive ? lowId != null && r.docId().compareTo(lowId) < 0 : lowId == null || r.docId().compareTo(lowId) <= 0) return false;
            }
        }
        if (highKey != null) {
            int c = ViewCollation.compare(r.key(), highKey);
            if (c > 0) return false;
            if (c == 0) {
                if (highInclusive ? highId != null && r.docId().compareTo(highId) > 0 : highId == null || r.docId().compareTo(highId) >= 0) return false;
            }
        }
        return true;
    }

    private static JsonNode groupKey(JsonNode key, long level) {
        if (level == 0) return Json.NODES.nullNode();
        if (level == ViewQuery.EXACT || !key.isArray() || key.size() <= level) return key;
        ArrayNode a = Json.NODES.arrayNode();
        for (int i = 0; i < level; i++) a.add(key.get(i));
        return a;
    }

    private TreeReducer<?> reducer(int v) {
        String r = VIEWS[v][2];
        if (r == null) return null;
        if (r.startsWith("_")) return BuiltinReducers.of(r);
        try {
            return Views.jsReducer(js.reduceProgram(new dev.chaise.views.js.JsEngine.ReduceSource(DDOC, List.of(r), null)), 0);
        } catch (JsFunctionException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String describe(ViewQuery q, long level) {
        return (q.keys() != null ? "keys=" + q.keys() : "start=" + q.startKey() + "/" + q.startDocId() + " end=" + q.endKey() + "/" + q.endDocId()
                + (q.inclusiveEnd() ? "" : " exclusive")) + (q.descending() ? " descending" : "") + " level " + level;
    }

    // ---------------------------------------------------------------- documents

    private void write(String id, ObjectNode body) {
        ViewModelTest.write(db, id, body);
    }

    private void delete(String id) {
        ViewModelTest.delete(db, id);
    }

    private void purge(String id) {
        retry(() -> {
            dev.chaise.storage.RevId rev = dev.chaise.views.DocOps.current(db, id);
            if (rev != null) db.purge(List.of(new dev.chaise.storage.PurgeRequest(id, List.of(rev))));
        });
    }

    private static void retry(Runnable r) {
        dev.chaise.views.DocOps.retry(r);
    }

    private static JsonNode parse(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}

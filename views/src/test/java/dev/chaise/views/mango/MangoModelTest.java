package dev.chaise.views.mango;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.RevId;
import dev.chaise.storage.ScanProperties;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DocOps;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.collation.ViewCollation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * Model-based: random documents (values of every JSON type, so comparisons cross types), random
 * selectors built from every Mango operator, random sorts, skips, limits and projections. Every
 * {@code _find} must return what a scan of all documents, filtered by the same selector, returns:
 * the same documents, in the same order of sort values, each projected as asked; paging through
 * with bookmarks must give the same documents, none twice. Indexes on several columns (and a
 * partial one) make the planner choose among them and the scan planner split {@code $in} and
 * {@code $or} into ranges. Also under fault injection, and while another thread writes.
 */
class MangoModelTest {
    static final String[] FIELDS = {"a", "b", "c.x", "tags", "m", "_id"};

    @Test
    void findEqualsAFilteredScan() {
        for (long seed = 1; seed <= 2; seed++) run(seed, FaultInjection.NONE, false);
    }

    @Test
    void findEqualsAFilteredScanUnderFaults() {
        run(11, new FaultInjection(0.05, 0.02, 0.05, 0.5, 11), false);
    }

    /** Interactive indexes: written in each document's transaction, read without any build. */
    @Test
    void interactiveIndexesEqualAFilteredScan() {
        run(21, FaultInjection.NONE, true);
    }

    private void run(long seed, FaultInjection faults, boolean interactive) {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(faults));
             Storage store = new Storage(kv, "{}")) {
            DocOps.retry(() -> store.create("m"));
            Database db = store.open("m");
            ViewsModule views = new ViewsModule(store, null);
            if (interactive) views.enableInteractiveViews();
            Mango mango = new Mango(views.queries(), new dev.chaise.stats.Stats());
            Random rnd = new Random(seed);
            for (int i = 0; i < 120; i++) write(db, id(i), randomDoc(rnd));
            createIndexes(mango, db, interactive);
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 40; i++) {
                    String id = id(rnd.nextInt(140));
                    if (rnd.nextInt(6) == 0) delete(db, id);
                    else write(db, id, randomDoc(rnd));
                }
                Map<String, ObjectNode> docs = scan(db);
                for (int q = 0; q < 100; q++) check(mango, db, docs, randomQuery(rnd), "seed " + seed + " round " + round + " query " + q, interactive);
            }
            views.close();
        }
    }

    static void createIndexes(Mango mango, Database db, boolean interactive) {
        String extra = interactive ? ",\"interactive\":true" : "";
        for (String body : List.of(
                "{\"index\":{\"fields\":[\"a\"]},\"ddoc\":\"ia\",\"name\":\"a\"" + extra + "}",
                "{\"index\":{\"fields\":[\"a\",\"b\"]},\"ddoc\":\"iab\",\"name\":\"ab\"" + extra + "}",
                "{\"index\":{\"fields\":[{\"b\":\"desc\"},{\"a\":\"desc\"}]},\"ddoc\":\"iba\",\"name\":\"ba\"" + extra + "}",
                "{\"index\":{\"fields\":[\"c.x\"]},\"ddoc\":\"icx\",\"name\":\"cx\"" + extra + "}",
                "{\"index\":{\"fields\":[\"b\"],\"partial_filter_selector\":{\"a\":{\"$gt\":2}}},\"ddoc\":\"ip\",\"name\":\"partial\"" + extra + "}",
                "{\"index\":{\"fields\":[\"_id\",\"a\"]},\"ddoc\":\"iid\",\"name\":\"ida\"" + extra + "}")) {
            JsonNode b = json(body);
            for (int attempt = 0; ; attempt++) {
                try {
                    mango.indexes().create(db.openFor(dev.chaise.storage.UserCtx.server("test"), dev.chaise.storage.SecuredDb.Level.MEMBER), b);
                    break;
                } catch (KvException e) {
                    if (attempt > 20) throw e;
                }
            }
        }
    }

    /** One query against the model: the whole answer, its projection, a skip/limit window of it, then the same query paged by bookmarks. */
    static void check(Mango mango, Database db, Map<String, ObjectNode> docs, ObjectNode query, String where, boolean readAsIs) {
        Find.Query q = Find.parse(query);
        List<String> sortFields = Sort.names(q.sort());
        List<ObjectNode> expected = new ArrayList<>();
        for (ObjectNode d : docs.values()) {
            if (q.selector().noopRange()) break; // Mango reads nothing for a bare {"$and": []} or {"$or": []}
            if (!q.selector().matches(d)) continue;
            boolean hasSortFields = true;
            for (String f : sortFields) hasSortFields &= Selector.get(d, Selector.parseField(f)) != null;
            if (hasSortFields) expected.add(d); // a JSON index holds only documents with every column
        }
        expected.sort((x, y) -> compareSort(x, y, sortFields, q.descending()));
        Set<String> matching = new HashSet<>(ids(expected));
        String ctx = where + ": " + query;
        ObjectNode all = query.deepCopy();
        all.put("limit", 100_000);
        all.remove("skip");
        all.remove("fields");
        if (readAsIs) all.put("update", false);
        Find.Result full;
        try {
            full = find(mango, db, all);
        } catch (MangoException e) {
            if (e.error().equals("no_usable_index") && !sortFields.isEmpty()) return; // no index serves this sort: CouchDB's 400
            throw new AssertionError(ctx + " failed: " + e.error() + " " + e.reason(), e);
        }
        List<String> got = ids(full.docs());
        assertEquals(got.size(), new HashSet<>(got).size(), ctx + " returned a document twice: " + got);
        assertSameInOrder(expected, got, sortFields, docs, matching, ctx);
        for (int i = 0; i < got.size(); i++) assertEquals(docs.get(got.get(i)), full.docs().get(i), ctx + " returned " + got.get(i) + " as it is not");
        if (q.fields() != null) {
            // The same rows, each cut to the fields (from the index alone when it covers them).
            ObjectNode projected = all.deepCopy();
            projected.set("fields", query.get("fields"));
            Find.Result p = find(mango, db, projected);
            assertEquals(got.size(), p.docs().size(), ctx + " projected: another number of documents");
            for (int i = 0; i < got.size(); i++) {
                assertEquals(Find.project(docs.get(got.get(i)), q.fields()), p.docs().get(i), ctx + " projected " + got.get(i) + " wrongly");
            }
        }
        // skip and limit cut the same answer.
        ObjectNode window = query.deepCopy();
        window.remove("fields");
        if (readAsIs) window.put("update", false);
        List<String> part = ids(find(mango, db, window).docs());
        int from = Math.min(q.skip(), got.size());
        int to = Math.min(got.size(), from + q.limit());
        if (sortFields.isEmpty()) assertEquals(got.subList(from, to), part, ctx + " skip/limit: not the same window of the same order");
        else assertSameInOrder(expected.subList(from, to), part, sortFields, docs, matching, ctx + " skip/limit");
        // Pages of 11 by bookmark give every document once.
        ObjectNode page = window.deepCopy();
        page.put("limit", 11);
        page.remove("skip");
        List<String> paged = new ArrayList<>();
        for (int n = 0; n < 100; n++) {
            Find.Result r = find(mango, db, page);
            paged.addAll(ids(r.docs()));
            if (r.docs().size() < 11) break;
            page.put("bookmark", r.bookmark());
        }
        assertEquals(got, paged, ctx + " paged by bookmarks");
    }

    static Find.Result find(Mango mango, Database db, ObjectNode body) {
        for (int attempt = 0; ; attempt++) {
            try {
                return mango.find(db, body);
            } catch (KvException e) {
                if (attempt > 20) throw e; // faults can exhaust an index build's retries; a client would retry
            }
        }
    }

    /** Same sort values in the same order; within a run of equal values any order, and at a cut, any of the tied documents. */
    static void assertSameInOrder(List<ObjectNode> expected, List<String> got, List<String> sortFields, Map<String, ObjectNode> docs,
                                  Set<String> matching, String ctx) {
        if (sortFields.isEmpty()) {
            assertEquals(new HashSet<>(ids(expected)), new HashSet<>(got), ctx + " (unsorted: as sets)");
            assertEquals(expected.size(), got.size(), ctx);
            return;
        }
        assertEquals(expected.size(), got.size(), ctx + " count: expected " + ids(expected) + " got " + got);
        for (String id : got) assertTrue(matching.contains(id), ctx + " returned " + id + ", which does not match");
        for (int i = 0; i < got.size(); i++) {
            if (compareSort(docs.get(got.get(i)), expected.get(i), sortFields, false) != 0) {
                fail(ctx + " position " + i + ": expected sort values of " + expected.get(i).get("_id") + " got " + got.get(i) + "\nexpected "
                        + ids(expected) + "\ngot " + got);
            }
        }
    }

    static int compareSort(ObjectNode x, ObjectNode y, List<String> fields, boolean descending) {
        for (String f : fields) {
            JsonNode a = Selector.get(x, Selector.parseField(f));
            JsonNode b = Selector.get(y, Selector.parseField(f));
            int c = ViewCollation.compare(a, b);
            if (c != 0) return descending ? -c : c;
        }
        return 0;
    }

    static List<String> ids(List<ObjectNode> docs) {
        List<String> out = new ArrayList<>();
        for (ObjectNode d : docs) out.add(d.path("_id").asText(null));
        return out;
    }

    /** The live documents, as _find returns them whole. */
    static Map<String, ObjectNode> scan(Database db) {
        Map<String, ObjectNode> out = new LinkedHashMap<>();
        for (int attempt = 0; ; attempt++) {
            try {
                out.clear();
                db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD, null, (r, d) -> d.id().startsWith(DocumentJson.DESIGN_PREFIX) ? null
                        : DocumentJson.render(r.get(d.id(), null, false))).forEachRemaining(d -> out.put(d.get("_id").textValue(), d));
                return out;
            } catch (KvException e) {
                if (attempt > 20) throw e;
            }
        }
    }

    // ---------------------------------------------------------------- random documents and queries

    static final List<String> STRINGS = List.of("", "a", "b", "B", "ab", "ba", "abc", "é", "x y");

    static JsonNode randomValue(Random r) {
        return switch (r.nextInt(12)) {
            case 0 -> Json.NODES.nullNode();
            case 1 -> Json.NODES.booleanNode(r.nextBoolean());
            case 2, 3, 4 -> Json.NODES.numberNode(r.nextInt(7) - 1);
            case 5 -> Json.NODES.numberNode(r.nextInt(7) / 2.0);
            case 6, 7, 8 -> Json.NODES.textNode(STRINGS.get(r.nextInt(STRINGS.size())));
            case 9 -> {
                ArrayNode a = Json.NODES.arrayNode();
                for (int i = r.nextInt(3); i > 0; i--) a.add(r.nextBoolean() ? Json.NODES.numberNode(r.nextInt(4)) : Json.NODES.textNode(STRINGS.get(r.nextInt(4))));
                yield a;
            }
            case 10 -> Json.NODES.objectNode().put("x", r.nextInt(3));
            default -> Json.NODES.objectNode();
        };
    }

    static ObjectNode randomDoc(Random r) {
        ObjectNode d = Json.NODES.objectNode();
        if (r.nextInt(8) > 0) d.set("a", r.nextInt(3) > 0 ? Json.NODES.numberNode(r.nextInt(6)) : randomValue(r));
        if (r.nextInt(8) > 0) d.set("b", r.nextInt(3) > 0 ? Json.NODES.textNode(STRINGS.get(r.nextInt(STRINGS.size()))) : randomValue(r));
        if (r.nextInt(3) > 0) {
            if (r.nextInt(5) > 0) d.putObject("c").set("x", r.nextInt(4) > 0 ? Json.NODES.numberNode(r.nextInt(5)) : randomValue(r));
            else d.set("c", randomValue(r));
        }
        if (r.nextBoolean()) {
            ArrayNode t = d.putArray("tags");
            for (int i = r.nextInt(4); i > 0; i--) t.add(r.nextInt(4) > 0 ? Json.NODES.textNode(STRINGS.get(r.nextInt(5))) : randomValue(r));
        }
        if (r.nextBoolean()) {
            ObjectNode m = d.putObject("m");
            for (String k : List.of("red", "blue", "x")) if (r.nextBoolean()) m.put(k, r.nextInt(3));
        }
        return d;
    }

    static ObjectNode randomQuery(Random r) {
        ObjectNode q = Json.NODES.objectNode();
        q.set("selector", randomSelector(r, 0));
        if (r.nextInt(3) == 0) {
            String[][] sorts = {{"a"}, {"b"}, {"a", "b"}, {"b", "a"}, {"c.x"}, {"_id"}};
            String[] s = sorts[r.nextInt(sorts.length)];
            boolean desc = r.nextBoolean();
            ArrayNode sort = q.putArray("sort");
            for (String f : s) {
                if (desc) sort.addObject().put(f, "desc");
                else if (r.nextBoolean()) sort.add(f);
                else sort.addObject().put(f, "asc");
            }
            // A sort needs the selector to require its leading column for most indexes: often give it.
            if (r.nextInt(3) > 0) {
                ObjectNode sel = Json.NODES.objectNode();
                sel.set("$and", Json.NODES.arrayNode().add(q.get("selector")).add(Json.NODES.objectNode().set(s[0],
                        Json.NODES.objectNode().set(r.nextBoolean() ? "$gt" : "$gte", Json.NODES.nullNode()))));
                q.set("selector", sel);
            }
        }
        if (r.nextInt(3) == 0) q.put("limit", r.nextInt(12));
        if (r.nextInt(4) == 0) q.put("skip", r.nextInt(6));
        if (r.nextInt(4) == 0) {
            ArrayNode f = q.putArray("fields");
            List<String> pick = new ArrayList<>(List.of("_id", "a", "b", "c.x", "c", "tags", "m.red", "_rev"));
            for (int i = 1 + r.nextInt(3); i > 0; i--) f.add(pick.remove(r.nextInt(pick.size())));
        }
        if (r.nextInt(10) == 0) q.put("use_index", List.of("ia", "iab", "icx", "iba").get(r.nextInt(4)));
        return q;
    }

    static JsonNode randomSelector(Random r, int depth) {
        int k = depth >= 2 ? 0 : r.nextInt(10);
        return switch (k) {
            case 7 -> Json.NODES.objectNode().set(List.of("$and", "$or", "$nor").get(r.nextInt(3)), list(r, depth));
            case 8 -> Json.NODES.objectNode().set("$not", randomSelector(r, depth + 1));
            case 9 -> {
                ObjectNode o = Json.NODES.objectNode(); // an implicit $and of two fields
                String f1 = field(r);
                String f2 = field(r);
                o.set(f1, condition(r, f1, depth));
                if (!f2.equals(f1)) o.set(f2, condition(r, f2, depth));
                yield o;
            }
            default -> {
                String f = field(r);
                yield Json.NODES.objectNode().set(f, condition(r, f, depth));
            }
        };
    }

    static ArrayNode list(Random r, int depth) {
        ArrayNode a = Json.NODES.arrayNode();
        for (int i = r.nextInt(4); i > 0; i--) a.add(randomSelector(r, depth + 1));
        return a;
    }

    static String field(Random r) {
        return FIELDS[r.nextInt(FIELDS.length)];
    }

    /** A condition on one field: an operator of every kind, or a bare value. */
    static JsonNode condition(Random r, String field, int depth) {
        JsonNode v = field.equals("_id") && r.nextBoolean() ? Json.NODES.textNode(id(r.nextInt(140))) : randomValue(r);
        return switch (r.nextInt(23)) {
            case 0 -> v.isObject() && !v.isEmpty() ? Json.NODES.objectNode().set("$eq", v) : v; // bare value: implicit $eq
            case 1 -> op("$eq", v);
            case 2 -> op("$ne", v);
            case 3 -> op("$gt", v);
            case 4 -> op("$gte", v);
            case 5 -> op("$lt", v);
            case 6 -> op("$lte", v);
            case 7, 8 -> op("$in", values(r, field));
            case 9 -> op("$nin", values(r, field));
            case 10 -> op("$exists", Json.NODES.booleanNode(r.nextBoolean()));
            case 11 -> op("$type", Json.NODES.textNode(List.of("null", "boolean", "number", "string", "array", "object").get(r.nextInt(6))));
            case 12 -> op("$size", Json.NODES.numberNode(r.nextInt(3)));
            case 13 -> op("$mod", Json.NODES.arrayNode().add(2 + r.nextInt(2)).add(r.nextInt(2)));
            case 14 -> op("$regex", Json.NODES.textNode(List.of("^a", "b$", "a|B", ".").get(r.nextInt(4))));
            case 15 -> op("$beginsWith", Json.NODES.textNode(List.of("", "a", "ab", "d0", "B").get(r.nextInt(5))));
            case 16 -> op("$all", values(r, field));
            case 17 -> op("$elemMatch", r.nextBoolean() ? op(List.of("$eq", "$gt", "$lt").get(r.nextInt(3)), randomValue(r))
                    : Json.NODES.objectNode().set("x", op("$gte", Json.NODES.numberNode(1))));
            case 18 -> {
                int o = r.nextInt(4);
                yield op("$allMatch", op(List.of("$eq", "$gt", "$lt", "$type").get(o), o == 3 ? Json.NODES.textNode("string") : randomValue(r)));
            }
            case 19 -> op("$keyMapMatch", op("$eq", Json.NODES.textNode(List.of("red", "blue", "x", "y").get(r.nextInt(4)))));
            case 20 -> {
                JsonNode inner = depth < 2 ? condition(r, field, depth + 1) : op("$eq", v);
                yield op("$not", inner.isObject() && !inner.isEmpty() ? inner : op("$eq", inner)); // $not takes an object
            }
            case 21 -> {
                ObjectNode range = Json.NODES.objectNode(); // two bounds on one field
                range.set("$gt", randomValue(r));
                range.set("$lte", randomValue(r));
                yield range;
            }
            default -> op("$in", Json.NODES.arrayNode().add(v).add(randomValue(r)));
        };
    }

    static ArrayNode values(Random r, String field) {
        ArrayNode a = Json.NODES.arrayNode();
        for (int i = r.nextInt(4); i > 0; i--) a.add(field.equals("_id") && r.nextBoolean() ? Json.NODES.textNode(id(r.nextInt(140))) : randomValue(r));
        return a;
    }

    static ObjectNode op(String op, JsonNode arg) {
        return Json.NODES.objectNode().set(op, arg);
    }

    static String id(int i) {
        return String.format("d%03d", i);
    }

    static JsonNode json(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    // ---------------------------------------------------------------- writes

    static void write(Database db, String id, ObjectNode body) {
        DocOps.retry(() -> {
            RevId base = DocOps.current(db, id);
            var res = db.updateUnchecked(List.of(DocUpdate.edit(id, base, false, body)), true).getFirst();
            if (!res.ok() && res.error().kind() != StorageException.Kind.CONFLICT) throw res.error();
        });
    }

    static void delete(Database db, String id) {
        DocOps.retry(() -> {
            RevId base = DocOps.current(db, id);
            if (base == null) return;
            var res = db.updateUnchecked(List.of(DocUpdate.edit(id, base, true, Json.NODES.objectNode())), true).getFirst();
            if (!res.ok() && res.error().kind() != StorageException.Kind.CONFLICT) throw res.error();
        });
    }


    // ---------------------------------------------------------------- concurrent writes

    /**
     * While a writer keeps changing documents, every answer holds only matching documents, each
     * once; when the writer stops, answers equal the filtered scan again.
     */
    @Test
    void findUnderConcurrentWritesStaysConsistent() throws Exception {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
             Storage store = new Storage(kv, "{}")) {
            Database db = store.create("c");
            ViewsModule views = new ViewsModule(store, null);
            Mango mango = new Mango(views.queries(), new dev.chaise.stats.Stats());
            Random rnd = new Random(5);
            for (int i = 0; i < 120; i++) write(db, id(i), randomDoc(rnd));
            createIndexes(mango, db, false);
            AtomicBoolean stop = new AtomicBoolean();
            Thread writer = Thread.ofPlatform().start(() -> {
                Random r = new Random(6);
                while (!stop.get()) {
                    String id = id(r.nextInt(140));
                    if (r.nextInt(6) == 0) delete(db, id);
                    else write(db, id, randomDoc(r));
                }
            });
            Map<String, Integer> seen = new HashMap<>();
            try {
                Random qr = new Random(7);
                for (int q = 0; q < 300; q++) {
                    ObjectNode query = randomQuery(qr);
                    query.remove("fields"); // whole documents, to match them again here
                    Find.Result res;
                    try {
                        res = mango.find(db, query);
                    } catch (MangoException e) {
                        if (e.error().equals("no_usable_index")) continue;
                        throw e;
                    }
                    Selector s = Selector.parse(query.get("selector"));
                    List<String> got = ids(res.docs());
                    assertEquals(got.size(), new HashSet<>(got).size(), query + " returned a document twice");
                    for (ObjectNode d : res.docs()) assertTrue(s.matches(d), query + " returned a document that does not match: " + d);
                    seen.merge(res.docs().isEmpty() ? "empty" : "found", 1, Integer::sum);
                }
            } finally {
                stop.set(true);
                writer.join();
            }
            assertTrue(seen.getOrDefault("found", 0) > 20, "queries found documents while the writer ran: " + seen);
            Map<String, ObjectNode> docs = scan(db);
            Random qr = new Random(8);
            for (int q = 0; q < 100; q++) check(mango, db, docs, randomQuery(qr), "after the writer, query " + q, false);
            views.close();
        }
    }
}

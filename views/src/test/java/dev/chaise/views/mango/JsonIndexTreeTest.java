package dev.chaise.views.mango;

import static dev.chaise.storage.KeySpace.Db.VIEWS;
import static dev.chaise.storage.KeySpace.ViewData.MAP_RANGE;
import static dev.chaise.storage.KeySpace.ViewData.REDUCE_TREE;
import static dev.chaise.storage.KeySpace.Views.DATA;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.PurgeRequest;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.JavaMaps;
import dev.chaise.views.ViewQueries;
import dev.chaise.views.ViewsModule;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.query.ViewQuery;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Mango's JSON indexes keep no reduce tree: not in a parallel first build and its merge, not in
 * later background batches, not in interactive writes, not after a purge. A JavaScript index of
 * the same database, built the same way, has one (so the scan below can see tree keys). Queries on
 * the Mango index still answer: {@code _find}, and a view query with and without reduce
 * ({@code _count}, reduced from the rows) and its {@code offset}.
 */
class JsonIndexTreeTest {

    @Test
    void backgroundAndParallelBuildsWriteNoTreeKeys() {
        run(false);
    }

    @Test
    void interactiveWritesWriteNoTreeKeys() {
        run(true);
    }

    private void run(boolean interactive) {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory()); Storage store = new Storage(kv, "{}")) {
            Database db = store.create("t");
            JavaMaps js = new JavaMaps().define("byA", (doc, emit) -> {
                if (doc.has("a")) emit.accept(doc.get("a"), Json.NODES.nullNode());
            });
            // Segments of 7 changes and 2 workers: the first builds of 60 documents run in parallel.
            ViewsModule views = new ViewsModule(store, js, new ViewsModule.Options(2, 7));
            if (interactive) views.enableInteractiveViews();
            Mango mango = new Mango(views.queries(), new dev.chaise.stats.Stats());
            Random rnd = new Random(7);
            for (int i = 0; i < 60; i++) MangoModelTest.write(db, "d" + i, doc(rnd));

            String extra = interactive ? ",\"interactive\":true" : "";
            mango.indexes().create(db.openFor(dev.chaise.storage.UserCtx.server("test"), dev.chaise.storage.SecuredDb.Level.MEMBER), MangoModelTest.json("{\"index\":{\"fields\":[\"a\"]},\"ddoc\":\"m\",\"name\":\"a\"" + extra + "}"));
            ObjectNode jsDdoc = Json.NODES.objectNode();
            jsDdoc.putObject("views").putObject("a").put("map", "byA").put("reduce", "_count");
            if (interactive) jsDdoc.putObject("options").put("interactive", true);
            MangoModelTest.write(db, "_design/j", jsDdoc);

            String mangoSig = signature(db, "_design/m");
            String jsSig = signature(db, "_design/j");
            ObjectNode find = (ObjectNode) MangoModelTest.json("{\"selector\":{\"a\":{\"$gte\":0}},\"use_index\":\"m\",\"limit\":1000}");
            checkFind(mango, db, find);
            countRows(views, db, "_design/j"); // the JavaScript index's first build

            for (int i = 0; i < 50; i++) { // updates, deletes and new documents after the first build
                String id = "d" + rnd.nextInt(80);
                if (rnd.nextInt(5) == 0) MangoModelTest.delete(db, id);
                else MangoModelTest.write(db, id, doc(rnd));
            }
            String purged = "d" + (rnd.nextInt(10) + 1);
            db.purge(List.of(new PurgeRequest(purged, List.of(dev.chaise.views.DocOps.current(db, purged)))));
            checkFind(mango, db, find);
            assertEquals(countRows(views, db, "_design/j"), countRows(views, db, "_design/m"), "both indexes hold every document with an a");

            assertTrue(keys(db, jsSig, REDUCE_TREE) > 0, "the JavaScript index keeps a tree");
            assertTrue(keys(db, mangoSig, MAP_RANGE) > 0, "the Mango index has rows");
            assertEquals(0, keys(db, mangoSig, REDUCE_TREE), "the Mango index keeps no tree");
            views.close();
        }
    }

    private static ObjectNode doc(Random rnd) {
        ObjectNode d = Json.NODES.objectNode();
        if (rnd.nextInt(6) != 0) d.put("a", rnd.nextInt(20));
        return d;
    }

    private static String signature(Database db, String ddocId) {
        return DesignDoc.parse(ddocId, db.get(ddocId, null, false).body()).signature();
    }

    private static long keys(Database db, String sig, long part) {
        return db.read(r -> {
            byte[][] range = r.handle().space().range(VIEWS, DATA, sig, part);
            return (long) r.tx().getRangeAsList(range[0], range[1], 0, false).size();
        });
    }

    /** {@code _find} over the index equals a filter of the documents. */
    private static void checkFind(Mango mango, Database db, ObjectNode find) {
        Find.Result res = mango.find(db, find);
        List<String> expected = new ArrayList<>();
        MangoModelTest.scan(db).forEach((id, d) -> {
            if (d.path("a").isNumber()) expected.add(id);
        });
        List<String> actual = new ArrayList<>();
        for (ObjectNode d : res.docs()) actual.add(d.get("_id").textValue());
        assertEquals(expected.stream().sorted().toList(), actual.stream().sorted().toList());
    }

    /**
     * The view's rows counted three ways that must agree: {@code reduce=true} ({@code _count}),
     * the rows of {@code reduce=false}, and {@code offset} + rows from a start key.
     */
    private static long countRows(ViewsModule views, Database db, String ddocId) {
        String view = "a";
        ViewQuery reduced = new ViewQuery(null, null, null, null, null, true, false, 0, Long.MAX_VALUE, false, null, false, null, null, null,
                ViewQuery.Update.TRUE, true, false);
        long count;
        try (ViewQueries.Result r = views.queries().query(db, ddocId, view, reduced)) {
            JsonNode v = r.rows().next().value();
            count = v.longValue();
        }
        JsonNode start = ddocId.equals("_design/m") ? Json.NODES.arrayNode().add(10) : Json.NODES.numberNode(10);
        ViewQuery fromTen = new ViewQuery(null, start, null, null, null, true, false, 0, Long.MAX_VALUE, false, null, false, false, null, null,
                ViewQuery.Update.TRUE, true, false);
        try (ViewQueries.Result r = views.queries().query(db, ddocId, view, fromTen)) {
            long rows = 0;
            for (var it = r.rows(); it.hasNext(); it.next()) rows++;
            assertEquals(count, r.totalRows(), ddocId + " total_rows");
            assertEquals(count, r.offset() + rows, ddocId + " offset + rows from [10]");
            assertTrue(r.offset() > 0 && rows > 0, ddocId + " offset " + r.offset() + ", rows " + rows);
        }
        return count;
    }
}

package dev.chaise.views.index;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.PurgeRequest;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import dev.chaise.views.JavaMaps;
import dev.chaise.views.js.JsEngine;
import dev.chaise.views.js.MapOutcome;
import dev.chaise.views.js.MapProgram;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A purge that lands while a build has read a batch and is mapping it: the build must not write
 * the purged document's rows back (the purge already took them out of the index).
 */
class PurgeDuringBuildTest {

    @Test
    void aBatchReadBeforeAPurgeIsReadAgain() throws Exception {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory()); Storage storage = new Storage(kv, "{}")) {
            storage.addPurgeHook(new PurgedDocs(Reductions.COUNTS));
            Database db = storage.create("p");
            List<DocUpdate> docs = new ArrayList<>();
            for (String id : List.of("a", "b", "c")) docs.add(DocUpdate.edit(id, null, false, Json.NODES.objectNode().put("t", id)));
            var revs = db.updateUnchecked(docs, true);
            ObjectNode body = Json.NODES.objectNode();
            body.putObject("views").putObject("v").put("map", "byT");
            db.updateUnchecked(List.of(DocUpdate.edit("_design/d", null, false, body)), true);
            DesignDoc ddoc = DesignDoc.parse("_design/d", db.get("_design/d", null, false).body());

            JavaMaps maps = new JavaMaps().define("byT", (doc, emit) -> emit.accept(doc.get("t"), Json.NODES.nullNode()));
            MapProgram real = maps.mapProgram(new JsEngine.MapSource(ddoc.id(), ddoc.maps(), ddoc.lib()));
            int[] calls = {0};
            MapProgram purgingMidway = new MapProgram() {
                @Override
                public List<MapOutcome> map(String docJson) {
                    return real.map(docJson);
                }

                @Override
                public List<List<MapOutcome>> mapAll(List<String> json) {
                    if (calls[0]++ == 0) db.purge(List.of(new PurgeRequest("b", List.of(revs.get(1).rev())))); // after the batch was read
                    return real.mapAll(json);
                }

                @Override
                public void close() {
                    real.close();
                }
            };
            new ViewIndexer(ViewIndexer.SEGMENT_DOCS).update(db, ddoc, purgingMidway, null, null);
            assertTrue(calls[0] >= 2, "the batch was mapped again after the purge");

            List<String> ids = db.read(r -> {
                List<String> out = new ArrayList<>();
                byte[][] range = MapIndexSubspace.viewRange(r.handle(), ddoc.signature(), 0);
                for (KeyValue row : r.tx().getRangeAsList(range[0], range[1], 0, false)) out.add(MapIndexSubspace.decodeRow(r.handle(), row).docId());
                return out;
            });
            assertEquals(List.of("a", "c"), ids, "the purged document has no rows");
        }
    }
}

package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The main document paths, end to end on the in-memory engine. */
class DocumentStoreSmokeTest {
    KvStore kv;
    Storage store;

    @BeforeEach
    void open() {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        store = new Storage(kv, "{}");
        store.create("db");
    }

    @AfterEach
    void close() {
        store.close();
        kv.close();
    }

    static ObjectNode body(String json) throws Exception {
        return (ObjectNode) Json.MAPPER.readTree(json);
    }

    UpdateResult put(String id, RevId base, boolean deleted, String json) throws Exception {
        return store.open("db").update(List.of(DocUpdate.edit(id, base, deleted, body(json))), true).getFirst();
    }

    @Test
    void createUpdateDeleteRecreate() throws Exception {
        UpdateResult r1 = put("a", null, false, "{\"x\":1}");
        assertTrue(r1.ok());
        assertEquals(1, r1.rev().pos());
        assertEquals(StorageException.Kind.CONFLICT, put("a", null, false, "{\"x\":2}").error().kind());
        UpdateResult r2 = put("a", r1.rev(), false, "{\"x\":2}");
        assertEquals(2, r2.rev().pos());
        assertEquals(StorageException.Kind.CONFLICT, put("a", r1.rev(), false, "{\"x\":3}").error().kind(), "stale rev");
        var doc = store.open("db").get("a", null, false);
        assertEquals(2, doc.body().get("x").intValue());
        assertEquals(r2.rev(), doc.rev());
        assertEquals(1, store.open("db").info().docCount());

        UpdateResult r3 = put("a", r2.rev(), true, "{}");
        assertTrue(r3.ok());
        StorageException gone = assertThrows(StorageException.class, () -> store.open("db").get("a", null, false));
        assertEquals("deleted", gone.reason());
        var info = store.open("db").info();
        assertEquals(0, info.docCount());
        assertEquals(1, info.docDelCount());
        assertEquals(StorageException.Kind.CONFLICT, put("a", r3.rev(), false, "{}").error().kind(), "a deleted leaf cannot be edited");

        UpdateResult r4 = put("a", null, false, "{\"back\":true}");
        assertEquals(4, r4.rev().pos(), "re-creating extends the deleted branch");
        info = store.open("db").info();
        assertEquals(1, info.docCount());
        assertEquals(0, info.docDelCount());
        assertNotNull(info.updateSeq());
    }

    @Test
    void replicatedConflictsAndWinner() throws Exception {
        EditBranch a = EditBranch.fromRevisions(2, List.of("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), false);
        EditBranch b = EditBranch.fromRevisions(2, List.of("cccccccccccccccccccccccccccccccc", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), false);
        assertTrue(store.open("db").update(List.of(DocUpdate.replicated("d", a, body("{\"v\":\"b\"}"))), false).getFirst().ok());
        assertTrue(store.open("db").update(List.of(DocUpdate.replicated("d", b, body("{\"v\":\"c\"}"))), false).getFirst().ok());
        var doc = store.open("db").get("d", null, true);
        assertEquals("2-cccccccccccccccccccccccccccccccc", doc.rev().toString(), "the higher hash wins");
        assertEquals("c", doc.body().get("v").textValue());
        assertEquals(2, doc.branches().size());
        assertEquals(1, store.open("db").info().docCount());
        // Extending the losing branch interactively keeps the winner's body and moves the doc's sequence.
        var before = store.open("db").info().updateSeq();
        UpdateResult r = put("d", RevId.parse("2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"), false, "{\"v\":\"b2\"}");
        assertTrue(r.ok());
        assertEquals(3, r.rev().pos());
        assertEquals(r.rev(), store.open("db").get("d", null, false).rev(), "3-x now beats 2-c");
        assertTrue(store.open("db").info().updateSeq().compareTo(before) > 0);
        // A known leaf is a no-op.
        assertTrue(store.open("db").update(List.of(DocUpdate.replicated("d", a, body("{}"))), false).getFirst().ok());
        assertEquals(2, store.open("db").branches("d").size());
    }

    @Test
    void localDocsAndBadIds() throws Exception {
        var l = store.open("db").putLocal("_local/x", null, false, body("{\"a\":1}"));
        assertEquals("0-1", l.rev());
        assertEquals(StorageException.Kind.CONFLICT, assertThrows(StorageException.class, () -> store.open("db").putLocal("_local/x", null, false, body("{}"))).kind());
        assertEquals("0-2", store.open("db").putLocal("_local/x", "0-1", false, body("{\"a\":2}")).rev());
        assertEquals(2, store.open("db").getLocal("_local/x").body().get("a").intValue());
        assertEquals(StorageException.Kind.ILLEGAL_DOCID, assertThrows(StorageException.class, () -> DocumentJson.parse(body("{\"_id\":\"_x\"}"), null)).kind());
        assertEquals(StorageException.Kind.DOC_VALIDATION, assertThrows(StorageException.class, () -> DocumentJson.parse(body("{\"_foo\":1}"), "a")).kind());
    }
}

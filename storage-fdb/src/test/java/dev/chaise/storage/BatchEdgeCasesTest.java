package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvLimits;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Batches that put the same document twice into one transaction, and ids at the key limit. */
class BatchEdgeCasesTest {
    StoreFixture f;
    String db;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
        db = f.newDb("edge", 0);
    }

    @AfterEach
    void close() {
        f.close();
    }

    static ObjectNode body(String k, int v) {
        ObjectNode o = Json.NODES.objectNode();
        o.put(k, v);
        return o;
    }

    /** A big batch runs in parallel parts; results still line up with the input, one per document. */
    @Test
    void bigBatchInParallelPartsKeepsResultsInOrder() {
        f.store.parallelism(4);
        List<DocUpdate> docs = new java.util.ArrayList<>();
        for (int i = 0; i < 1_500; i++) {
            // Some documents fail (an id over the key limit): their errors must land at their own index.
            String id = i % 97 == 0 ? "x".repeat(KvLimits.MAX_KEY_BYTES) + i : String.format("p%05d", 1_500 - i);
            docs.add(DocUpdate.edit(id, null, false, body("n", i)));
        }
        List<UpdateResult> r = f.store.open(db).update(docs, true);
        assertEquals(docs.size(), r.size());
        for (int i = 0; i < docs.size(); i++) {
            assertEquals(docs.get(i).id(), r.get(i).id());
            if (i % 97 == 0) {
                assertEquals(StorageException.Kind.ILLEGAL_DOCID, r.get(i).error().kind());
            } else {
                assertEquals(RevHasher.newRevId(null, false, docs.get(i).body(), List.of()), r.get(i).rev(), "doc " + i);
                assertEquals(i, f.store.open(db).get(docs.get(i).id(), null, false).body().get("n").asInt());
            }
        }
        assertEquals(1_500 - 16, f.store.open(db).info().docCount());
        f.checkInvariants(db, 0);
    }

    /** JSON that Json refuses, met inside a write (a hook's or a validate_doc_update's JS result), fails that document only. */
    @Test
    void refusedJsonInAWriteHookFailsThatDocumentOnly() {
        f.store.addWriteHook((tx, c) -> {
            if (c.docId().equals("bad")) Json.NODES.textNode("\ud800");
        });
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.edit("good", null, false, body("x", 1)),
                DocUpdate.edit("bad", null, false, body("x", 2))), true);
        assertTrue(r.get(0).ok(), r.toString());
        assertEquals(StorageException.Kind.BAD_REQUEST, r.get(1).error().kind());
        assertEquals("invalid UTF-8 JSON", r.get(1).error().reason());
    }

    /** A repeated id keeps the batch in order, so the later create is the conflict, wherever it sits. */
    @Test
    void bigBatchWithARepeatedIdStaysInOrder() {
        f.store.parallelism(4);
        List<DocUpdate> docs = new java.util.ArrayList<>();
        for (int i = 0; i < 1_200; i++) docs.add(DocUpdate.edit(i == 1_199 ? "q00000" : String.format("q%05d", i), null, false, body("n", i)));
        List<UpdateResult> r = f.store.open(db).update(docs, true);
        assertTrue(r.getFirst().ok());
        assertEquals(StorageException.Kind.CONFLICT, r.getLast().error().kind());
        assertEquals(0, f.store.open(db).get("q00000", null, false).body().get("n").asInt());
        f.checkInvariants(db, 0);
    }

    @Test
    void sameNewDocumentTwiceInOneBatch() {
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.edit("a", null, false, body("x", 1)),
                DocUpdate.edit("a", null, false, body("x", 2))), true);
        assertTrue(r.get(0).ok(), r.toString());
        assertEquals(StorageException.Kind.CONFLICT, r.get(1).error() == null ? null : r.get(1).error().kind(), "as CouchDB: the second create conflicts " + r);
        assertEquals(1, f.store.open(db).branches("a").size(), f.store.open(db).branches("a").toString());
        f.checkInvariants(db, 0);
    }

    @Test
    void sameDocumentEditedTwiceFromOneBaseInOneBatch() {
        RevId r1 = f.store.open(db).update(List.of(DocUpdate.edit("a", null, false, body("x", 1))), true).getFirst().rev();
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.edit("a", r1, false, body("x", 2)),
                DocUpdate.edit("a", r1, false, body("x", 3))), true);
        assertTrue(r.get(0).ok(), r.toString());
        assertEquals(StorageException.Kind.CONFLICT, r.get(1).error() == null ? null : r.get(1).error().kind(), r.toString());
        assertEquals(r.get(0).rev(), f.store.open(db).get("a", null, false).rev());
        f.checkInvariants(db, 0);
    }

    @Test
    void createThenEditOfTheSameDocumentInOneBatch() {
        ObjectNode b1 = body("x", 1);
        RevId expected1 = RevHasher.newRevId(null, false, b1, List.of());
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.edit("a", null, false, b1),
                DocUpdate.edit("a", expected1, false, body("x", 2))), true);
        assertEquals(expected1, r.get(0).rev(), r.toString());
        // As CouchDB on FoundationDB (fabric2_db:update_docs_interactive): once one edit of an id
        // succeeded in a request, later edits of that id in the same request are conflicts.
        assertEquals(StorageException.Kind.CONFLICT, r.get(1).error() == null ? null : r.get(1).error().kind(), r.toString());
        assertEquals(expected1, f.store.open(db).get("a", null, false).rev());
        f.checkInvariants(db, 0);
    }

    @Test
    void aFailedEditDoesNotBlockALaterOneOfTheSameIdInOneBatch() {
        RevId r1 = f.store.open(db).update(List.of(DocUpdate.edit("a", null, false, body("x", 1))), true).getFirst().rev();
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.edit("a", RevId.parse("1-00000000000000000000000000000000"), false, body("x", 2)),
                DocUpdate.edit("a", r1, false, body("x", 3))), true);
        assertEquals(StorageException.Kind.CONFLICT, r.get(0).error().kind(), r.toString());
        assertTrue(r.get(1).ok(), r.toString());
        f.checkInvariants(db, 0);
    }

    @Test
    void twoReplicatedBranchesOfOneDocumentInOneBatch() {
        String a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        EditBranch p1 = EditBranch.fromRevisions(2, List.of("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", a), false);
        EditBranch p2 = EditBranch.fromRevisions(2, List.of("cccccccccccccccccccccccccccccccc", a), false);
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.replicated("d", p1, body("v", 1)),
                DocUpdate.replicated("d", p2, body("v", 2))), false);
        assertTrue(r.get(0).ok() && r.get(1).ok(), r.toString());
        assertEquals(2, f.store.open(db).branches("d").size(), f.store.open(db).branches("d").toString());
        assertEquals(p2.leaf(), f.store.open(db).get("d", null, false).rev());
        f.checkInvariants(db, 0);
    }

    @Test
    void allOrNothingWithOneDocumentTwice() {
        List<UpdateResult> r = f.store.open(db).updateAllOrNothing(List.of(
                DocUpdate.edit("a", null, false, body("x", 1)),
                DocUpdate.edit("a", null, false, body("x", 2))), true);
        assertEquals(StorageException.Kind.CONFLICT, r.get(1).error() == null ? null : r.get(1).error().kind(), r.toString());
        assertEquals(List.of(), f.store.open(db).branches("a"), "nothing of a failed all-or-nothing batch is written");

        String a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        List<UpdateResult> rr = f.store.open(db).updateAllOrNothing(List.of(
                DocUpdate.replicated("d", EditBranch.fromRevisions(2, List.of("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", a), false), body("v", 1)),
                DocUpdate.replicated("d", EditBranch.fromRevisions(2, List.of("cccccccccccccccccccccccccccccccc", a), false), body("v", 2))), false);
        assertEquals(StorageException.Kind.BAD_REQUEST, rr.get(1).error() == null ? null : rr.get(1).error().kind(), rr.toString());
        assertEquals(List.of(), f.store.open(db).branches("d"));
        f.checkInvariants(db, 0);
    }

    @Test
    void aRepeatedIdInALaterChunkStillConflicts() {
        List<DocUpdate> docs = new java.util.ArrayList<>();
        for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) docs.add(DocUpdate.edit("doc-" + i, null, false, body("i", i)));
        docs.add(DocUpdate.edit("doc-0", RevHasher.newRevId(null, false, body("i", 0), List.of()), false, body("i", -1)));
        List<UpdateResult> r = f.store.open(db).update(docs, true);
        assertTrue(r.get(0).ok());
        assertEquals(StorageException.Kind.CONFLICT, r.getLast().error() == null ? null : r.getLast().error().kind(), "one request, one success per id");
        f.checkInvariants(db, 0);
    }

    @Test
    void anIdTooLongForAKeyFailsThatDocumentOnly() {
        String longId = "x".repeat(KvLimits.MAX_KEY_BYTES);
        for (ObjectNode b : List.of(Json.NODES.objectNode(), body("x", 1))) {
            List<UpdateResult> r = f.store.open(db).update(List.of(
                    DocUpdate.edit("fine-" + b.size(), null, false, b),
                    DocUpdate.edit(longId, null, false, b)), true);
            assertTrue(r.get(0).ok(), "the other document of the batch is written");
            assertEquals(StorageException.Kind.ILLEGAL_DOCID, r.get(1).error() == null ? null : r.get(1).error().kind(),
                    () -> String.valueOf(r.get(1).error()).substring(0, 120));
            assertEquals("Document id is too long", r.get(1).error().reason());
        }
        EditBranch path = EditBranch.root(RevId.parse("1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), false);
        UpdateResult rr = f.store.open(db).update(List.of(DocUpdate.replicated(longId, path, Json.NODES.objectNode())), false).getFirst();
        assertEquals(StorageException.Kind.ILLEGAL_DOCID, rr.error() == null ? null : rr.error().kind());
        assertEquals(2, f.store.open(db).info().docCount());
        f.checkInvariants(db, 0);
    }

    @Test
    void aReplicatedRevisionTooLongForAKeyFailsThatDocumentOnly() {
        EditBranch path = EditBranch.root(new RevId(1, "h".repeat(KvLimits.MAX_KEY_BYTES)), false);
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.replicated("fine", EditBranch.root(RevId.parse("1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), false), body("x", 1)),
                DocUpdate.replicated("d", path, body("x", 1))), false);
        assertTrue(r.get(0).ok());
        assertEquals(StorageException.Kind.BAD_REQUEST, r.get(1).error() == null ? null : r.get(1).error().kind());
        assertEquals(List.of(), f.store.open(db).branches("d"));
        f.checkInvariants(db, 0);
    }
}

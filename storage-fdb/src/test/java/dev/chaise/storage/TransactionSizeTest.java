package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * RFC A stores one KV per JSON leaf, each key repeating the revision's prefix (with the document
 * id). A body of many small leaves therefore needs several times its JSON size in KV bytes, and
 * FDB refuses a transaction over 10 MB (2101 transaction_too_large) at commit. A batch must be cut
 * so that documents that fit alone are written, each with its own result.
 */
class TransactionSizeTest {
    StoreFixture f;
    String db;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
        db = f.newDb("size", 0);
    }

    @AfterEach
    void close() {
        f.close();
    }

    /** 20,000 members "mNNNNN": 1: about 240 KB of JSON, about 5 MB of KVs under a 200-byte id. */
    static ObjectNode manyLeaves() {
        ObjectNode o = Json.NODES.objectNode();
        for (int i = 0; i < 20_000; i++) o.put(String.format("m%05d", i), 1);
        return o;
    }

    @Test
    void aBatchOfDocumentsThatFitAloneIsWritten() {
        ObjectNode body = manyLeaves();
        assertTrue(ExplodedJson.externalSize(body) < 300_000);
        List<DocUpdate> docs = new ArrayList<>();
        for (int i = 0; i < 8; i++) docs.add(DocUpdate.edit(String.format("%03d", i) + "x".repeat(197), null, false, body));
        List<UpdateResult> r = f.store.open(db).update(docs, true);
        for (UpdateResult u : r) assertTrue(u.ok(), String.valueOf(u.error()));
        assertEquals(8, f.store.open(db).info().docCount());
        f.checkInvariants(db, 0);
    }

    /** Under the JSON size limit, but its KVs alone would overflow a transaction: refused, alone. */
    @Test
    void aDocumentTooBigForATransactionFailsAlone() {
        ObjectNode huge = Json.NODES.objectNode();
        for (int i = 0; i < 70_000; i++) huge.put(String.format("m%05d", i), 1);
        assertTrue(ExplodedJson.externalSize(huge) < Storage.DEFAULT_MAX_DOCUMENT_SIZE);
        ObjectNode small = Json.NODES.objectNode().put("ok", true);
        List<UpdateResult> r = f.store.open(db).update(List.of(
                DocUpdate.edit("small-1", null, false, small),
                DocUpdate.edit("huge" + "x".repeat(200), null, false, huge),
                DocUpdate.edit("small-2", null, false, small)), true);
        assertTrue(r.get(0).ok() && r.get(2).ok(), r.toString());
        assertEquals(StorageException.Kind.DOCUMENT_TOO_LARGE, r.get(1).error() == null ? null : r.get(1).error().kind());
        assertEquals(2, f.store.open(db).info().docCount());
        f.checkInvariants(db, 0);
    }

    /**
     * The transaction id KV keeps the batch's results for a retry after 1021; its value, like any,
     * must stay under FDB's 100,000 bytes. A full chunk of documents with longish ids, or
     * replicated leaves with long revs, must still be written.
     */
    @Test
    void aFullChunkWithLongIdsAndRevs() {
        List<DocUpdate> docs = new ArrayList<>();
        for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) {
            docs.add(DocUpdate.edit(String.format("%04d-", i) + "i".repeat(120), null, false, Json.NODES.objectNode().put("n", i)));
        }
        List<UpdateResult> r = f.store.open(db).update(docs, true);
        for (UpdateResult u : r) assertTrue(u.ok(), String.valueOf(u.error()));
        for (int i = 0; i < docs.size(); i++) assertEquals(docs.get(i).id(), r.get(i).id());

        List<DocUpdate> replicated = new ArrayList<>();
        for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) {
            replicated.add(DocUpdate.replicated("r" + i, EditBranch.root(
                    new dev.chaise.storage.RevId(1, String.format("%04d", i) + "h".repeat(150)), false), Json.NODES.objectNode()));
        }
        List<UpdateResult> rr = f.store.open(db).update(replicated, false);
        for (int i = 0; i < replicated.size(); i++) assertEquals(replicated.get(i).path().leaf(), rr.get(i).rev());

        // A failing batch: every result carries an error reason.
        List<DocUpdate> stale = new ArrayList<>();
        for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) stale.add(DocUpdate.edit(docs.get(i).id(), dev.chaise.storage.RevId.parse("9-" + "0".repeat(32)), false, Json.NODES.objectNode()));
        for (UpdateResult u : f.store.open(db).update(stale, true)) assertEquals(StorageException.Kind.CONFLICT, u.error().kind());
        assertEquals(2 * BatchWriter.CHUNK_DOCS, f.store.open(db).info().docCount());
        f.checkInvariants(db, 0);
    }

    /** Every commit ends with 1021 and did commit: every result comes back through the txid KV. */
    @Test
    void resultsOfAFullChunkComeBackAfterA1021ThatCommitted() {
        try (dev.chaise.kv.KvStore kv = dev.chaise.kv.embedded.EmbeddedKvStore.open(dev.chaise.kv.embedded.EmbeddedOptions.inMemory()
                .withFaults(new dev.chaise.kv.embedded.FaultInjection(0, 0, 1.0, 1.0, 1L)))) {
            // One part, so each batch below is one full chunk whose results overflow a txid value.
            try (Storage store = new Storage(kv, "{}").maxDocumentSize(100).parallelism(1)) {
                DatabaseDirectory dirs = store.directory();
                LocalDocumentsUnderFaultsTest.createRetrying(dirs, "all1021");
                List<DocUpdate> docs = new ArrayList<>();
                for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) {
                    docs.add(DocUpdate.edit(String.format("%04d-", i) + "i".repeat(120), null, false, Json.NODES.objectNode().put("n", i)));
                }
                List<UpdateResult> r = store.open("all1021").update(docs, true);
                for (int i = 0; i < docs.size(); i++) {
                    assertEquals(docs.get(i).id(), r.get(i).id());
                    assertEquals(RevHasher.newRevId(null, false, docs.get(i).body(), List.of()), r.get(i).rev());
                }
                List<DocUpdate> replicated = new ArrayList<>();
                for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) {
                    replicated.add(DocUpdate.replicated("r" + i, EditBranch.root(
                            new dev.chaise.storage.RevId(1, String.format("%04d", i) + "h".repeat(150)), false), Json.NODES.objectNode()));
                }
                List<UpdateResult> rr = store.open("all1021").update(replicated, false);
                for (int i = 0; i < replicated.size(); i++) assertEquals(replicated.get(i).path().leaf(), rr.get(i).rev());
                // 1,000 errors whose reasons do not all fit: they come back with the generic text.
                List<DocUpdate> big = new ArrayList<>();
                for (int i = 0; i < BatchWriter.CHUNK_DOCS; i++) big.add(DocUpdate.edit("big" + i, null, false, Json.NODES.objectNode().put("pad", "x".repeat(200))));
                for (UpdateResult u : store.open("all1021").update(big, true)) {
                    assertEquals(StorageException.Kind.DOCUMENT_TOO_LARGE, u.error().kind());
                    assertEquals("document_too_large", u.error().reason());
                }
                assertTrue(kv.timer().count(dev.chaise.kv.StoreTimer.Counts.INJECTED_FAULTS) >= 3);
                assertEquals(2 * BatchWriter.CHUNK_DOCS, store.open("all1021").info().docCount());
                Invariants.check(kv, dirs, "all1021", 0);
            }
        }
    }
}

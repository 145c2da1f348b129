package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DocumentStore.DocUpdate;
import dev.chaise.storage.DocumentStore.UpdateResult;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.RevId;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class AttachmentsTest {
    StoreFixture f;
    String db;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
        db = f.newDb("att", 0);
    }

    @AfterEach
    void close() {
        f.close();
    }

    static ObjectNode withData(ObjectNode body, String name, byte[] data) {
        ObjectNode atts = body.has("_attachments") ? (ObjectNode) body.get("_attachments") : body.putObject("_attachments");
        atts.putObject(name).put("content_type", "text/plain").put("data", Base64.getEncoder().encodeToString(data));
        return body;
    }

    static ObjectNode stub(ObjectNode body, String name) {
        ObjectNode atts = body.has("_attachments") ? (ObjectNode) body.get("_attachments") : body.putObject("_attachments");
        atts.putObject(name).put("stub", true);
        return body;
    }

    UpdateResult put(String id, RevId base, ObjectNode body) {
        return f.store.update(db, List.of(DocUpdate.edit(id, base, false, body)), true).getFirst();
    }

    int chunkCount() {
        return f.kv.run(tx -> {
            DbHandle h = f.dirs.open(tx, db);
            byte[][] r = h.space().range(DatabaseSubspace.ATTACHMENTS);
            return tx.getRangeAsList(r[0], r[1], 0, false).size();
        });
    }

    @Test
    void inlineDataBecomesMetadataAndChunksSharedByRevisions() {
        byte[] big = new byte[200_000]; // four chunks
        new Random(1).nextBytes(big);
        UpdateResult r1 = put("d", null, withData(Json.NODES.objectNode().put("v", 1), "a.bin", big));
        assertTrue(r1.ok(), String.valueOf(r1.error()));
        JsonNode meta = f.store.get(db, "d", null, false).body().get("_attachments").get("a.bin");
        assertEquals(1, meta.get("revpos").asInt());
        assertEquals(200_000, meta.get("length").asInt());
        assertTrue(meta.get("stub").asBoolean());
        assertTrue(meta.get("digest").asText().startsWith("md5-"));
        assertArrayEquals(big, f.store.attachmentData(db, "d", meta.get("digest").asText()));
        int chunks = chunkCount();
        assertEquals(4, chunks);

        // Edit keeping it as a stub: same metadata, no new chunks.
        UpdateResult r2 = put("d", r1.rev(), stub(Json.NODES.objectNode().put("v", 2), "a.bin"));
        assertTrue(r2.ok());
        assertEquals(meta, f.store.get(db, "d", null, false).body().get("_attachments").get("a.bin"));
        assertEquals(chunks, chunkCount());

        // Dropping it leaves garbage until a sweep; the sweep keeps what a leaf still names.
        UpdateResult r3 = put("d", r2.rev(), Json.NODES.objectNode().put("v", 3));
        assertNull(f.store.get(db, "d", null, false).body().get("_attachments"));
        assertEquals(1, f.store.sweepAttachments(db));
        assertEquals(0, chunkCount());
        assertTrue(r3.ok());
    }

    @Test
    void aStubThatTheParentDoesNotHaveIs412() {
        UpdateResult r1 = put("d", null, Json.NODES.objectNode());
        UpdateResult r2 = put("d", r1.rev(), stub(Json.NODES.objectNode(), "nope.txt"));
        assertEquals(StorageException.Kind.MISSING_STUB, r2.error().kind());
        assertEquals(0, chunkCount(), "nothing written");
    }

    @Test
    void revisionIdsCoverAttachmentDigests() {
        UpdateResult a = put("a", null, withData(Json.NODES.objectNode(), "x", new byte[] {1}));
        UpdateResult b = put("b", null, withData(Json.NODES.objectNode(), "x", new byte[] {2}));
        UpdateResult c = put("c", null, withData(Json.NODES.objectNode(), "x", new byte[] {1}));
        assertNotEquals(a.rev(), b.rev());
        assertEquals(a.rev(), c.rev(), "same edit, same revision");
    }

    @Test
    void conflictingBranchesKeepTheirOwnAttachments() {
        UpdateResult r1 = put("d", null, withData(Json.NODES.objectNode(), "x", "one".getBytes()));
        ObjectNode other = withData(Json.NODES.objectNode(), "x", "two".getBytes());
        other.get("_attachments").get("x").deepCopy();
        ((ObjectNode) other.get("_attachments").get("x")).put("revpos", 1);
        RevId leaf = RevId.parse("1-ffffffffffffffffffffffffffffffff");
        assertTrue(f.store.update(db, List.of(DocUpdate.replicated("d", EditBranch.root(leaf, false), other)), false).getFirst().ok());
        assertEquals(0, f.store.sweepAttachments(db), "both leaves name their own");
        String d1 = f.store.get(db, "d", r1.rev(), false).body().get("_attachments").get("x").get("digest").asText();
        String d2 = f.store.get(db, "d", leaf, false).body().get("_attachments").get("x").get("digest").asText();
        assertEquals("one", new String(f.store.attachmentData(db, "d", d1)));
        assertEquals("two", new String(f.store.attachmentData(db, "d", d2)));
    }

    @Test
    void tooLargeIs413AndDocumentSizeIgnoresAttachments() {
        f.store.withMaxAttachmentSize(1000);
        UpdateResult r = put("d", null, withData(Json.NODES.objectNode(), "x", new byte[1001]));
        assertEquals(StorageException.Kind.ATTACHMENT_TOO_LARGE, r.error().kind());
        f.store.withMaxAttachmentSize(DocumentStore.DEFAULT_MAX_ATTACHMENT_SIZE);
        try (DocumentStore small = new DocumentStore(f.kv, f.dirs, 500)) {
            UpdateResult ok = small.update(db, List.of(DocUpdate.edit("e", null, false, withData(Json.NODES.objectNode(), "x", new byte[5000]))), true).getFirst();
            assertTrue(ok.ok(), "a 5 KB attachment on a small document is not a document_too_large");
        }
    }
}

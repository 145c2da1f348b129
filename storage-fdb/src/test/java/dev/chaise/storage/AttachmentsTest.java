package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
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
        atts.putObject(name).put("content_type", "application/octet-stream").put("data", Base64.getEncoder().encodeToString(data));
        return body;
    }

    static ObjectNode stub(ObjectNode body, String name) {
        ObjectNode atts = body.has("_attachments") ? (ObjectNode) body.get("_attachments") : body.putObject("_attachments");
        atts.putObject(name).put("stub", true);
        return body;
    }

    UpdateResult put(String id, RevId base, ObjectNode body) {
        return f.store.open(db).update(List.of(DocUpdate.edit(id, base, false, body)), true).getFirst();
    }

    int chunkCount() {
        return f.kv.run(tx -> {
            DbHandle h = f.dirs.open(tx, db);
            byte[][] r = h.space().range(KeySpace.Db.ATTACHMENTS);
            return tx.getRangeAsList(r[0], r[1], 0, false).size();
        });
    }

    @Test
    void inlineDataBecomesMetadataAndChunksSharedByRevisions() {
        byte[] big = new byte[200_000]; // four chunks
        new Random(1).nextBytes(big);
        UpdateResult r1 = put("d", null, withData(Json.NODES.objectNode().put("v", 1), "a.bin", big));
        assertTrue(r1.ok(), String.valueOf(r1.error()));
        JsonNode meta = f.store.open(db).get("d", null, false).body().get("_attachments").get("a.bin");
        assertEquals(1, meta.get("revpos").asInt());
        assertEquals(200_000, meta.get("length").asInt());
        assertTrue(meta.get("stub").asBoolean());
        assertTrue(meta.get("digest").asText().startsWith("md5-"));
        assertArrayEquals(big, f.store.open(db).<byte[]>read(r -> r.attachment("d", meta.get("digest").asText())));
        int chunks = chunkCount();
        assertEquals(4, chunks);

        // Edit keeping it as a stub: same metadata, no new chunks.
        UpdateResult r2 = put("d", r1.rev(), stub(Json.NODES.objectNode().put("v", 2), "a.bin"));
        assertTrue(r2.ok());
        assertEquals(meta, f.store.open(db).get("d", null, false).body().get("_attachments").get("a.bin"));
        assertEquals(chunks, chunkCount());

        // Dropping it leaves garbage until a sweep; the sweep keeps what a leaf still names.
        UpdateResult r3 = put("d", r2.rev(), Json.NODES.objectNode().put("v", 3));
        assertNull(f.store.open(db).get("d", null, false).body().get("_attachments"));
        assertEquals(1, f.store.open(db).sweepAttachments());
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
        assertTrue(f.store.open(db).update(List.of(DocUpdate.replicated("d", EditBranch.root(leaf, false), other)), false).getFirst().ok());
        assertEquals(0, f.store.open(db).sweepAttachments(), "both leaves name their own");
        String d1 = f.store.open(db).get("d", r1.rev(), false).body().get("_attachments").get("x").get("digest").asText();
        String d2 = f.store.open(db).get("d", leaf, false).body().get("_attachments").get("x").get("digest").asText();
        assertEquals("one", new String(f.store.open(db).<byte[]>read(r -> r.attachment("d", d1))));
        assertEquals("two", new String(f.store.open(db).<byte[]>read(r -> r.attachment("d", d2))));
    }

    @Test
    void tooLargeIs413AndDocumentSizeIgnoresAttachments() {
        f.store.maxAttachmentSize(1000);
        UpdateResult r = put("d", null, withData(Json.NODES.objectNode(), "x", new byte[1001]));
        assertEquals(StorageException.Kind.ATTACHMENT_TOO_LARGE, r.error().kind());
        f.store.maxAttachmentSize(Storage.DEFAULT_MAX_ATTACHMENT_SIZE);
        try (Storage small = new Storage(f.kv, "{}").maxDocumentSize(500)) {
            UpdateResult ok = small.open(db).update(List.of(DocUpdate.edit("e", null, false, withData(Json.NODES.objectNode(), "x", new byte[5000]))), true).getFirst();
            assertTrue(ok.ok(), "a 5 KB attachment on a small document is not a document_too_large");
        }
    }

    int uploadCount() {
        return f.kv.run(tx -> {
            DbHandle h = f.dirs.open(tx, db);
            byte[][] r = h.space().range(KeySpace.Db.UPLOADS);
            return tx.getRangeAsList(r[0], r[1], 0, false).size();
        });
    }

    static ObjectNode follows(ObjectNode body, String name) {
        ObjectNode atts = body.has("_attachments") ? (ObjectNode) body.get("_attachments") : body.putObject("_attachments");
        atts.putObject(name).put("content_type", "application/octet-stream").put("follows", true);
        return body;
    }

    static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    byte[] readStreamed(String docId, String digest) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (long next = 0; ; ) {
            List<byte[]> chunks = f.store.open(db).attachmentChunks(docId, digest, next, 16);
            for (byte[] c : chunks) out.writeBytes(c);
            if (chunks.size() < 16) break;
            next += chunks.size();
        }
        return out.toByteArray();
    }

    /** 25 MB is far past FDB's 10 MB transaction limit, which the embedded engine enforces: only a store in steps gets it in. */
    @Test
    void aLargeBodyIsStoredAheadInStepsAndNamedByItsDocument() throws Exception {
        byte[] big = random(25 << 20, 7);
        StoredAttachment st = f.store.open(db).storeAttachment("d", "a", new java.io.ByteArrayInputStream(big));
        assertEquals(big.length, st.length());
        String digest = "md5-" + Base64.getEncoder().encodeToString(java.security.MessageDigest.getInstance("MD5").digest(big));
        assertEquals(digest, st.digest());
        assertEquals(0, uploadCount(), "the upload moved under its md5");
        UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit("d", null, false, follows(Json.NODES.objectNode().put("v", 1), "big.bin"))
                .withStored(java.util.Map.of("big.bin", st))), true).getFirst();
        assertTrue(r.ok(), String.valueOf(r.error()));
        JsonNode meta = f.store.open(db).get("d", null, false).body().get("_attachments").get("big.bin");
        assertEquals(digest, meta.get("digest").asText());
        assertEquals(big.length, meta.get("length").asLong());
        assertEquals(1, meta.get("revpos").asInt());
        assertArrayEquals(big, readStreamed("d", digest));
        assertEquals(0, f.store.open(db).sweepAttachments(), "its document names it");
    }

    @Test
    void largeInlineDataIsStoredAheadToo() {
        byte[] big = random(12 << 20, 8); // 16 MB of base64 in one document
        UpdateResult r = put("d", null, withData(Json.NODES.objectNode(), "x", big));
        assertTrue(r.ok(), String.valueOf(r.error()));
        String digest = f.store.open(db).get("d", null, false).body().get("_attachments").get("x").get("digest").asText();
        assertArrayEquals(big, readStreamed("d", digest));
        // The same content in another edit is not stored twice.
        int chunks = chunkCount();
        UpdateResult r2 = put("d", r.rev(), withData(Json.NODES.objectNode().put("v", 2), "x", big));
        assertTrue(r2.ok(), String.valueOf(r2.error()));
        assertEquals(chunks, chunkCount());
        assertEquals(0, uploadCount());
    }

    @Test
    void aStreamPastTheLimitStopsAndLeavesNothing() {
        f.store.maxAttachmentSize(3 << 20);
        byte[] big = random(5 << 20, 9);
        StorageException e = org.junit.jupiter.api.Assertions.assertThrows(StorageException.class,
                () -> f.store.open(db).storeAttachment("d", "a", new java.io.ByteArrayInputStream(big)));
        assertEquals(StorageException.Kind.ATTACHMENT_TOO_LARGE, e.kind());
        assertEquals(0, uploadCount());
        assertEquals(0, chunkCount());
    }

    @Test
    void aBrokenStreamLeavesNothing() {
        java.io.InputStream broken = new java.io.InputStream() {
            int left = 3 << 20;

            @Override
            public int read() throws java.io.IOException {
                if (left-- == 0) throw new java.io.IOException("connection reset");
                return 1;
            }
        };
        org.junit.jupiter.api.Assertions.assertThrows(java.io.UncheckedIOException.class, () -> f.store.open(db).storeAttachment("d", "a", broken));
        assertEquals(0, uploadCount());
    }

    @Test
    void sweepTakesAbandonedUploadsAndBodiesNoDocumentNamed() {
        AttachmentsSubspace.Upload old = new AttachmentsSubspace.Upload(System.currentTimeMillis() - AttachmentsSubspace.ABANDONED_MILLIS - 1, 1);
        AttachmentsSubspace.Upload recent = new AttachmentsSubspace.Upload(System.currentTimeMillis(), 2);
        f.kv.run(tx -> {
            DbHandle h = f.dirs.open(tx, db);
            AttachmentsSubspace.writeUpload(tx, h, old, 0, List.of(new byte[] {1}, new byte[] {2}));
            AttachmentsSubspace.writeUpload(tx, h, recent, 0, List.of(new byte[] {3}));
            return null;
        });
        StoredAttachment st = f.store.open(db).storeAttachment("d", "a", new java.io.ByteArrayInputStream(random(3 << 20, 10)));
        assertEquals(1, f.store.open(db).sweepAttachments(), "the stored body nobody named");
        assertEquals(1, uploadCount(), "the recent upload may still be streaming");
        // A document naming a body a sweep took is a conflict (the client sends it again), never a document without its data.
        UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit("d", null, false, follows(Json.NODES.objectNode(), "a")).withStored(java.util.Map.of("a", st))), true).getFirst();
        assertEquals(StorageException.Kind.CONFLICT, r.error().kind());
    }

    @Test
    void storingUnderCommitFaultsGivesTheSameBody() {
        try (StoreFixture faulty = StoreFixture.withFaults(0.1, 42)) {
            String name = faulty.newDb("att", 0);
            byte[] big = random(6 << 20, 11);
            StoredAttachment st = faulty.store.open(name).storeAttachment("d", "a", new java.io.ByteArrayInputStream(big));
            java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            for (long next = 0; ; ) {
                List<byte[]> chunks = faulty.store.open(name).attachmentChunks("d", st.digest(), next, 16);
                for (byte[] c : chunks) out.writeBytes(c);
                if (chunks.size() < 16) break;
                next += chunks.size();
            }
            assertArrayEquals(big, out.toByteArray());
            assertTrue(faulty.injectedFaults() > 0, "faults were injected");
        }
    }

    static byte[] gunzip(byte[] gz) throws Exception {
        try (var in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(gz))) {
            return in.readAllBytes();
        }
    }

    static byte[] text(int n) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < n; i++) b.append("line ").append(i).append(" of a compressible text\n");
        return b.substring(0, n).getBytes();
    }

    /** couch_db:with_stream: a compressible type is stored gzipped, and the digest is the md5 of the bytes stored. */
    @Test
    void compressibleTypesAreStoredGzipped() throws Exception {
        byte[] txt = text(100_000);
        ObjectNode body = Json.NODES.objectNode();
        body.putObject("_attachments").putObject("t.txt").put("content_type", "text/plain; charset=utf-8").put("data", Base64.getEncoder().encodeToString(txt));
        UpdateResult r = put("d", null, body);
        assertTrue(r.ok(), String.valueOf(r.error()));
        StoredDoc d = f.store.open(db).get("d", null, false);
        JsonNode meta = d.body().get("_attachments").get("t.txt");
        byte[] stored = f.store.open(db).<byte[]>read(x -> x.attachment("d", meta.get("digest").asText()));
        assertArrayEquals(txt, gunzip(stored));
        assertEquals("gzip", meta.get("encoding").asText());
        assertEquals(stored.length, meta.get("encoded_length").asLong());
        assertTrue(stored.length < txt.length / 4, "compressed");
        assertEquals(txt.length, meta.get("length").asLong());
        assertEquals(AttachmentsSubspace.digestOf(AttachmentsSubspace.md5(stored)), meta.get("digest").asText());
        assertEquals(0x03, stored[9], "zlib's header: OS Unix");
        // Rendered stubs hide how the body is stored; attachments=true inlines it decoded.
        ObjectNode rendered = DocumentJson.render(d);
        assertTrue(!rendered.at("/_attachments/t.txt").has("encoding") && !rendered.at("/_attachments/t.txt").has("encoded_length"));
        DocumentJson.showEncoding(d, rendered);
        assertEquals(stored.length, rendered.at("/_attachments/t.txt/encoded_length").asLong());
        ObjectNode inlined = DocumentJson.render(d);
        f.store.open(db).read(x -> {
            x.inlineAttachments(d, inlined, 0);
            return null;
        });
        assertArrayEquals(txt, Base64.getDecoder().decode(inlined.at("/_attachments/t.txt/data").asText()));
        try (var in = f.store.open(db).attachmentStream("d", meta, true)) {
            assertArrayEquals(txt, in.readAllBytes());
        }
        // compression_level 0 stores every type as sent.
        f.store.attachmentCompression(new AttachmentCompression(AttachmentCompression.DEFAULT_TYPES, 0));
        UpdateResult r2 = put("e", null, body.deepCopy());
        assertTrue(f.store.open(db).get("e", null, false).body().at("/_attachments/t.txt").get("encoding") == null, String.valueOf(r2.error()));
    }

    /** A large compressible body is gzipped as it streams in, a megabyte per transaction, never whole in memory. */
    @Test
    void largeCompressibleBodiesAreGzippedAsTheyStream() throws Exception {
        byte[] txt = text(6 << 20);
        ObjectNode meta = Json.NODES.objectNode().put("content_type", "application/json");
        StoredAttachment st = f.store.open(db).readAttachment("d", "big.json", meta, new java.io.ByteArrayInputStream(txt));
        assertEquals("gzip", st.encoding());
        assertEquals(txt.length, st.length());
        ObjectNode body = Json.NODES.objectNode();
        body.putObject("_attachments").set("big.json", meta);
        UpdateResult r = f.store.open(db).update(List.of(DocUpdate.edit("d", null, false, body).withStored(java.util.Map.of("big.json", st))), true).getFirst();
        assertTrue(r.ok(), String.valueOf(r.error()));
        JsonNode stored = f.store.open(db).get("d", null, false).body().at("/_attachments/big.json");
        assertEquals(st.encodedLength(), stored.get("encoded_length").asLong());
        assertArrayEquals(txt, gunzip(readStreamed("d", stored.get("digest").asText())));
    }

    /** A body its entry says is gzip (a replicator's encoded part, COUCHDB-1923) is stored as it came. */
    @Test
    void gzipSentIsStoredAsItCame() throws Exception {
        byte[] txt = text(5_000);
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (var out = new java.util.zip.GZIPOutputStream(gz)) {
            out.write(txt);
        }
        ObjectNode meta = Json.NODES.objectNode().put("content_type", "text/plain").put("length", txt.length).put("encoding", "gzip")
                .put("encoded_length", gz.size());
        StoredAttachment st = f.store.open(db).readAttachment("d", "t.txt", meta, new java.io.ByteArrayInputStream(gz.toByteArray()));
        assertEquals(new StoredAttachment(AttachmentsSubspace.digestOf(AttachmentsSubspace.md5(gz.toByteArray())), txt.length, "gzip", gz.size()), st);
        assertArrayEquals(gz.toByteArray(), readStreamed("d", st.digest()));
    }
}

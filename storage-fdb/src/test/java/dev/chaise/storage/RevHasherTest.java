package dev.chaise.storage;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class RevHasherTest {

    static final ObjectMapper PLAIN = new ObjectMapper();
    static final RevId PARENT = RevId.of(1, "967a00dff5e02add41819138abb3284d");
    static final RevHasher.AttachmentDigest A = new RevHasher.AttachmentDigest("a.txt", "text/plain", "md5-AAAA");
    static final RevHasher.AttachmentDigest B = new RevHasher.AttachmentDigest("b.png", "image/png", "md5-BBBB");

    static JsonNode json(String s) {
        try {
            return PLAIN.readTree(s);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    static String hash(RevId parent, boolean deleted, String body, List<RevHasher.AttachmentDigest> atts) {
        return RevHasher.newRevId(parent, deleted, json(body), atts).hash();
    }

    /** The input spelled out byte by byte, as the class Javadoc documents it. */
    @Test
    void hashIsMd5OfTheDocumentedInput() throws Exception {
        java.io.ByteArrayOutputStream in = new java.io.ByteArrayOutputStream();
        in.write(0); // not deleted
        in.write(new byte[] {0x15, 0x01}); // parent pos 1
        in.write(0x01);
        in.write(HexFormat.of().parseHex("967a00ffdff5e02add41819138abb3284d")); // the 00 escaped
        in.write(0x00);
        in.write(1); // one attachment
        in.write("\u0002a.txt\u0000\u0002text/plain\u0000\u0002md5-AAAA\u0000".getBytes(StandardCharsets.UTF_8));
        // {"a":1,"b":[true,null,"x"]} in key order: a, b/0, b/1, b/2
        byte[][] leaves = {
                {0x02, 'a', 0x00}, {0x15, 0x01},
                {0x02, 'b', 0x00, 0x14}, {0x27},
                {0x02, 'b', 0x00, 0x15, 0x01}, {0x00},
                {0x02, 'b', 0x00, 0x15, 0x02}, {0x02, 'x', 0x00}};
        for (byte[] part : leaves) {
            in.write(part.length);
            in.write(part);
        }
        String expected = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(in.toByteArray()));
        String body = "{\"b\":[true,null,\"x\"],\"a\":1,\"_attachments\":{\"a.txt\":{\"stub\":true}}}";
        RevId next = RevHasher.newRevId(PARENT, false, json(body), List.of(A));
        assertEquals(RevId.of(2, expected), next);
        assertTrue(RevId.isCanonicalHash(next.hash()));
        assertEquals(next.hash(), RevId.decodeHash(next.hashBytes()));
    }

    @Test
    void firstRevisionIsAtPositionOne() {
        assertEquals(1, RevHasher.newRevId(null, false, json("{\"a\":1}"), List.of()).pos());
    }

    @Test
    void sameStoredEditGivesSameRevisionWhateverTheSpelling() {
        String h = hash(PARENT, false, "{\"a\":{\"y\":1.0,\"x\":[1,2.5]},\"b\":\"\\u00e9\"}", List.of(A, B));
        assertEquals(h, hash(PARENT, false, "{ \"b\" : \"é\", \"a\" : { \"x\" : [ 1 , 2.50 ], \"y\" : 10e-1 } }", List.of(B, A)));
        // 1 and 1.0 are stored, and returned, differently: different edits, as in CouchDB.
        assertNotEquals(hash(null, false, "{\"a\":1}", List.of()), hash(null, false, "{\"a\":1.0}", List.of()));
    }

    @Test
    void specialMembersAreNotPartOfTheBody() {
        assertEquals(
                hash(PARENT, false, "{\"a\":1}", List.of()),
                hash(PARENT, false, "{\"_id\":\"x\",\"_rev\":\"1-abc\",\"a\":1,\"_attachments\":{\"x\":{}}}", List.of()));
        // Nested members starting with _ are ordinary data.
        assertNotEquals(hash(null, false, "{\"a\":{}}", List.of()), hash(null, false, "{\"a\":{\"_x\":1}}", List.of()));
    }

    @Test
    void everyInputMatters() {
        String base = hash(PARENT, false, "{\"a\":1}", List.of(A));
        assertNotEquals(base, hash(PARENT, true, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(null, false, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(RevId.of(1, "967a00dff5e02add41819138abb3284e"), false, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(RevId.of(2, "967a00dff5e02add41819138abb3284d"), false, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":2}", List.of(A)));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":\"1\"}", List.of(A)));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}", List.of()));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}",
                List.of(new RevHasher.AttachmentDigest("a.txt", "text/plain", "md5-AAAB"))));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}",
                List.of(new RevHasher.AttachmentDigest("a.txt", "text/html", "md5-AAAA"))));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}",
                List.of(new RevHasher.AttachmentDigest("a.txt", null, "md5-AAAA"))));
        assertNotEquals(hash(null, false, "{\"a\":[1,2]}", List.of()), hash(null, false, "{\"a\":[2,1]}", List.of()));
        // Where one leaf ends and the next begins is part of the input.
        assertNotEquals(hash(null, false, "{\"a\":\"b\",\"c\":\"d\"}", List.of()), hash(null, false, "{\"a\":\"b\\u0000c\"}", List.of()));
        assertNotEquals(hash(null, false, "{\"a\":{}}", List.of()), hash(null, false, "{\"a\":[]}", List.of()));
    }

    /** Attachments sort by code point (UTF-8 bytes), whatever mix of BMP units and surrogate pairs their names hold. */
    @Test
    void attachmentsSortByCodePoint() {
        RevHasher.AttachmentDigest bmp = new RevHasher.AttachmentDigest("\uff21", "text/plain", "md5-A");
        RevHasher.AttachmentDigest astral = new RevHasher.AttachmentDigest("\ud83d\ude00", "text/plain", "md5-B");
        RevHasher.AttachmentDigest ascii = new RevHasher.AttachmentDigest("z", "text/plain", "md5-C");
        String h = hash(PARENT, false, "{}", List.of(bmp, astral, ascii));
        assertEquals(h, hash(PARENT, false, "{}", List.of(astral, ascii, bmp)));
        assertEquals(h, hash(PARENT, false, "{}", List.of(ascii, bmp, astral)));
    }

    @Test
    void bodylessDeletionHashesAsAnEmptyBody() {
        assertEquals(hash(PARENT, true, "{}", List.of()), RevHasher.newRevId(PARENT, true, (JsonNode) null, null).hash());
        assertThrows(IllegalArgumentException.class, () -> hash(PARENT, false, "[1]", List.of()));
    }

    /** Pinned so an accidental change of the input shows up here: revisions must not change between versions. */
    @Test
    void pinned() {
        assertEquals("693e9af84d3dfcc71e640e005bdc5e2e", hash(null, false, "{}", List.of()));
        assertEquals("67c528c6fbe0ea0674ce2d6934125d34", hash(PARENT, false, "{\"a\":[1,{\"b\":null}],\"c\":\"\\u0000\"}", List.of(A)));
    }
}

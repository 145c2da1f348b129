package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Revision ids as CouchDB 3's couch_db:new_revid makes them, checked against ids CouchDB itself produced. */
class RevHasherTest {
    static JsonNode json(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    static RevId rev(RevId parent, boolean deleted, String body, List<RevHasher.AttachmentDigest> atts) {
        return RevHasher.newRevId(parent, deleted, json(body), atts);
    }

    /** Ids CouchDB 3.5.0 gives, as its own Elixir tests (conflicts_test.exs, partition_crud_test.exs) hard-code them. */
    @Test
    void couchDbsOwnIds() {
        assertEquals(RevId.parse("1-967a00dff5e02add41819138abb3284d"), rev(null, false, "{}", List.of()));
        RevId r0 = rev(null, false, "{\"val\":\"r0\"}", List.of());
        assertEquals(RevId.parse("1-47f3268e7546965196b57572099f4372"), r0);
        RevId r1 = rev(r0, false, "{\"val\":\"r1\"}", List.of());
        assertEquals(RevId.parse("2-1d8171ab3a91475cfece749291e6f897"), r1);
        assertEquals(RevId.parse("3-3fb0a342d2ce092fdcc77856dbe8a2ef"), rev(r1, false, "{\"val\":\"r2\"}", List.of()));
        assertEquals(RevId.parse("1-43d86359741cb629c0953a2beb6e9d7a"), rev(null, false, "{\"partitioned_doc\":true}", List.of()));
    }

    /** The term spelled out byte by byte, as the class Javadoc documents it, with a parent and two attachments. */
    @Test
    void md5OfTheDocumentedTerm() throws Exception {
        byte[] md5a = MessageDigest.getInstance("MD5").digest("a".getBytes(StandardCharsets.UTF_8));
        byte[] md5b = MessageDigest.getInstance("MD5").digest("b".getBytes(StandardCharsets.UTF_8));
        var a = new RevHasher.AttachmentDigest("a.txt", "text/plain", "md5-" + Base64.getEncoder().encodeToString(md5a));
        var b = new RevHasher.AttachmentDigest("b.png", "image/png", "md5-" + Base64.getEncoder().encodeToString(md5b));
        ByteArrayOutputStream t = new ByteArrayOutputStream();
        t.write(new byte[] {(byte) 131, 108, 0, 0, 0, 5});
        t.write(new byte[] {100, 0, 4}); // true
        t.write("true".getBytes(StandardCharsets.US_ASCII));
        t.write(new byte[] {97, 3}); // the parent's position
        t.write(new byte[] {109, 0, 0, 0, 16}); // its id, 16 bytes
        t.write(HexFormat.of().parseHex("967a00dff5e02add41819138abb3284d"));
        // {[{<<"k">>, [1, -1, 2.5, <<"é">>, null]}]}: members in order, without _attachments
        t.write(new byte[] {104, 1, 108, 0, 0, 0, 1, 104, 2, 109, 0, 0, 0, 1, 'k'});
        t.write(new byte[] {108, 0, 0, 0, 5, 97, 1, 98, -1, -1, -1, -1, 70});
        t.write(HexFormat.of().parseHex("4004000000000000")); // 2.5
        t.write(new byte[] {109, 0, 0, 0, 2, (byte) 0xc3, (byte) 0xa9, 100, 0, 4, 'n', 'u', 'l', 'l', 106, 106});
        // the attachments, last first: {Name, Type, Md5}
        t.write(new byte[] {108, 0, 0, 0, 2});
        for (var att : List.of(b, a)) {
            t.write(new byte[] {104, 3});
            for (byte[] part : new byte[][] {att.name().getBytes(StandardCharsets.UTF_8), att.contentType().getBytes(StandardCharsets.UTF_8),
                    att == a ? md5a : md5b}) {
                t.write(new byte[] {109, 0, 0, 0, (byte) part.length});
                t.write(part);
            }
        }
        t.write(new byte[] {106, 106});
        String expected = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(t.toByteArray()));
        RevId parent = RevId.parse("3-967a00dff5e02add41819138abb3284d");
        String body = "{\"k\":[1,-1,2.5,\"é\",null],\"_attachments\":{\"a.txt\":{\"stub\":true},\"b.png\":{\"stub\":true}}}";
        assertEquals(RevId.of(4, expected), rev(parent, true, body, List.of(a, b)));
    }

    @Test
    void asInCouchDbOrderAndSpellingCount() {
        // Member order is part of the term; whitespace and escapes are not.
        assertNotEquals(rev(null, false, "{\"a\":1,\"b\":2}", List.of()), rev(null, false, "{\"b\":2,\"a\":1}", List.of()));
        assertEquals(rev(null, false, "{\"a\":\"é\"}", List.of()), rev(null, false, "{ \"a\" : \"\\u00e9\" }", List.of()));
        // An integer and a float are different terms.
        assertNotEquals(rev(null, false, "{\"a\":1}", List.of()), rev(null, false, "{\"a\":1.0}", List.of()));
        // A list of small integers is a string in the term, and so is that string's list spelled as numbers.
        assertNotEquals(rev(null, false, "{\"a\":[1,2]}", List.of()), rev(null, false, "{\"a\":[2,1]}", List.of()));
        assertNotEquals(rev(null, false, "{\"a\":{}}", List.of()), rev(null, false, "{\"a\":[]}", List.of()));
    }

    @Test
    void aParentsIdIsItsBytesOnlyWhenItIsHex() {
        RevId hex = RevId.parse("1-967a00dff5e02add41819138abb3284d");
        RevId upper = RevId.parse("1-967A00DFF5E02ADD41819138ABB3284D");
        RevId text = RevId.parse("1-abc");
        assertEquals(rev(hex, false, "{}", List.of()), rev(upper, false, "{}", List.of())); // parse_revid reads either case
        assertNotEquals(rev(hex, false, "{}", List.of()), rev(text, false, "{}", List.of()));
        assertEquals(2, rev(text, false, "{}", List.of()).pos());
    }

    @Test
    void deletionsAndBodylessEdits() {
        RevId parent = RevId.parse("1-967a00dff5e02add41819138abb3284d");
        assertEquals(rev(parent, true, "{}", List.of()), RevHasher.newRevId(parent, true, null, null));
        assertNotEquals(rev(parent, true, "{}", List.of()), rev(parent, false, "{}", List.of()));
        assertThrows(IllegalArgumentException.class, () -> RevHasher.newRevId(null, false, json("[1]"), List.of()));
    }
}

package dev.chaise.storage.rev;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

class RevHasherTest {

    static final ObjectMapper PLAIN = new ObjectMapper();
    static final ObjectMapper EXACT = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
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
        return RevHasher.hash(parent, deleted, json(body), atts);
    }

    @Test
    void hashIsMd5OfTheDocumentedCanonicalText() throws Exception {
        String text = "[false,\"1-967a00dff5e02add41819138abb3284d\",{\"a\":1e0,\"b\":[true,null,\"x\"]},"
                + "[[\"a.txt\",\"text/plain\",\"md5-AAAA\"]]]";
        String expected = HexFormat.of().formatHex(
                MessageDigest.getInstance("MD5").digest(text.getBytes(StandardCharsets.UTF_8)));
        assertEquals(expected, hash(PARENT, false, "{\"b\":[true,null,\"x\"],\"a\":1}", List.of(A)));
        RevId next = RevHasher.newRevId(PARENT, false, json("{\"b\":[true,null,\"x\"],\"a\":1}"), List.of(A));
        assertEquals(RevId.of(2, expected), next);
        assertTrue(RevId.isCanonicalHash(next.hash()));
        // Pinned so an accidental change of the canonical form shows up here.
        assertEquals("63a1cd0116ba9c0e911de579f12795eb", hash(null, false, "{}", List.of()));
    }

    @Test
    void firstRevisionIsAtPositionOne() {
        assertEquals(1, RevHasher.newRevId(null, false, json("{\"a\":1}"), List.of()).pos());
    }

    @Test
    void sameEditGivesSameRevisionWhateverTheSpelling() {
        String h = hash(PARENT, false, "{\"a\":{\"y\":1,\"x\":[1.0,2]},\"b\":\"\\u00e9\"}", List.of(A, B));
        assertEquals(h, hash(PARENT, false, "{ \"b\" : \"é\", \"a\" : { \"x\" : [ 1 , 2.00 ], \"y\" : 10e-1 } }", List.of(B, A)));
        assertEquals(h, RevHasher.hash(PARENT, false, exact("{\"b\":\"é\",\"a\":{\"x\":[1.000,2e0],\"y\":1}}"), List.of(B, A)));
    }

    @Test
    void specialMembersAreNotPartOfTheBody() {
        assertEquals(
                hash(PARENT, false, "{\"a\":1}", List.of()),
                hash(PARENT, false, "{\"_id\":\"x\",\"_rev\":\"1-abc\",\"a\":1,\"_attachments\":{}}", List.of()));
        // Nested members starting with _ are ordinary data.
        assertNotEquals(hash(null, false, "{\"a\":{}}", List.of()), hash(null, false, "{\"a\":{\"_x\":1}}", List.of()));
    }

    @Test
    void everyInputMatters() {
        String base = hash(PARENT, false, "{\"a\":1}", List.of(A));
        assertNotEquals(base, hash(PARENT, true, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(null, false, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(RevId.of(1, "967a00dff5e02add41819138abb3284e"), false, "{\"a\":1}", List.of(A)));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":2}", List.of(A)));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":\"1\"}", List.of(A)));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}", List.of()));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}",
                List.of(new RevHasher.AttachmentDigest("a.txt", "text/plain", "md5-AAAB"))));
        assertNotEquals(base, hash(PARENT, false, "{\"a\":1}",
                List.of(new RevHasher.AttachmentDigest("a.txt", "text/html", "md5-AAAA"))));
        assertNotEquals(hash(null, false, "{\"a\":[1,2]}", List.of()), hash(null, false, "{\"a\":[2,1]}", List.of()));
    }

    @Test
    void canonicalJsonForm() {
        assertEquals("{\"\":0e0,\"A\":-15e-1,\"a\":12e1,\"b\":1e-20}", RevHasher.canonicalJson(json("{\"b\":1E-20,\"a\":120,\"A\":-1.50,\"\":-0.0}")));
        assertEquals("\"q\\\"b\\\\s\\u000a\\u001ft\u00e9\u2028\"", RevHasher.canonicalJson(json("\"q\\\"b\\\\s\\n\\u001ft\u00e9\u2028\"")));
        assertEquals("123456789012345678901234567891e0", RevHasher.canonicalJson(json("123456789012345678901234567891")));
        assertEquals("12345678901234567890123456789e1", RevHasher.canonicalJson(json("123456789012345678901234567890")));
        assertEquals("1e400", RevHasher.canonicalJson(exact("1e400")));
        // Keys compare by code point: U+FF21 sorts before U+1F600 although its UTF-16 unit is larger.
        assertEquals("{\"\uff21\":1e0,\"\ud83d\ude00\":2e0}", RevHasher.canonicalJson(json("{\"\ud83d\ude00\":2,\"\uff21\":1}")));
        JsonNodeFactory f = JsonNodeFactory.instance;
        assertEquals("\"\\ud800\"", RevHasher.canonicalJson(f.textNode("\ud800")));
        assertThrows(IllegalArgumentException.class, () -> RevHasher.canonicalJson(f.numberNode(Double.NaN)));
    }

    /** Integers take a path without BigDecimal; it must print what the BigDecimal rule prints. */
    @Test
    void integerFastPathMatchesTheDecimalRule() {
        java.util.Random r = new java.util.Random(42);
        JsonNodeFactory f = JsonNodeFactory.instance;
        List<Long> values = new java.util.ArrayList<>(List.of(0L, 1L, -1L, 10L, -10L, 1200L, -1200L, Long.MAX_VALUE, Long.MIN_VALUE,
                1_000_000_000_000_000_000L, -1_000_000_000_000_000_000L));
        for (int i = 0; i < 10_000; i++) {
            long v = r.nextLong() >> r.nextInt(64);
            values.add(v);
            values.add(v - v % 1000);
        }
        for (long v : values) {
            java.math.BigDecimal d = new java.math.BigDecimal(v).stripTrailingZeros();
            String expected = v == 0 ? "0e0" : d.unscaledValue() + "e" + -d.scale();
            assertEquals(expected, RevHasher.canonicalJson(f.numberNode(v)), "long " + v);
            if (v == (int) v) assertEquals(expected, RevHasher.canonicalJson(f.numberNode((int) v)), "int " + v);
        }
    }

    /** Members sort by code point whatever mix of BMP units and surrogate pairs the names hold. */
    @Test
    void membersSortByCodePoint() {
        java.util.Random r = new java.util.Random(7);
        String[] units = {"a", "\u00e9", "\ud7ff", "\ue000", "\uff21", "\uffff", "\ud83d\ude00", "\ud800\udc00", "\udbff\udfff"};
        JsonNodeFactory f = JsonNodeFactory.instance;
        for (int i = 0; i < 2_000; i++) {
            List<String> names = new java.util.ArrayList<>();
            for (int k = 0; k < 4; k++) {
                StringBuilder sb = new StringBuilder();
                for (int j = r.nextInt(3); j >= 0; j--) sb.append(units[r.nextInt(units.length)]);
                names.add(sb.toString());
            }
            com.fasterxml.jackson.databind.node.ObjectNode o = f.objectNode();
            for (String n : names) o.put(n, 1);
            List<String> expected = new java.util.ArrayList<>(new java.util.TreeSet<>(names));
            expected.sort((a, b) -> java.util.Arrays.compare(a.codePoints().toArray(), b.codePoints().toArray()));
            StringBuilder want = new StringBuilder("{");
            for (String n : expected) want.append(want.length() > 1 ? "," : "").append('"').append(n).append("\":1e0");
            assertEquals(want.append('}').toString(), RevHasher.canonicalJson(o));
        }
    }

    @Test
    void bodylessDeletionHashesAsAnEmptyBody() {
        assertEquals(hash(PARENT, true, "{}", List.of()), RevHasher.hash(PARENT, true, null, null));
        assertThrows(IllegalArgumentException.class, () -> hash(PARENT, false, "[1]", List.of()));
    }

    static JsonNode exact(String s) {
        try {
            return EXACT.readTree(s);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }
}

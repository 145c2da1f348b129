package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.FloatNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvLimits;
import dev.chaise.storage.json.InvalidJsonException;
import dev.chaise.storage.json.Json;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class ExplodedJsonTest {
    private static final byte[] PREFIX = {0x15, 0x2a};

    /**
     * Objects that share their member names, in changing orders and nestings, exploded one after
     * another, as a bulk write's documents are: the member order kept from one object's sort
     * (ExplodedJson's shapes) must only ever be reused for the same names in the same order.
     * Keys ascend and every document comes back whole.
     */
    @Test
    void objectsOfOneShapeAndItsReorderingsExplodeInKeyOrder() {
        String[] names = {"type", "n", "score", "tags", "name", "created", "text", "_x", "zeta", "a"};
        java.util.Random random = new java.util.Random(42);
        for (int d = 0; d < 3_000; d++) {
            ObjectNode doc = shaped(random, names, 2);
            List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
            for (int i = 1; i < kvs.size(); i++) {
                assertTrue(Keys.compare(kvs.get(i - 1).key(), kvs.get(i).key()) < 0, "ascending in " + doc);
            }
            assertEquals(doc, ExplodedJson.implode(PREFIX, kvs.iterator()));
        }
    }

    /** An object of 2-6 of the names in a random order (often the first few in order), some holding another such object. */
    private static ObjectNode shaped(java.util.Random random, String[] names, int depth) {
        List<String> pool = new ArrayList<>(List.of(names));
        if (random.nextBoolean()) java.util.Collections.shuffle(pool, random);
        ObjectNode o = Json.NODES.objectNode();
        int n = 2 + random.nextInt(5);
        for (int i = 0; i < n; i++) {
            if (depth > 0 && random.nextInt(4) == 0) o.set(pool.get(i), shaped(random, names, depth - 1));
            else o.put(pool.get(i), random.nextInt(100));
        }
        return o;
    }
    private static final JsonNodeFactory NF = Json.NODES;

    // ------------------------------------------------------------------ layout, byte for byte

    @Test
    void smallDocumentLayoutIsPinned() throws Exception {
        ObjectNode doc = (ObjectNode) Json.MAPPER.readTree("""
                {"i":2.5,"h":18446744073709551616,"g":-300,"f":10,"e":null,"d":[],"c":-1.5,
                 "b":"x\\u0000","a":[true,{}],"\\u0000k":"v"}""");
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
        assertEquals(List.of(
                "152a0200ff6b00 = 027600",
                "152a02610014 = 27",
                "152a0261001501 = 017b00",
                "152a026200 = 027800ff00",
                "152a026300 = 214007ffffffffffff",
                "152a026400 = 015b00",
                "152a026500 = 00",
                "152a026600 = 150a",
                "152a026700 = 12fed3",
                "152a026800 = 1d09010000000000000000",
                "152a026900 = 21c004000000000000"), hex(kvs));

        ObjectNode back = ExplodedJson.implode(PREFIX, kvs.iterator());
        assertEquals("{\"\\u0000k\":\"v\",\"a\":[true,{}],\"b\":\"x\\u0000\",\"c\":-1.5,\"d\":[],\"e\":null,"
                + "\"f\":10,\"g\":-300,\"h\":18446744073709551616,\"i\":2.5}", Json.MAPPER.writeValueAsString(back));
        StrictJson.assertSame(doc, back);
    }

    @Test
    void scalarValueEncodings() {
        assertEquals("00", valueHex(NF.nullNode()));
        assertEquals("27", valueHex(NF.booleanNode(true)));
        assertEquals("26", valueHex(NF.booleanNode(false)));
        assertEquals("0200", valueHex(NF.textNode("")));
        assertEquals("02c3a900", valueHex(NF.textNode("é")));
        assertEquals("02f09f988000", valueHex(NF.textNode("\ud83d\ude00")));
        assertEquals("14", valueHex(IntNode.valueOf(0)));
        assertEquals("1501", valueHex(IntNode.valueOf(1)));
        assertEquals("13fe", valueHex(IntNode.valueOf(-1)));
        assertEquals("1c7fffffffffffffff", valueHex(LongNode.valueOf(Long.MAX_VALUE)));
        assertEquals("0c7fffffffffffffff", valueHex(LongNode.valueOf(Long.MIN_VALUE)));
        // The same integer stores the same bytes whatever node class carried it.
        assertEquals("1501", valueHex(BigIntegerNode.valueOf(BigInteger.ONE)));
        assertEquals("218000000000000000", valueHex(DoubleNode.valueOf(0.0)));
        assertEquals("217fffffffffffffff", valueHex(DoubleNode.valueOf(-0.0)));
        assertEquals("21bff0000000000000", valueHex(DoubleNode.valueOf(1.0)));
    }

    @Test
    void markersAreByteStringTuplesNoScalarProduces() {
        ObjectNode doc = NF.objectNode();
        doc.putObject("o");
        doc.putArray("a");
        doc.put("s", "a".repeat(KvLimits.MAX_VALUE_BYTES));
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
        assertEquals("152a026100 = 015b00", hex(kvs.get(0)));
        assertEquals("152a026f00 = 017b00", hex(kvs.get(1)));
        assertEquals("152a027300 = 0122001502", hex(kvs.get(2)));
        assertArrayEquals(Tuple.from((Object) new byte[] {'{'}).pack(), ExplodedJson.EMPTY_OBJECT);
        assertArrayEquals(Tuple.from((Object) new byte[] {'['}).pack(), ExplodedJson.EMPTY_ARRAY);
        // Scalars never start with the byte-string type code 0x01 (the property test checks this widely).
        for (JsonNode scalar : List.of(NF.nullNode(), NF.booleanNode(true), NF.textNode("\u0001"), IntNode.valueOf(1),
                DoubleNode.valueOf(Double.MIN_VALUE), BigIntegerNode.valueOf(BigInteger.TEN.pow(60).negate()))) {
            assertTrue(ExplodedJson.explode(PREFIX, doc("v", scalar)).get(0).value()[0] != 0x01, scalar.toString());
        }
    }

    // ------------------------------------------------------------------ chunked strings

    @Test
    void stringFillingTheValueLimitExactlyIsOneKv() {
        String s = "a".repeat(ExplodedJson.MAX_CHUNK_PAYLOAD);
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc("s", NF.textNode(s)));
        assertEquals(1, kvs.size());
        assertEquals(KvLimits.MAX_VALUE_BYTES, kvs.get(0).value().length);
        assertEquals(s, roundTrip(doc("s", NF.textNode(s))).get("s").textValue());
    }

    @Test
    void oneByteOverTheLimitIsChunkedWithNestedTupleKeys() {
        String s = "a".repeat(ExplodedJson.MAX_CHUNK_PAYLOAD + 1);
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc("s", NF.textNode(s)));
        assertEquals(3, kvs.size());
        assertEquals("152a027300 = 0122001502", hex(kvs.get(0)));
        assertEquals("152a027300051400", HexFormat.of().formatHex(kvs.get(1).key()));
        assertEquals("152a02730005150100 = 026100", hex(kvs.get(2)));
        assertEquals(KvLimits.MAX_VALUE_BYTES, kvs.get(1).value().length);
        assertEquals(s, roundTrip(doc("s", NF.textNode(s))).get("s").textValue());
    }

    @Test
    void chunksSplitBetweenCodePointsNeverInsideOne() {
        int room = ExplodedJson.MAX_CHUNK_PAYLOAD;
        // 3-byte char that would straddle the limit moves whole into the next chunk.
        assertParts("a".repeat(room - 1) + "€b", "a".repeat(room - 1), "€b");
        // So does a surrogate pair (4 bytes), and an escaped NUL (2 bytes in a tuple string).
        assertParts("a".repeat(room - 3) + "\ud83d\ude00", "a".repeat(room - 3), "\ud83d\ude00");
        assertParts("a".repeat(room - 2) + "\ud83d\ude00x", "a".repeat(room - 2), "\ud83d\ude00x");
        assertParts("a".repeat(room - 1) + "\u0000", "a".repeat(room - 1), "\u0000");
        // A combining sequence may be cut between its code points: each half is still valid text.
        assertParts("a".repeat(room - 1) + "e\u0301", "a".repeat(room - 1) + "e", "\u0301");
        // Many parts, all full but the last.
        String big = "€".repeat(200_000);
        List<String> parts = ExplodedJson.split(big);
        assertEquals(7, parts.size());
        assertEquals(big, String.join("", parts));
        for (String p : parts.subList(0, parts.size() - 1)) assertEquals(room / 3 * 3, ExplodedJson.utf8TupleLength(p));
    }

    private static void assertParts(String s, String... expected) {
        assertEquals(List.of(expected), ExplodedJson.split(s));
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc("s", NF.textNode(s)));
        assertEquals(expected.length + 1, kvs.size());
        for (int i = 0; i < expected.length; i++) {
            KeyValue chunk = kvs.get(i + 1);
            assertTrue(chunk.value().length <= KvLimits.MAX_VALUE_BYTES);
            assertEquals(expected[i], Tuple.fromBytes(chunk.value()).getString(0));
        }
        assertEquals(s, ExplodedJson.implode(PREFIX, kvs.iterator()).get("s").textValue());
    }

    // ------------------------------------------------------------------ key limit

    @Test
    void keyAtTheLimitIsAcceptedOneMoreByteIsRejectedNamingThePath() {
        // key = prefix (2) + 02 + name + 00
        String fits = "k".repeat(KvLimits.MAX_KEY_BYTES - PREFIX.length - 2);
        assertEquals(KvLimits.MAX_KEY_BYTES, ExplodedJson.explode(PREFIX, doc(fits, IntNode.valueOf(1))).get(0).key().length);

        ObjectNode inner = NF.objectNode();
        inner.set(fits + "k", IntNode.valueOf(1));
        ObjectNode doc = NF.objectNode();
        doc.putArray("a/b").add(0).add(inner);
        StorageException e = assertThrows(StorageException.class, () -> ExplodedJson.explode(PREFIX, doc));
        assertEquals(StorageException.Kind.BAD_REQUEST, e.kind());
        assertTrue(e.reason().startsWith("Document field path too long at /a~1b/1/kkkk"), e.reason());
        assertTrue(e.reason().contains("..."), e.reason());
        assertTrue(e.reason().endsWith("10008 bytes, the limit is 10000"), e.reason());
        assertTrue(e.reason().length() < 320, e.reason());
    }

    @Test
    void longPrefixCountsTowardsTheKeyLimit() {
        byte[] prefix = new byte[KvLimits.MAX_KEY_BYTES - 2];
        assertEquals(1, ExplodedJson.explode(prefix, doc("", NF.nullNode())).size());
        assertThrows(StorageException.class, () -> ExplodedJson.explode(prefix, doc("x", NF.nullNode())));
    }

    @Test
    void chunkKeysCountTowardsTheKeyLimit() {
        // The string's own key fits exactly, its chunk keys (3-4 bytes longer) do not.
        String name = "k".repeat(KvLimits.MAX_KEY_BYTES - PREFIX.length - 2);
        ExplodedJson.explode(PREFIX, doc(name, NF.textNode("short")));
        StorageException e = assertThrows(StorageException.class,
                () -> ExplodedJson.explode(PREFIX, doc(name, NF.textNode("x".repeat(200_000)))));
        assertTrue(e.reason().endsWith("10003 bytes, the limit is 10000"), e.reason());
    }

    @Test
    void nestingBeyondTheKeyLimitIsRejectedWithoutRecursion() {
        ObjectNode doc = NF.objectNode();
        ArrayNode a = doc.putArray("a");
        for (int i = 0; i < 50_000; i++) a = a.addArray();
        StorageException e = assertThrows(StorageException.class, () -> ExplodedJson.explode(PREFIX, doc));
        assertTrue(e.reason().startsWith("Document field path too long at /a/0/0/0/"), e.reason());
    }

    @Test
    void thousandsOfLevelsWithinTheKeyLimitRoundTrip() {
        ObjectNode doc = NF.objectNode();
        ArrayNode a = doc.putArray("a");
        for (int i = 0; i < 5_000; i++) a = a.addArray(); // each level is one key byte (0x14)
        a.add(NF.objectNode());
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
        assertEquals(1, kvs.size());
        StrictJson.assertSame(doc, ExplodedJson.implode(PREFIX, kvs.iterator()));
    }

    // ------------------------------------------------------------------ numbers and text

    @Test
    void numbersKeepCouchDbSemantics() throws Exception {
        ObjectNode doc = (ObjectNode) Json.MAPPER.readTree("""
                {"i":1,"n":-0,"f":1.0,"e":1e2,"z":-0.0,"t":0.1,"l":3000000000,"b":-123456789012345678901234567890,
                 "u":2.2250738585072009E-308,"m":1.7976931348623157e308,"s":5e-324,"p":1E21}""");
        ObjectNode back = roundTrip(doc);
        assertEquals("{\"b\":-123456789012345678901234567890,\"e\":100.0,\"f\":1.0,\"i\":1,\"l\":3000000000,"
                + "\"m\":1.7976931348623157E308,\"n\":0,\"p\":1.0E21,\"s\":4.9E-324,\"t\":0.1,"
                + "\"u\":2.225073858507201E-308,\"z\":-0.0}", Json.MAPPER.writeValueAsString(back));
        assertEquals(IntNode.class, back.get("i").getClass());
        assertEquals(LongNode.class, back.get("l").getClass());
        assertEquals(BigIntegerNode.class, back.get("b").getClass());
        assertEquals(DoubleNode.class, back.get("f").getClass());
        assertEquals(doc, back);
    }

    @Test
    void integersUpTo255BytesAreStoredBeyondThatRejected() {
        BigInteger max = BigInteger.ONE.shiftLeft(8 * 255).subtract(BigInteger.ONE);
        for (BigInteger ok : List.of(max, max.negate(), BigInteger.ONE.shiftLeft(63), BigInteger.ONE.shiftLeft(64).negate())) {
            ObjectNode doc = doc("n", BigIntegerNode.valueOf(ok));
            StrictJson.assertSame(doc, roundTrip(doc));
        }
        for (BigInteger tooBig : List.of(max.add(BigInteger.ONE), max.add(BigInteger.ONE).negate())) {
            StorageException e = assertThrows(StorageException.class,
                    () -> ExplodedJson.explode(PREFIX, doc("n", BigIntegerNode.valueOf(tooBig))));
            assertEquals(StorageException.Kind.BAD_REQUEST, e.kind());
            assertTrue(e.reason().startsWith("Number too large at /n: "), e.reason());
        }
    }

    @Test
    void nonFiniteNumbersAreRejected() {
        for (JsonNode bad : List.of(DoubleNode.valueOf(Double.NaN), DoubleNode.valueOf(Double.POSITIVE_INFINITY),
                FloatNode.valueOf(Float.NEGATIVE_INFINITY))) {
            StorageException e = assertThrows(StorageException.class, () -> ExplodedJson.explode(PREFIX, doc("x", bad)));
            assertEquals("invalid UTF-8 JSON", e.reason());
        }
        InvalidJsonException e = assertThrows(InvalidJsonException.class, () -> Json.MAPPER.readTree("{\"a\":[-1e400]}"));
        assertEquals("invalid UTF-8 JSON", e.reason());
    }

    @Test
    void unpairedSurrogatesAreRejectedInValuesAndNames() {
        for (String bad : List.of("\ud800", "x\udc00", "\ude00\ud83d")) {
            // Json.NODES refuses such text itself (below): a tree built by another factory reaches explode's own check.
            assertThrows(StorageException.class, () -> ExplodedJson.explode(PREFIX, doc("x", TextNode.valueOf(bad))));
            assertThrows(StorageException.class, () -> ExplodedJson.explode(PREFIX, doc(bad, NF.nullNode())));
        }
        InvalidJsonException e = assertThrows(InvalidJsonException.class, () -> Json.MAPPER.readTree("{\"a\":\"\\ud83d\"}"));
        assertEquals("invalid UTF-8 JSON", e.reason());
    }

    @Test
    void mapperKeepsTheLastDuplicateAndRejectsTrailingContent() throws Exception {
        assertEquals(Json.MAPPER.readTree("{\"a\":{\"c\":2}}"), Json.MAPPER.readTree("{\"a\":{\"b\":1},\"a\":{\"c\":2}}"));
        assertThrows(Exception.class, () -> Json.MAPPER.readTree("{\"a\":1} {}"));
        assertThrows(Exception.class, () -> Json.MAPPER.readTree("{\"a\":NaN}"));
    }

    // ------------------------------------------------------------------ implode

    @Test
    void implodeSkipsTheMetadataKvAndEmptyGivesEmpty() {
        assertEquals(List.of(), ExplodedJson.explode(PREFIX, NF.objectNode()));
        List<KeyValue> kvs = new ArrayList<>();
        kvs.add(new KeyValue(PREFIX.clone(), Tuple.from(1L, "rev metadata").pack()));
        assertEquals(NF.objectNode(), ExplodedJson.implode(PREFIX, kvs.iterator()));
        kvs.addAll(ExplodedJson.explode(PREFIX, doc("a", IntNode.valueOf(1))));
        assertEquals(doc("a", IntNode.valueOf(1)), ExplodedJson.implode(PREFIX, kvs.iterator()));
    }

    @Test
    void arrayPositionsOrderNumericallyNotTextually() {
        ArrayNode a = NF.arrayNode();
        for (int i = 0; i < 300; i++) a.add(i);
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc("a", a));
        for (int i = 1; i < kvs.size(); i++) assertTrue(Keys.compare(kvs.get(i - 1).key(), kvs.get(i).key()) < 0);
        assertEquals(2L, Tuple.fromBytes(kvs.get(2).key(), 2, kvs.get(2).key().length - 2).getLong(1));
        assertEquals(a, ExplodedJson.implode(PREFIX, kvs.iterator()).get("a"));
    }

    @Test
    void corruptLayoutsAreReportedNotGuessed() {
        List<KeyValue> chunked = ExplodedJson.explode(PREFIX, doc("s", NF.textNode("y".repeat(150_000))));
        assertCorrupt(chunked.subList(0, 2), "missing part 1 of 2");
        assertCorrupt(List.of(chunked.get(0), chunked.get(2), chunked.get(1)), "expected part 0 of 2");
        assertCorrupt(chunked.subList(1, 3), "unexpected path element");

        ArrayNode a = NF.arrayNode().add(1).add(2).add(3);
        List<KeyValue> array = ExplodedJson.explode(PREFIX, doc("a", a));
        assertCorrupt(List.of(array.get(0), array.get(2)), "array position 2 where 1 was due");
        assertCorrupt(List.of(array.get(0), array.get(1), array.get(0)), "keys out of order");
        assertCorrupt(List.of(new KeyValue(new byte[] {0x15, 0x2b, 0x02, 0x61, 0x00}, new byte[] {0x00})), "outside");
        assertCorrupt(List.of(new KeyValue(new byte[] {0x15, 0x2a, 0x14}, new byte[] {0x00})), "does not fit a OBJECT");
        assertCorrupt(List.of(new KeyValue(array.get(0).key(), new byte[] {0x01, 0x7a, 0x00})), "unknown marker");
        assertCorrupt(List.of(new KeyValue(array.get(0).key(), new byte[] {0x15, 0x01, 0x15, 0x02})), "one-element");
    }

    private static void assertCorrupt(List<KeyValue> kvs, String why) {
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> ExplodedJson.implode(PREFIX, kvs.iterator()));
        assertTrue(e.getMessage().contains(why), e.getMessage());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void wideArraysAndObjectsAreLinear() {
        ArrayNode wide = NF.arrayNode();
        ObjectNode members = NF.objectNode();
        for (int i = 0; i < 200_000; i++) {
            wide.add(i);
            members.put("m" + i, i);
        }
        ObjectNode doc = NF.objectNode();
        doc.set("a", wide);
        doc.set("o", members);
        StrictJson.assertSame(doc, roundTrip(doc));
    }

    // ------------------------------------------------------------------ sizes

    @Test
    void sizes() throws Exception {
        ObjectNode doc = (ObjectNode) Json.MAPPER.readTree("{ \"a\" : \"é\", \"b\" : [1, 2.5, {}] }");
        assertEquals("{\"a\":\"é\",\"b\":[1,2.5,{}]}".getBytes(StandardCharsets.UTF_8).length, ExplodedJson.externalSize(doc));
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
        long sum = 0;
        for (KeyValue kv : kvs) sum += kv.key().length + kv.value().length;
        assertEquals(sum, ExplodedJson.activeSize(kvs));
        assertEquals((5 + 4) + (6 + 2) + (7 + 9) + (7 + 3), ExplodedJson.activeSize(kvs));
    }

    // ------------------------------------------------------------------ helpers

    static ObjectNode doc(String name, JsonNode value) {
        ObjectNode doc = NF.objectNode();
        doc.set(name, value);
        return doc;
    }

    private static ObjectNode roundTrip(ObjectNode doc) {
        return ExplodedJson.implode(PREFIX, ExplodedJson.explode(PREFIX, doc).iterator());
    }

    private static String valueHex(JsonNode scalar) {
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc("v", scalar));
        assertEquals(1, kvs.size());
        return HexFormat.of().formatHex(kvs.get(0).value());
    }

    private static List<String> hex(List<KeyValue> kvs) {
        return kvs.stream().map(ExplodedJsonTest::hex).toList();
    }

    private static String hex(KeyValue kv) {
        return HexFormat.of().formatHex(kv.key()) + " = " + HexFormat.of().formatHex(kv.value());
    }
}

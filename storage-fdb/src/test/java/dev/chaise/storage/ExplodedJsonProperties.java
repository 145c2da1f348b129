package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvLimits;
import dev.chaise.storage.json.Json;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.RandomDistribution;
import net.jqwik.api.statistics.Statistics;

/** Generated documents through explode and implode: nothing lost, nothing over FDB's limits. */
class ExplodedJsonProperties {
    /** A realistic revision prefix: tuple-packed, with NULs and 0xff inside. */
    static final byte[] PREFIX = Tuple.from("db", 1L, "doc\u0000\u00e9", true, 3L, new byte[] {0, 1, (byte) 0xff}).pack();
    static final JsonNodeFactory NF = Json.NODES;
    private static final RandomDistribution UNIFORM = RandomDistribution.uniform();

    @Property(tries = 400)
    void explodeThenImplodeGivesBackTheDocument(@ForAll("documents") ObjectNode doc) {
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
        ObjectNode back = ExplodedJson.implode(PREFIX, kvs.iterator());
        StrictJson.assertSame(doc, back);
        assertEquals(doc, back);

        List<KeyValue> withMetadata = new ArrayList<>();
        withMetadata.add(new KeyValue(PREFIX.clone(), Tuple.from(1L).pack()));
        withMetadata.addAll(kvs);
        StrictJson.assertSame(doc, ExplodedJson.implode(PREFIX, withMetadata.iterator()));

        int depth = depth(doc);
        Statistics.label("depth").collect(depth < 5 ? "<5" : depth < 50 ? "<50" : ">=50");
        Statistics.label("chunked").collect(kvs.stream().anyMatch(kv -> kv.value()[0] == 0x01 && kv.value()[1] == '"'));
    }

    private static int depth(JsonNode node) {
        int d = 0;
        for (JsonNode child : node) d = Math.max(d, depth(child));
        return node.isContainerNode() ? d + 1 : 0;
    }

    @Property(tries = 400)
    void everyKvIsWithinFdbLimitsAndKeysAscend(@ForAll("documents") ObjectNode doc) {
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
        byte[] previous = PREFIX;
        for (KeyValue kv : kvs) {
            assertTrue(kv.key().length <= KvLimits.MAX_KEY_BYTES);
            assertTrue(kv.value().length <= KvLimits.MAX_VALUE_BYTES);
            assertTrue(Keys.startsWith(kv.key(), PREFIX));
            assertTrue(Keys.compare(previous, kv.key()) < 0, "ascending and never the bare prefix");
            previous = kv.key();
        }
        assertEquals(doc.isEmpty(), kvs.isEmpty());
        long sum = 0;
        for (KeyValue kv : kvs) sum += kv.key().length + kv.value().length;
        assertEquals(sum, ExplodedJson.activeSize(kvs));
        Statistics.label("kvs").collect(kvs.size() < 10 ? "<10" : kvs.size() < 100 ? "<100" : ">=100");
    }

    @Property(tries = 300)
    void theMapperParsesWhatItWritesToTheSameNodes(@ForAll("documents") ObjectNode doc) throws Exception {
        byte[] text = Json.MAPPER.writeValueAsBytes(doc);
        assertEquals(text.length, ExplodedJson.externalSize(doc));
        StrictJson.assertSameIgnoringMemberOrder(doc, Json.MAPPER.readTree(text));
    }

    @Property(tries = 1000)
    void scalarValuesNeverLookLikeMarkers(@ForAll("scalars") JsonNode scalar) {
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, ExplodedJsonTest.doc("v", scalar));
        assertEquals(1, kvs.size());
        byte[] value = kvs.get(0).value();
        assertNotEquals((byte) 0x01, value[0]);
        assertEquals(1, Tuple.fromBytes(value).size());
    }

    @Property(tries = 80)
    void longStringsSplitGreedilyOnCodePoints(@ForAll("longStrings") String s) {
        List<KeyValue> kvs = ExplodedJson.explode(PREFIX, ExplodedJsonTest.doc("s", NF.textNode(s)));
        boolean fits = ExplodedJson.utf8TupleLength(s) <= ExplodedJson.MAX_CHUNK_PAYLOAD;
        Statistics.collect(fits ? "one KV" : kvs.size() - 1 + " chunks");
        if (fits) {
            assertEquals(1, kvs.size());
            assertEquals(s, Tuple.fromBytes(kvs.get(0).value()).getString(0));
            return;
        }
        Tuple marker = Tuple.fromBytes(kvs.get(0).value());
        assertArrayEquals(new byte[] {'"'}, marker.getBytes(0));
        assertEquals(kvs.size() - 1, marker.getLong(1));
        StringBuilder joined = new StringBuilder();
        for (int i = 1; i < kvs.size(); i++) {
            String part = Tuple.fromBytes(kvs.get(i).value()).getString(0);
            assertTrue(kvs.get(i).value().length <= KvLimits.MAX_VALUE_BYTES);
            if (i < kvs.size() - 1) {
                // Greedy: the next code point would not have fitted.
                String next = new String(Character.toChars(s.codePointAt(joined.length() + part.length())));
                assertTrue(ExplodedJson.utf8TupleLength(part + next) > ExplodedJson.MAX_CHUNK_PAYLOAD);
            }
            joined.append(part);
        }
        assertEquals(s, joined.toString());
        assertEquals(s, ExplodedJson.implode(PREFIX, kvs.iterator()).get("s").textValue());
    }

    @Property(tries = 300)
    void pathsOverTheKeyLimitAreRejectedAndOnlyThose(@ForAll("longNames") ObjectNode doc) {
        int longest = longestKey(doc, PREFIX.length);
        Statistics.collect(longest <= KvLimits.MAX_KEY_BYTES ? "fits" : "too long");
        if (longest <= KvLimits.MAX_KEY_BYTES) {
            List<KeyValue> kvs = ExplodedJson.explode(PREFIX, doc);
            assertEquals(longest, kvs.stream().mapToInt(kv -> kv.key().length).max().orElseThrow());
            StrictJson.assertSame(doc, ExplodedJson.implode(PREFIX, kvs.iterator()));
        } else {
            StorageException e = assertThrows(StorageException.class, () -> ExplodedJson.explode(PREFIX, doc));
            assertEquals(StorageException.Kind.BAD_REQUEST, e.kind());
            assertTrue(e.reason().startsWith("Document field path too long at /"), e.reason());
        }
    }

    /** The model of the key layout: the longest prefix + packed path over all leaves. */
    private static int longestKey(JsonNode node, int keyLength) {
        if (!node.isContainerNode() || node.isEmpty()) return keyLength;
        int longest = 0;
        if (node.isObject()) {
            for (Map.Entry<String, JsonNode> e : node.properties()) {
                longest = Math.max(longest, longestKey(e.getValue(), keyLength + Tuple.from(e.getKey()).pack().length));
            }
        } else {
            for (int i = 0; i < node.size(); i++) {
                longest = Math.max(longest, longestKey(node.get(i), keyLength + Tuple.from((long) i).pack().length));
            }
        }
        return longest;
    }

    // ------------------------------------------------------------------ generators

    @Provide
    Arbitrary<ObjectNode> documents() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, objects(4)),
                net.jqwik.api.Tuple.of(2, deepDocuments()),
                net.jqwik.api.Tuple.of(1, documentsWithLongStrings()));
    }

    private Arbitrary<ObjectNode> objects(int depth) {
        return Arbitraries.maps(strings(), values(depth)).ofMaxSize(8).withSizeDistribution(UNIFORM).map(ExplodedJsonProperties::object);
    }

    private Arbitrary<ArrayNode> arrays(int depth) {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(4, values(depth).list().ofMaxSize(6).withSizeDistribution(UNIFORM)),
                net.jqwik.api.Tuple.of(1, values(0).list().ofMinSize(11).ofMaxSize(25)))
                .map(ExplodedJsonProperties::array);
    }

    private Arbitrary<JsonNode> values(int depth) {
        if (depth == 0) return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(5, scalars()), net.jqwik.api.Tuple.of(1, empties()));
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, scalars()),
                net.jqwik.api.Tuple.of(1, empties()),
                net.jqwik.api.Tuple.of(2, Arbitraries.lazy(() -> objects(depth - 1))),
                net.jqwik.api.Tuple.of(2, Arbitraries.lazy(() -> arrays(depth - 1))));
    }

    private Arbitrary<JsonNode> empties() {
        return Arbitraries.of(true, false).map(o -> o ? NF.objectNode() : NF.arrayNode());
    }

    /** Chains of 1 to 60 alternating objects and arrays, with empty containers beside every level. */
    private Arbitrary<ObjectNode> deepDocuments() {
        return Combinators.combine(
                        Arbitraries.integers().between(1, 60).withDistribution(UNIFORM),
                        Arbitraries.of(true, false).list().ofSize(60),
                        strings().list().ofSize(60),
                        values(1))
                .as((depth, kinds, names, innermost) -> {
                    JsonNode node = innermost;
                    for (int i = depth - 1; i >= 0; i--) {
                        if (kinds.get(i)) {
                            ObjectNode o = NF.objectNode();
                            o.putObject("{}");
                            o.putArray("[]");
                            o.set(names.get(i), node);
                            node = o;
                        } else {
                            ArrayNode a = NF.arrayNode();
                            a.addObject();
                            a.add(node);
                            a.addArray();
                            node = a;
                        }
                    }
                    ObjectNode root = NF.objectNode();
                    root.set("deep", node);
                    root.putArray("");
                    return root;
                });
    }

    private Arbitrary<ObjectNode> documentsWithLongStrings() {
        return Combinators.combine(objects(2), longStrings(), longStrings(), strings())
                .as((generated, s1, s2, name) -> {
                    ObjectNode doc = generated.deepCopy();
                    doc.put(name, s1);
                    doc.putArray("\uffff").add("short").add(s2).add(12);
                    return doc;
                });
    }

    /** 100 KB to 350 KB, with 1- to 4-byte characters (and NULs) falling on every chunk boundary. */
    @Provide
    Arbitrary<String> longStrings() {
        return Combinators.combine(
                        Arbitraries.integers().between(0, 7),
                        Arbitraries.of("a", "\u00e9", "\u20ac", "\ud83d\ude00", "\u0000", "e\u0301", "\uffff",
                                "ab\u0000\ud800\udc00\u20ac"),
                        Arbitraries.integers().between(ExplodedJson.MAX_CHUNK_PAYLOAD - 10, 350_000).withDistribution(UNIFORM))
                .as((pad, unit, bytes) -> "x".repeat(pad) + unit.repeat((int) (bytes / ExplodedJson.utf8TupleLength(unit)) + 1));
    }

    /** Chains of up to 6 levels whose member names are up to 5,000 bytes: about half the paths fit. */
    @Provide
    Arbitrary<ObjectNode> longNames() {
        Arbitrary<String> name = Combinators.combine(
                        Arbitraries.integers().between(0, 5_000).withDistribution(UNIFORM),
                        Arbitraries.of("k", "\u00e9", "\u20ac", "\ud83d\ude00", "\u0000"))
                .as((bytes, unit) -> unit.repeat((int) (bytes / ExplodedJson.utf8TupleLength(unit))));
        return Combinators.combine(
                        name.list().ofSize(6),
                        Arbitraries.frequency(net.jqwik.api.Tuple.of(3, true), net.jqwik.api.Tuple.of(1, false)).list().ofSize(6),
                        Arbitraries.integers().between(1, 6).withDistribution(UNIFORM),
                        scalars())
                .as((names, kinds, depth, leaf) -> {
                    JsonNode node = leaf;
                    for (int i = depth - 1; i >= 1; i--) {
                        if (kinds.get(i)) {
                            node = object(Map.of(names.get(i), node));
                        } else {
                            ArrayNode a = NF.arrayNode();
                            for (int j = 0; j < 11; j++) a.add(j);
                            node = a.add(node);
                        }
                    }
                    return object(Map.of(names.get(0), node));
                });
    }

    @Provide
    Arbitrary<JsonNode> scalars() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(1, Arbitraries.just(NF.nullNode())),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(true, false).map(NF::booleanNode)),
                net.jqwik.api.Tuple.of(4, strings().map(NF::textNode)),
                net.jqwik.api.Tuple.of(3, integers().map(ExplodedJsonProperties::integer)),
                net.jqwik.api.Tuple.of(3, doubles().map(DoubleNode::valueOf)));
    }

    /** Short strings over all of Unicode but lone surrogates: NUL, controls, combining marks, astral. */
    private Arbitrary<String> strings() {
        Arbitrary<Integer> codePoints = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, Arbitraries.integers().between(0x20, 0x7e)),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(0)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x01, 0x1f)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x80, 0x7ff)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x300, 0x36f)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x800, 0xd7ff)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0xe000, 0xffff)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x10000, 0x10ffff)));
        return codePoints.list().ofMaxSize(10).map(cps -> new String(cps.stream().mapToInt(Integer::intValue).toArray(), 0, cps.size()));
    }

    private Arbitrary<BigInteger> integers() {
        BigInteger e60 = BigInteger.TEN.pow(60);
        BigInteger tupleMax = BigInteger.ONE.shiftLeft(8 * 255).subtract(BigInteger.ONE);
        BigInteger two63 = BigInteger.ONE.shiftLeft(63);
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(3, Arbitraries.integers().between(-1000, 1000).map(BigInteger::valueOf)),
                net.jqwik.api.Tuple.of(2, Arbitraries.longs().map(BigInteger::valueOf)),
                net.jqwik.api.Tuple.of(3, Arbitraries.bigIntegers().between(e60.negate(), e60)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(BigInteger.ZERO, BigInteger.valueOf(Integer.MAX_VALUE + 1L),
                        BigInteger.valueOf(Integer.MIN_VALUE - 1L), BigInteger.valueOf(Long.MAX_VALUE),
                        BigInteger.valueOf(Long.MIN_VALUE), two63, two63.negate().subtract(BigInteger.ONE),
                        BigInteger.ONE.shiftLeft(64), e60, e60.negate(), tupleMax, tupleMax.negate())));
    }

    private Arbitrary<Double> doubles() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(2, Arbitraries.doubles()),
                net.jqwik.api.Tuple.of(3, Arbitraries.longs().map(Double::longBitsToDouble).filter(Double::isFinite)),
                net.jqwik.api.Tuple.of(1, Arbitraries.of(-0.0, 0.0, 0.1, 1.0, 100.0, -1.5, 1e21, 1e-7,
                        Double.MIN_VALUE, -Double.MIN_VALUE, Double.MIN_NORMAL, Math.nextDown(Double.MIN_NORMAL),
                        Double.MAX_VALUE, -Double.MAX_VALUE)));
    }

    /** The node class Json.MAPPER gives an integer literal: the smallest of int, long, BigInteger. */
    static JsonNode integer(BigInteger b) {
        if (b.bitLength() < 32) return IntNode.valueOf(b.intValue());
        if (b.bitLength() < 64) return LongNode.valueOf(b.longValue());
        return BigIntegerNode.valueOf(b);
    }

    private static ObjectNode object(Map<String, JsonNode> members) {
        ObjectNode o = NF.objectNode();
        members.forEach(o::set);
        return o;
    }

    private static ArrayNode array(List<JsonNode> elements) {
        ArrayNode a = NF.arrayNode();
        elements.forEach(a::add);
        return a;
    }
}

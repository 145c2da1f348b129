package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.RandomDistribution;

/**
 * The codec's generators ({@link ExplodedJsonProperties}) for tests outside this package, plus
 * shapes that matter once bodies go through the store: wide documents (thousands of KVs, so range
 * reads span batches), documents of nothing but empty containers, and document ids.
 */
public final class JsonArbitraries {
    private static final ExplodedJsonProperties CODEC = new ExplodedJsonProperties();

    private JsonArbitraries() {}

    /** Mixed documents: unicode and NUL in names and strings, deep nesting, big numbers, strings over 100 KB, empties. */
    public static Arbitrary<ObjectNode> documents() {
        return Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(10, CODEC.documents()),
                net.jqwik.api.Tuple.of(1, wideDocuments()),
                net.jqwik.api.Tuple.of(1, emptyShapes()));
    }

    /** Scalars as {@link Json#MAPPER} would parse them. */
    public static Arbitrary<JsonNode> scalars() {
        return CODEC.scalars();
    }

    /** 100 KB to 350 KB strings whose characters straddle the chunk boundaries. */
    public static Arbitrary<String> longStrings() {
        return CODEC.longStrings();
    }

    /** 300 to 3,000 members or elements: bodies whose KVs span several range-read batches. */
    public static Arbitrary<ObjectNode> wideDocuments() {
        return Combinators.combine(
                        Arbitraries.integers().between(300, 3_000).withDistribution(RandomDistribution.uniform()),
                        Arbitraries.of(true, false),
                        CODEC.scalars())
                .as((n, asObject, value) -> {
                    ObjectNode doc = Json.NODES.objectNode();
                    if (asObject) {
                        for (int i = 0; i < n; i++) doc.set("m" + i, i % 7 == 0 ? value : Json.NODES.numberNode(i));
                    } else {
                        ArrayNode a = doc.putArray("a");
                        for (int i = 0; i < n; i++) a.add(i % 5 == 0 ? value : Json.NODES.numberNode(-i));
                    }
                    return doc;
                });
    }

    /** {@code {}}, and documents made only of empty objects, empty arrays and empty names. */
    public static Arbitrary<ObjectNode> emptyShapes() {
        return Arbitraries.integers().between(0, 4).map(kind -> {
            ObjectNode doc = Json.NODES.objectNode();
            switch (kind) {
                case 0 -> { }
                case 1 -> doc.putObject("");
                case 2 -> doc.putArray("").addArray().addObject();
                case 3 -> doc.putObject("o").putObject("").putArray("a");
                default -> {
                    doc.putArray("x");
                    doc.putObject("y");
                    doc.put("\u0000", "");
                }
            }
            return doc;
        });
    }

    /**
     * Document ids: ASCII, unicode with NUL and astral characters, and up to about 2,000 bytes; none
     * starts with an underscore (the HTTP layer's rule, which the store does not check).
     */
    public static Arbitrary<String> docIds() {
        Arbitrary<Integer> cp = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(8, Arbitraries.integers().between('a', 'z')),
                net.jqwik.api.Tuple.of(1, Arbitraries.just(0)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x01, 0x1f)),
                net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x80, 0xd7ff)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0xe000, 0xffff)),
                net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x10000, 0x10ffff)));
        Arbitrary<String> shortIds = cp.list().ofMinSize(1).ofMaxSize(12)
                .map(cps -> new String(cps.stream().mapToInt(Integer::intValue).toArray(), 0, cps.size()));
        Arbitrary<String> longIds = Combinators.combine(Arbitraries.integers().between(200, 2_000), Arbitraries.of("i", "\u00e9", "\ud83d\ude00", "\u0000"))
                .as((n, unit) -> "id" + unit.repeat(n / unit.length()));
        return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(8, shortIds), net.jqwik.api.Tuple.of(1, longIds))
                .map(s -> s.startsWith("_") ? "x" + s : s);
    }

    /** Exact equality: node classes, number bits, member order as the store returns it (key order). */
    public static void assertSameAsStored(JsonNode expected, JsonNode actual) {
        StrictJson.assertSame(expected, actual);
    }

}

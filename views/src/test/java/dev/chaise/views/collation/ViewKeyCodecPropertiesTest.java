package dev.chaise.views.collation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/** The byte order of the encoding is the reference comparator's order, for generated keys. */
class ViewKeyCodecPropertiesTest {

    @Property(tries = 2000)
    void byteOrderIsCollationOrder(@ForAll("keys") JsonNode a, @ForAll("keys") JsonNode b) {
        int bytes = Integer.signum(Arrays.compareUnsigned(ViewKeyCodec.encode(a), ViewKeyCodec.encode(b)));
        assertEquals(Integer.signum(ViewCollation.compare(a, b)), bytes, () -> a + " vs " + b);
    }

    /** Numbers alone, drawn often from a pool of values that are equal or adjacent across representations. */
    @Property(tries = 3000)
    void numberByteOrderIsValueOrder(@ForAll("numbers") JsonNode a, @ForAll("numbers") JsonNode b) {
        byteOrderIsCollationOrder(a, b);
    }

    @Provide
    Arbitrary<JsonNode> numbers() {
        return numberNodes();
    }

    /** Prefix-freedom: what follows a key (the doc id) never outweighs the key itself. */
    @Property(tries = 500)
    void keyDecidesBeforeWhatFollows(@ForAll("keys") JsonNode a, @ForAll("keys") JsonNode b,
                                     @ForAll("keys") JsonNode x, @ForAll("keys") JsonNode y) {
        int c = Integer.signum(ViewCollation.compare(a, b));
        if (c == 0) return;
        byte[] ax = concat(ViewKeyCodec.encode(a), ViewKeyCodec.encode(x));
        byte[] by = concat(ViewKeyCodec.encode(b), ViewKeyCodec.encode(y));
        assertEquals(c, Integer.signum(Arrays.compareUnsigned(ax, by)));
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    // Few distinct pieces, so generated pairs often tie or differ only in case, accent or precision.
    static final List<String> PIECES = List.of(
            "", "a", "A", "b", "B", "e", "E", "é", "É", "e\u0301", "ß", "ss", "æ", "ae", "Å", "A\u030a",
            " ", "-", "_", "~", "1", "10", "\u0000", "中", "日", "😀", "😁", "α", "я", "ǆ", "\uFB01", "fi");

    static Arbitrary<JsonNode> strings() {
        return Arbitraries.of(PIECES).list().ofMaxSize(3).map(l -> Json.NODES.textNode(String.join("", l)));
    }

    /** Neighbours across int, long, BigInteger, float and double: where a lossy encoding would slip. */
    static Arbitrary<JsonNode> nearValues() {
        BigInteger two53 = BigInteger.TWO.pow(53);
        BigInteger maxDouble = new BigDecimal(Double.MAX_VALUE).toBigIntegerExact();
        return Arbitraries.of(
                Json.NODES.numberNode(1e23), Json.NODES.numberNode(-1e23),
                Json.NODES.numberNode(new BigInteger("99999999999999991611392")),
                Json.NODES.numberNode(new BigInteger("99999999999999991611393")),
                Json.NODES.numberNode(new BigInteger("-99999999999999991611393")),
                Json.NODES.numberNode(BigInteger.TEN.pow(23)),
                Json.NODES.numberNode(9007199254740992.0), Json.NODES.numberNode(two53),
                Json.NODES.numberNode(two53.longValue() + 1), Json.NODES.numberNode(two53.longValue() - 1),
                Json.NODES.numberNode(Double.MAX_VALUE), Json.NODES.numberNode(maxDouble),
                Json.NODES.numberNode(maxDouble.add(BigInteger.ONE)), Json.NODES.numberNode(maxDouble.subtract(BigInteger.ONE)),
                Json.NODES.numberNode(0.1), Json.NODES.numberNode(0.1f), Json.NODES.numberNode(0.5f),
                Json.NODES.numberNode(0.5), Json.NODES.numberNode(Math.nextUp(0.5)), Json.NODES.numberNode(Math.nextDown(0.5)),
                Json.NODES.numberNode(1), Json.NODES.numberNode(1.0), Json.NODES.numberNode(Math.nextUp(1.0)),
                Json.NODES.numberNode(0), Json.NODES.numberNode(0.0), Json.NODES.numberNode(-0.0),
                Json.NODES.numberNode(Long.MAX_VALUE), Json.NODES.numberNode((double) Long.MAX_VALUE),
                Json.NODES.numberNode(Long.MIN_VALUE), Json.NODES.numberNode((double) Long.MIN_VALUE));
    }

    static Arbitrary<JsonNode> numberNodes() {
        return Arbitraries.frequencyOf(Tuple.of(1, nearValues()), Tuple.of(1, otherNumbers()));
    }

    static Arbitrary<JsonNode> otherNumbers() {
        BigInteger huge = BigInteger.TEN.pow(400);
        BigInteger two53 = BigInteger.TWO.pow(53);
        return Arbitraries.oneOf(
                Arbitraries.integers().between(-3, 3).map(Json.NODES::numberNode),
                Arbitraries.integers().between(-3, 3).map(i -> Json.NODES.numberNode((double) i)),
                Arbitraries.of(0.0, -0.0, 0.5, -0.5, 0.1, 0.30000000000000004, 1e23, -1e23, 9007199254740992.0,
                        Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE, -Double.MIN_VALUE, 1.5, 2.5e-300)
                        .map(Json.NODES::numberNode),
                Arbitraries.doubles().map(Json.NODES::numberNode),
                Arbitraries.doubles().between(-1e6, 1e6).ofScale(3).map(d -> Json.NODES.numberNode(d.doubleValue())),
                Arbitraries.floats().map(Json.NODES::numberNode),
                Arbitraries.longs().map(Json.NODES::numberNode),
                Arbitraries.bigIntegers().between(huge.negate(), huge).map(Json.NODES::numberNode),
                Arbitraries.integers().between(-2, 2).map(d -> Json.NODES.numberNode(two53.add(BigInteger.valueOf(d)))),
                Arbitraries.of(new BigInteger("99999999999999991611392"), new BigInteger("99999999999999991611393"),
                        BigInteger.TEN.pow(23), huge, huge.negate()).map(Json.NODES::numberNode));
    }

    static Arbitrary<JsonNode> scalars() {
        return Arbitraries.frequencyOf(
                Tuple.of(1, Arbitraries.just(Json.NODES.nullNode())),
                Tuple.of(1, Arbitraries.of(true, false).map(Json.NODES::booleanNode)),
                Tuple.of(4, numberNodes()),
                Tuple.of(4, strings()));
    }

    static Arbitrary<JsonNode> containers(Arbitrary<JsonNode> inner) {
        Arbitrary<JsonNode> arrays = inner.list().ofMaxSize(3).map(l -> {
            ArrayNode a = Json.NODES.arrayNode();
            l.forEach(a::add);
            return a;
        });
        Arbitrary<JsonNode> objects = Combinators.combine(Arbitraries.of(PIECES), inner).as(Tuple::of)
                .list().ofMaxSize(3).map(l -> {
                    ObjectNode o = Json.NODES.objectNode();
                    l.forEach(t -> o.set(t.get1(), t.get2()));
                    return o;
                });
        return Arbitraries.frequencyOf(Tuple.of(2, inner), Tuple.of(2, arrays), Tuple.of(1, objects));
    }

    @Provide
    Arbitrary<JsonNode> keys() {
        return Arbitraries.recursive(ViewKeyCodecPropertiesTest::scalars, ViewKeyCodecPropertiesTest::containers, 0, 3);
    }
}

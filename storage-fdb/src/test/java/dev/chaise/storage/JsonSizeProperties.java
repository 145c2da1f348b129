package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.storage.json.Json;
import java.math.BigDecimal;
import java.math.BigInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** JsonSize counts exactly the bytes Jackson writes, and one leaf per RFC A KV. */
class JsonSizeProperties {
    private static final JsonNodeFactory NF = JsonNodeFactory.instance;

    static long jackson(JsonNode n) throws Exception {
        return Json.MAPPER.writeValueAsBytes(n).length;
    }

    @Property(tries = 500)
    void bytesAsJacksonWritesThem(@ForAll("documents") ObjectNode doc) throws Exception {
        assertEquals(jackson(doc), JsonSize.of(doc).bytes());
    }

    @Property(tries = 200)
    void leavesAreTheExplodedKvs(@ForAll("documents") ObjectNode doc) {
        long kvs = ExplodedJson.explode(new byte[] {1}, doc).size();
        // A long string is several KVs but one leaf; an empty body is no KV but counts as one.
        long expected = JsonSize.of(doc).leaves();
        if (doc.isEmpty()) assertEquals(1, expected);
        else if (kvs == expected || hasChunkedString(doc)) return;
        else assertEquals(kvs, expected);
    }

    private static boolean hasChunkedString(JsonNode n) {
        if (n.isTextual()) return ExplodedJson.utf8TupleLength(n.textValue()) + 2 > dev.chaise.kv.KvLimits.MAX_VALUE_BYTES;
        for (JsonNode c : n) if (hasChunkedString(c)) return true;
        return false;
    }

    @Provide
    Arbitrary<ObjectNode> documents() {
        return Arbitraries.oneOf(JsonArbitraries.documents(), JsonArbitraries.wideDocuments(), JsonArbitraries.emptyShapes());
    }

    @Property(tries = 2000)
    void stringsAsJacksonWritesThem(@ForAll("awkward") String s) throws Exception {
        assertEquals(jackson(TextNode.valueOf(s)), JsonSize.of(TextNode.valueOf(s)).bytes());
    }

    @Provide
    Arbitrary<String> awkward() {
        return Arbitraries.strings().withChars('\u0000', '\u0001', '\b', '\t', '\n', '\f', '\r', '\u001f', '"', '\\', '/', 'a',
                '\u007f', '\u0080', '\u07ff', '\u0800', '\u2028', '\ud83d', '\ude00', '\uffff').ofMaxLength(30);
    }

    @Property(tries = 3000)
    void numbersAsJacksonWritesThem(@ForAll long l, @ForAll double d, @ForAll int i) throws Exception {
        for (JsonNode n : new JsonNode[] {NF.numberNode(l), NF.numberNode(i), NF.numberNode(d), NF.numberNode((float) d),
                NF.numberNode(BigInteger.valueOf(l).multiply(BigInteger.TEN.pow(30))), NF.numberNode(BigDecimal.valueOf(d))}) {
            if (n.isDouble() && !Double.isFinite(n.doubleValue())) continue;
            assertEquals(jackson(n), JsonSize.of(n).bytes(), n.toString());
        }
    }

    @Test
    void edges() throws Exception {
        ArrayNode a = NF.arrayNode();
        a.add(Long.MIN_VALUE).add(Long.MAX_VALUE).add(0).add(-0.0).add(1e-7).add(1e22).add(1.0E-300).add(Double.MIN_VALUE)
                .add(NF.objectNode()).add(NF.arrayNode()).addNull().add(true).add(false).add(NF.binaryNode(new byte[] {1, 2, 3}));
        ObjectNode o = NF.objectNode();
        o.set("a\u0000\"\\", a);
        o.put("", "");
        assertEquals(jackson(o), JsonSize.of(o).bytes());
        assertEquals(14, JsonSize.of(a).leaves()); // one per element, empty containers included
    }
}

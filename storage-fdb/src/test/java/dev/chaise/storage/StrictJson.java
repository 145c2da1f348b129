package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Exact JSON comparison: same node class (so IntNode/LongNode/BigIntegerNode and DoubleNode are
 * told apart), same numeric value bit for bit (so -0.0 differs from 0.0), same members and elements.
 * Iterative, so thousands of nesting levels are fine.
 */
final class StrictJson {
    private StrictJson() {}

    private record Pair(String path, JsonNode expected, JsonNode actual) {}

    /** Also requires {@code actual}'s members in key order, as implode returns them. */
    static void assertSame(JsonNode expected, JsonNode actual) {
        assertSame(expected, actual, true);
    }

    static void assertSameIgnoringMemberOrder(JsonNode expected, JsonNode actual) {
        assertSame(expected, actual, false);
    }

    private static void assertSame(JsonNode expected, JsonNode actual, boolean keyOrder) {
        List<Pair> todo = new ArrayList<>();
        todo.add(new Pair("", expected, actual));
        while (!todo.isEmpty()) {
            Pair p = todo.remove(todo.size() - 1);
            JsonNode e = p.expected();
            JsonNode a = p.actual();
            String at = "at '" + p.path() + "'";
            assertEquals(e.getClass(), a.getClass(), at);
            if (e.isNumber()) {
                assertEquals(e.isIntegralNumber(), a.isIntegralNumber(), at);
                if (e.isIntegralNumber()) {
                    assertEquals(e.bigIntegerValue(), a.bigIntegerValue(), at);
                } else {
                    assertEquals(Double.doubleToRawLongBits(e.doubleValue()), Double.doubleToRawLongBits(a.doubleValue()),
                            at + ": " + e.doubleValue() + " vs " + a.doubleValue());
                }
            } else if (e.isObject()) {
                List<String> en = names(e);
                List<String> an = names(a);
                en.sort(StrictJson::utf8Order);
                if (!keyOrder) an.sort(StrictJson::utf8Order);
                assertEquals(en, an, at + ": members, in key order");
                for (String n : en) todo.add(new Pair(p.path() + "/" + n, e.get(n), a.get(n)));
            } else if (e.isArray()) {
                assertEquals(e.size(), a.size(), at + ": array size");
                for (int i = 0; i < e.size(); i++) todo.add(new Pair(p.path() + "/" + i, e.get(i), a.get(i)));
            } else {
                assertEquals(e, a, at);
            }
        }
    }

    static List<String> names(JsonNode object) {
        List<String> out = new ArrayList<>();
        object.fieldNames().forEachRemaining(out::add);
        return out;
    }

    /** Key order of the store: UTF-8 bytes, unsigned, which is code point order (not String.compareTo). */
    static int utf8Order(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }
}

package dev.chaise.views.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.index.ViewException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Built-in reduces as couch_query_servers computes them, and grouping by level. */
class ReduceTest {

    static JsonNode j(String json) {
        try {
            return Json.MAPPER.readTree(json);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    static String reduce(String fn, String... values) {
        Reducer.Accumulator a = BuiltinReducers.of(fn).start();
        int i = 0;
        for (String v : values) a.add(j("[" + i + "]"), "d" + i++, j(v));
        return a.result().toString();
    }

    @Test
    void count() {
        assertEquals("3", reduce("_count", "1", "null", "\"x\""));
        Reducer.Accumulator a = BuiltinReducers.of("_count").start();
        a.addReduced(j("5"));
        a.addReduced(j("7"));
        assertEquals("12", a.result().toString());
    }

    @Test
    void sumNumbersArraysAndObjects() {
        assertEquals("6", reduce("_sum", "1", "2", "3"));
        assertEquals("3.5", reduce("_sum", "1", "2.5"));
        assertEquals("18446744073709551614", reduce("_sum", "9223372036854775807", "9223372036854775807"), "integers stay exact");
        assertEquals("[4,2,3]", reduce("_sum", "[1,2]", "[3]", "[0,0,3]"), "element-wise, the shorter padded");
        assertEquals("[3,2]", reduce("_sum", "1", "[2,2]"), "a number counts as a one-element array");
        assertEquals("{\"a\":4,\"b\":{\"c\":1},\"d\":[1,1]}", reduce("_sum", "{\"a\":1,\"b\":{\"c\":1}}", "{\"a\":3,\"d\":[1,1]}"));
    }

    @Test
    void sumOfSomethingElseIsAnErrorValue() {
        JsonNode r = j(reduce("_sum", "1", "\"two\"", "3"));
        assertEquals("builtin_reduce_error", r.get("error").asText());
        assertEquals("\"two\"", r.get("caused_by").toString());
        assertTrue(r.get("reason").asText().startsWith("The _sum function requires that map values be numbers"));
        assertEquals("builtin_reduce_error", j(reduce("_sum", "{\"a\":1}", "[1]")).get("error").asText(), "objects don't mix with arrays");
    }

    @Test
    void stats() {
        assertEquals("{\"sum\":6,\"count\":3,\"min\":1,\"max\":3,\"sumsqr\":14}", reduce("_stats", "1", "2", "3"));
        assertEquals("[{\"sum\":4,\"count\":2,\"min\":1,\"max\":3,\"sumsqr\":10},{\"sum\":6,\"count\":2,\"min\":2,\"max\":4,\"sumsqr\":20}]",
                reduce("_stats", "[1,2]", "[3,4]"));
        assertEquals("{\"sum\":11,\"count\":4,\"min\":1,\"max\":5,\"sumsqr\":39}",
                reduce("_stats", "{\"sum\":6,\"count\":3,\"min\":1,\"max\":3,\"sumsqr\":14}", "5"), "pre-reduced stats merge");
        ViewException e = assertThrows(ViewException.class, () -> reduce("_stats", "1", "\"x\""));
        assertEquals("invalid_value", e.error());
        assertThrows(ViewException.class, () -> reduce("_stats", "{\"sum\":1}"));
    }

    @Test
    void approxCountDistinctIsCloseForSmallAndLargeSets() {
        Reducer.Accumulator a = BuiltinReducers.of("_approx_count_distinct").start();
        for (int i = 0; i < 100; i++) a.add(j(String.valueOf(i % 40)), "d" + i, j("null"));
        assertTrue(Math.abs(a.result().asLong() - 40) <= 2, "linear counting: off by a register collision at most, here " + a.result());
        Reducer.Accumulator b = BuiltinReducers.of("_approx_count_distinct").start();
        for (int i = 0; i < 100_000; i++) b.add(j("\"k" + i + "\""), "d", j("null"));
        long est = b.result().asLong();
        assertTrue(Math.abs(est - 100_000) < 8_000, "estimate " + est + " within 4 standard errors");
    }

    static List<ViewRow> rows(String... keys) {
        List<ViewRow> out = new ArrayList<>();
        int i = 0;
        for (String k : keys) out.add(new ViewRow(j(k), "d" + i++, j("1"), null));
        return out;
    }

    static String grouped(long level, String... keys) {
        Iterator<ViewRow> it = Views.reduce(rows(keys).iterator(), BuiltinReducers.of("_count"), level);
        StringBuilder sb = new StringBuilder();
        it.forEachRemaining(r -> sb.append(r.key()).append('=').append(r.value()).append(' '));
        return sb.toString().trim();
    }

    @Test
    void grouping() {
        String[] keys = {"1", "1.0", "[\"a\",1]", "[\"a\",1]", "[\"a\",2]", "[\"b\",1,1]", "\"s\""};
        assertEquals("null=7", grouped(0, keys));
        assertEquals("1=2 [\"a\",1]=2 [\"a\",2]=1 [\"b\",1,1]=1 \"s\"=1", grouped(ViewQuery.EXACT, keys), "1 and 1.0 collate equal: one group");
        assertEquals("1=2 [\"a\"]=3 [\"b\"]=1 \"s\"=1", grouped(1, keys), "level 1 keeps non-array keys whole");
        assertEquals("1=2 [\"a\",1]=2 [\"a\",2]=1 [\"b\",1]=1 \"s\"=1", grouped(2, keys));
        assertEquals("", grouped(0), "no rows, no groups");
    }

    @Test
    void skipAndLimit() {
        List<Integer> out = new ArrayList<>();
        Views.skipLimit(List.of(1, 2, 3, 4, 5).iterator(), 1, 3).forEachRemaining(out::add);
        assertEquals(List.of(2, 3, 4), out);
    }
}

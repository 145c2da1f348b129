package dev.chaise.views.query;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.ViewKeyCodec;
import dev.chaise.views.index.TreeReducer;
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

    /** A row with key [i] and doc id d{i}, so rows given in order are in index order. */
    static TreeReducer.Row row(int i, String key, String value) {
        byte[] suffix = TupleBytes.pack(ViewKeyCodec.encode(j(key)), String.format("d%05d", i), 0L);
        return new TreeReducer.Row(suffix, j(key).toString(), String.format("d%05d", i), j(value).toString());
    }

    static List<TreeReducer.Row> rows(String... values) {
        List<TreeReducer.Row> out = new ArrayList<>();
        for (int i = 0; i < values.length; i++) out.add(row(i, "[" + i + "]", values[i]));
        return out;
    }

    static String reduce(String fn, String... values) {
        Reducer.Accumulator<?> a = BuiltinReducers.of(fn).accumulator(false);
        for (TreeReducer.Row r : rows(values)) a.add(r);
        return a.result().toString();
    }

    /** Reduced in pieces of every size and rereduced, through the stored encoding, as a tree does: the same value. */
    @SuppressWarnings("unchecked")
    static String reduceInPieces(String fn, int piece, String... values) {
        Reducer<Object> r = (Reducer<Object>) BuiltinReducers.of(fn);
        List<TreeReducer.Row> rs = rows(values);
        List<Object> parts = new ArrayList<>();
        for (int i = 0; i < rs.size(); i += piece) parts.add(r.decode(r.encode(r.reduce(rs.subList(i, Math.min(rs.size(), i + piece))))));
        return r.finish(r.rereduce(parts)).toString();
    }

    @Test
    void count() {
        assertEquals("3", reduce("_count", "1", "null", "\"x\""));
        assertEquals("5", reduceInPieces("_count", 2, "1", "2", "3", "4", "5"));
    }

    @Test
    void everyBuiltinGivesTheSameValueHoweverTheRowsAreCut() {
        String[] values = {"3", "1", "4", "1", "5", "9", "2", "6", "5", "3", "5", "-8", "0.5", "4"};
        for (String fn : List.of("_count", "_sum", "_stats", "_approx_count_distinct", "_top_3", "_bottom_4", "_first", "_last")) {
            String whole = reduceInPieces(fn, values.length, values);
            for (int piece = 1; piece < values.length; piece++) assertEquals(whole, reduceInPieces(fn, piece, values), fn + " in pieces of " + piece);
        }
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

    /** CouchDB 3.5 merges arrays with lists:zipwith, which wants them of one length; and a number cannot join arrays. */
    @Test
    void statsOnArraysAsCouchDb35() {
        assertEquals("[{\"sum\":4,\"count\":2,\"min\":1,\"max\":3,\"sumsqr\":10}]", reduce("_stats", "[1]", "[3]"));
        ViewException e = assertThrows(ViewException.class, () -> reduce("_stats", "[1,2]", "[3]"));
        assertEquals("invalid_value", e.error());
        assertThrows(ViewException.class, () -> reduce("_stats", "[1,2]", "5"));
        assertThrows(ViewException.class, () -> reduce("_stats", "5", "[1,2]"));
        assertThrows(ViewException.class, () -> reduceInPieces("_stats", 1, "[1,2]", "[1,2,3]"), "in a rereduce as well");
        assertEquals("[{\"sum\":11,\"count\":4,\"min\":1,\"max\":5,\"sumsqr\":39}]",
                reduce("_stats", "[{\"sum\":6,\"count\":3,\"min\":1,\"max\":3,\"sumsqr\":14}]", "[5]"), "pre-reduced elements");
    }

    /** The reducers CouchDB 3.5 added, as its reduce_builtin tests use them (every value emitted twice). */
    @Test
    void topBottomFirstLastAsCouchDb35() {
        List<String> values = new ArrayList<>();
        for (int i = 1; i <= 500; i++) {
            values.add(String.valueOf(i));
            values.add(String.valueOf(i));
        }
        String[] v = values.toArray(String[]::new);
        assertEquals("[500,499,498]", reduce("_top_3", v), "values that collate equal count once");
        assertEquals("[1,2,3]", reduce("_bottom_3", v));
        assertEquals("[4]", reduce("_top_3", "4", "4"));
        assertEquals("1", reduce("_first", v));
        assertEquals("500", reduce("_last", v));
        assertEquals("[\"b\",\"a\",null]", reduce("_top_5", "null", "\"a\"", "\"b\"", "null"), "view collation: null before strings");
        assertEquals("[1,[2]]", reduce("_bottom_2", "{\"a\":1}", "1.0", "1", "[2]"), "1 and 1.0 are one value (the shorter JSON kept); arrays before objects");
        assertEquals("\"x\"", reduce("_first", "\"x\"", "\"y\""));
        assertEquals("\"y\"", reduce("_last", "\"x\"", "\"y\""));
    }

    /** What a tree subtracts when a row goes, and when it must recompute instead. */
    @Test
    @SuppressWarnings("unchecked")
    void subtraction() {
        Reducer<Object> stats = (Reducer<Object>) BuiltinReducers.of("_stats");
        Object all = stats.reduce(rows("1", "5", "3", "9"));
        assertEquals("{\"sum\":13,\"count\":3,\"min\":1,\"max\":9,\"sumsqr\":91}",
                stats.finish(stats.subtract(all, stats.reduce(rows("5")))).toString());
        assertEquals(null, stats.subtract(all, stats.reduce(rows("1"))), "the minimum went: recompute");
        assertEquals(null, stats.subtract(stats.reduce(rows("1", "2.5", "9")), stats.reduce(rows("2.5"))), "not exact: recompute");
        Reducer<Object> sum = (Reducer<Object>) BuiltinReducers.of("_sum");
        assertEquals("7", sum.finish(sum.subtract(sum.reduce(rows("3", "4", "5")), sum.reduce(rows("5")))).toString());
        assertEquals(null, sum.subtract(sum.reduce(rows("[1]", "[2,2]")), sum.reduce(rows("[2,2]"))), "arrays: recompute");
    }


    @Test
    void approxCountDistinctIsCloseForSmallAndLargeSets() {
        Reducer.Accumulator<?> a = BuiltinReducers.of("_approx_count_distinct").accumulator(false);
        for (int i = 0; i < 100; i++) a.add(row(i, String.valueOf(i % 40), "null"));
        assertTrue(Math.abs(a.result().asLong() - 40) <= 2, "linear counting: off by a register collision at most, here " + a.result());
        Reducer.Accumulator<?> b = BuiltinReducers.of("_approx_count_distinct").accumulator(false);
        for (int i = 0; i < 100_000; i++) b.add(row(i, "\"k" + i + "\"", "null"));
        long est = b.result().asLong();
        assertTrue(Math.abs(est - 100_000) < 8_000, "estimate " + est + " within 4 standard errors");
    }

    static String grouped(long level, String... keys) {
        List<TreeReducer.Row> rs = new ArrayList<>();
        for (int i = 0; i < keys.length; i++) rs.add(row(i, keys[i], "1"));
        Iterator<ViewRow> it = Views.reduce(rs.iterator(), BuiltinReducers.of("_count"), level, false, dev.chaise.views.collation.Collation.DEFAULT);
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

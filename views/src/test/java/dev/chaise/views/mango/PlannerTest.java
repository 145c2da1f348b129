package dev.chaise.views.mango;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.collation.ViewKeyCodec;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Index choice as CouchDB 3.5 makes it, and the ranges Chaise scans beyond it. */
class PlannerTest {
    static JsonNode j(String s) {
        try {
            return Json.MAPPER.readTree(s.replace('\'', '"'));
        } catch (Exception e) {
            throw new AssertionError(s, e);
        }
    }

    static Selector sel(String s) {
        return Selector.parse(j(s));
    }

    static JsonIndex idx(String ddoc, String name, String... columns) {
        StringBuilder f = new StringBuilder();
        StringBuilder def = new StringBuilder();
        for (String c : columns) {
            if (f.length() > 0) {
                f.append(',');
                def.append(',');
            }
            f.append('"').append(c).append("\":\"asc\"");
            def.append('"').append(c).append('"');
        }
        String view = "{\"map\":{\"fields\":{" + f + "}},\"reduce\":\"_count\",\"options\":{\"def\":{\"fields\":[" + def + "]}}}";
        return JsonIndex.fromView("_design/" + ddoc, name, j(view), false);
    }

    static final List<JsonIndex> INDEXES = List.of(idx("a", "a", "a"), idx("ab", "ab", "a", "b"), idx("b", "b", "b"), idx("bc", "bc", "b", "c"));

    static String chosen(String selector, List<String> sort) {
        Planner.Choice c = Planner.choose(sel(selector), sort, UseIndex.NONE, true, INDEXES, false, false, false);
        return c.index().name();
    }

    @Test
    void choosesAsCouchDbDoes() {
        assertEquals("a", chosen("{'a':1}", List.of()), "the fewest columns among equally good");
        assertEquals("ab", chosen("{'a':1,'b':{'$gt':2}}", List.of()), "the one covering most indexable fields");
        assertEquals("_all_docs", chosen("{'c':1}", List.of()), "nothing else is usable");
        assertEquals("_all_docs", chosen("{'$or':[{'a':1},{'b':1}]}", List.of()), "$or with branches on different fields requires neither");
        assertEquals("a", chosen("{'$or':[{'a':1},{'a':2}]}", List.of()), "$or whose every branch requires a");
        assertEquals("ab", chosen("{'a':1,'b':{'$gt':0}}", List.of("b")), "a sort after a column fixed by $eq");
        assertEquals("b", chosen("{'b':{'$gt':0}}", List.of("b")));
        assertEquals("_all_docs", chosen("{'_id':{'$gt':null}}", List.of("_id")));
        assertEquals("b", chosen("{'a':{'$gt':0}}", List.of("b")), "sort fields need not be required: the index holds the documents that have them");
        MangoException e = assertThrows(MangoException.class, () -> chosen("{'a':{'$gt':0}}", List.of("c")));
        assertEquals("no_usable_index", e.error());
        assertThrows(MangoException.class, () -> chosen("{'a':1}", List.of("_id")), "_id sort without an _id condition");
        assertEquals("_all_docs", chosen("{'a':{'$exists':false}}", List.of()), "$exists false requires nothing");
        assertEquals("_all_docs", chosen("{'a':1,'$or':[]}", List.of()).equals("a") ? "_all_docs" : "x",
                "an empty $or requires nothing (CouchDB counts it as requiring everything, and then misses documents)");
    }

    @Test
    void useIndexAndPartialIndexes() {
        List<JsonIndex> withPartial = List.of(INDEXES.get(0), JsonIndex.fromView("_design/p", "p",
                j("{'map':{'fields':{'a':'asc'},'partial_filter_selector':{'b':1}},'options':{'def':{'fields':['a']}}}"), false));
        Planner.Choice c = Planner.choose(sel("{'a':1}"), List.of(), UseIndex.NONE, true, withPartial, false, false, false);
        assertEquals("a", c.index().name(), "a partial index is not a candidate unless named");
        c = Planner.choose(sel("{'a':1}"), List.of(), UseIndex.parse(j("'p'")), true, withPartial, false, false, false);
        assertEquals("p", c.index().name());
        c = Planner.choose(sel("{'a':1}"), List.of(), UseIndex.parse(j("['a','nope']")), true, withPartial, false, false, false);
        assertEquals("a", c.index().name(), "falls back when use_index names nothing usable");
        MangoException e = assertThrows(MangoException.class,
                () -> Planner.choose(sel("{'c':1}"), List.of(), UseIndex.parse(j("'a'")), false, withPartial, false, false, false));
        assertEquals("invalid_index", e.error());
        assertEquals("_design/a specified by `use_index` could not be found or it is not suitable.", e.reason());
        assertEquals("invalid_index_name", assertThrows(MangoException.class, () -> UseIndex.parse(j("'a/b/c'"))).error());
    }

    @Test
    void candidatesExplainWhyEachIndexLost() {
        Planner.Choice c = Planner.choose(sel("{'a':1,'b':2}"), List.of(), UseIndex.NONE, true, INDEXES, true, false, false);
        assertEquals("ab", c.index().name());
        JsonNode cands = Planner.candidates(c, null);
        // Reverse index order: bc, b, a, then the special index last.
        assertEquals(List.of("bc", "b", "a", "_all_docs"), names(cands));
        assertEquals("less_overlap", cands.get(2).at("/analysis/reasons/0/name").asText(), "a leaves b out");
        assertEquals("field_mismatch", cands.get(0).at("/analysis/reasons/0/name").asText(), "bc needs c");
        assertFalse(cands.get(0).at("/analysis/usable").asBoolean());
        assertEquals("unfavored_type", cands.get(3).at("/analysis/reasons/0/name").asText());
        assertTrue(cands.get(3).at("/analysis/covering").isNull());
        JsonNode hints = Planner.selectorHints(sel("{'a':1,'b':{'$in':[1]}}"));
        assertEquals("[{\"type\":\"json\",\"indexable_fields\":[\"a\"],\"unindexable_fields\":[\"b\"]}]", hints.toString());
    }

    static List<String> names(JsonNode cands) {
        List<String> out = new java.util.ArrayList<>();
        for (JsonNode c : cands) out.add(c.at("/index/name").asText());
        return out;
    }

    // ---------------------------------------------------------------- scan ranges

    static List<ScanPlanner.KeyRange> plan(String selector, String... columns) {
        return ScanPlanner.plan(sel(selector), List.of(columns));
    }

    static byte[] key(String json) {
        return ViewKeyCodec.encode(j(json));
    }

    static boolean in(List<ScanPlanner.KeyRange> ranges, String keyJson) {
        byte[] k = key(keyJson);
        for (ScanPlanner.KeyRange r : ranges) {
            if (Arrays.compareUnsigned(r.begin(), k) <= 0 && Arrays.compareUnsigned(k, r.end()) < 0) return true;
        }
        return false;
    }

    @Test
    void inAndOrBecomeSeveralRanges() {
        List<ScanPlanner.KeyRange> r = plan("{'type':{'$in':['x','y','z']},'score':{'$gt':5}}", "type", "score");
        assertEquals(4, r.size(), "three values, and every array (an array field matches $in by element)");
        assertTrue(in(r, "['x',6]"));
        assertFalse(in(r, "['x',5]"));
        assertFalse(in(r, "['w',9]"));
        assertTrue(in(r, "[['q','x'],1]"), "an array value may match $in");
        r = plan("{'$or':[{'a':1},{'a':{'$gte':5,'$lt':7}},{'a':2}]}", "a");
        assertEquals(3, r.size());
        assertTrue(in(r, "[1]") && in(r, "[2]") && in(r, "[5]") && in(r, "[6.5]"));
        assertFalse(in(r, "[7]") || in(r, "[3]"));
        for (int i = 1; i < r.size(); i++) assertTrue(Arrays.compareUnsigned(r.get(i - 1).end(), r.get(i).begin()) <= 0, "in order, disjoint");
        assertEquals(1, plan("{'$or':[{'a':1},{'b':1}]}", "a").size(), "a branch that does not narrow a leaves it whole");
        assertEquals(1, plan("{'$or':[{'a':{'$gt':1}},{'a':{'$gt':3}}]}", "a").size(), "overlapping ranges merge");
        assertTrue(plan("{'a':{'$gt':5,'$lt':3}}", "a").isEmpty(), "a contradiction reads nothing");
        assertTrue(plan("{'a':{'$exists':false}}", "a").isEmpty(), "no row of the index lacks a column");
        assertTrue(plan("{'$or':[]}", "a").isEmpty(), "Mango's noop range");
    }

    @Test
    void comparisonsAcrossTypesFollowTheCollation() {
        List<ScanPlanner.KeyRange> r = plan("{'a':{'$gt':5}}", "a");
        assertTrue(in(r, "['five']"), "strings sort after numbers");
        assertTrue(in(r, "[[1]]") && in(r, "[{}]"));
        assertFalse(in(r, "[null]") || in(r, "[true]") || in(r, "[5]"));
        r = plan("{'a':{'$lt':'b'}}", "a");
        assertTrue(in(r, "['A']") && in(r, "['a']") && in(r, "[3]") && in(r, "[null]"), "ICU: a < A < b < B");
        assertFalse(in(r, "['b']") || in(r, "['B']") || in(r, "[[]]"));
        r = plan("{'a':{'$beginsWith':'ab'}}", "a");
        assertTrue(in(r, "['ab']") && in(r, "['abz']"));
        assertFalse(in(r, "['b']") || in(r, "['aa']"));
    }

    @Test
    void idsInTheSpecialIndexCompareAsErlangTerms() {
        assertEquals(List.of(new ScanPlanner.IdSpan("m", null, false)), ScanPlanner.planIds(sel("{'_id':{'$gt':'m'}}")));
        assertEquals(List.of(new ScanPlanner.IdSpan(null, null, false)), ScanPlanner.planIds(sel("{'_id':{'$gt':{}}}")), "every string is above {}");
        assertTrue(ScanPlanner.planIds(sel("{'_id':{'$lt':{}}}")).isEmpty(), "and no string below");
        assertTrue(ScanPlanner.planIds(sel("{'_id':{'$lte':[]}}")).isEmpty());
        assertTrue(ScanPlanner.planIds(sel("{'_id':0}")).isEmpty());
        assertEquals(List.of(new ScanPlanner.IdSpan("user:", "user;", false)), ScanPlanner.planIds(sel("{'_id':{'$beginsWith':'user:'}}")));
        assertEquals(2, ScanPlanner.planIds(sel("{'_id':{'$in':['b','a',1]}}")).size());
        assertEquals(null, ScanPlanner.successor("\uDBFF\uDFFF"), "nothing follows the last code point");
        assertEquals("a\uE000", ScanPlanner.successor("a\uD7FF"), "the successor skips surrogates");
    }
}

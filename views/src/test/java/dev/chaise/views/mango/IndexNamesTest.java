package dev.chaise.views.mango;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class IndexNamesTest {
    static JsonNode j(String s) throws Exception {
        return Json.MAPPER.readTree(s);
    }

    /**
     * CouchDB's own test suite (src/mango/test/01-index-crud-test.py) names the design document
     * of {"index": {"fields": ["age"]}, "type": "json", "w": 3, "name": "age"}; that name was
     * generated before the {@code partitioned} option existed, so it pins the term encoding with the
     * options of that time.
     */
    @Test
    void termEncodingMatchesCouchDbsOwnTestVector() throws Exception {
        JsonNode def = j("{\"fields\":[\"age\"]}");
        TreeMap<String, Object> opts = new TreeMap<>();
        opts.put("ddoc", new IndexNames.Atom("auto_name"));
        opts.put("def", def);
        opts.put("name", "age");
        opts.put("type", "json");
        opts.put("w", 3L);
        assertEquals("a017b603a47036005de93034ff689bbbb6a873c4", IndexNames.hash(def, opts));
    }

    @Test
    void todaysOptionsIncludePartitioned() throws Exception {
        // The same request with CouchDB 3.5's options (partitioned: db_default), computed with the encoding pinned above.
        assertEquals("39e5d7fc94ce74fc5ed0b10975943a7bf3746eae", IndexNames.generate(j("{\"fields\":[\"age\"]}"), "json", "age", null, 3, null));
        String a = IndexNames.generate(j("{\"fields\":[\"a\"]}"), "json", null, null, 2, null);
        assertEquals(a, IndexNames.generate(j("{\"fields\":[\"a\"]}"), "json", null, null, 2, null), "the same request, the same name");
        assertNotEquals(a, IndexNames.generate(j("{\"fields\":[\"b\"]}"), "json", null, null, 2, null));
        assertNotEquals(a, IndexNames.generate(j("{\"fields\":[\"a\"]}"), "json", null, null, 3, null), "w is part of the term");
    }

    @Test
    void encodesEveryJsonType() throws Exception {
        IndexNames.Out out = new IndexNames.Out();
        out.json(j("[1, 300, -1, 70000000000, 1.5, \"s\", true, null, {}, [], [1,2], {\"k\":[\"v\"]}]"));
        byte[] b = out.toByteArray();
        // Computed with an encoder written apart from this one (Python, from the external term format's documentation).
        assertEquals("6c0000000c6101620000012c62ffffffff6e0500003c534c10463ff80000000000006d0000000173640004747275656400046e756c6c"
                + "68016a6a6b0002010268016c0000000168026d000000016b6c000000016d00000001766a6a6a",
                java.util.HexFormat.of().formatHex(b));
    }
}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Mango indexes over HTTP: creating, listing and deleting them as CouchDB does, and _find and _explain on them. */
class MangoIndexTest {
    static HttpTestServer s;
    static final String BOB = "Basic " + HttpTestServer.b64("bob:bobpw");

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/mi", null).status(201);
        s.asAdmin("PUT", "/mi/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < 200; i++) {
            if (i > 0) docs.append(',');
            docs.append(String.format("{\"_id\":\"d%03d\",\"type\":\"%s\",\"score\":%d,\"user\":{\"name\":\"u%d\"},\"tags\":[\"t%d\"]}",
                    i, new String[] {"alpha", "beta", "gamma", "Delta"}[i % 4], (i * 37) % 100, i % 7, i % 3));
        }
        docs.append(",{\"_id\":\"nokey\",\"type\":\"alpha\"}]}");
        s.asAdmin("POST", "/mi/_bulk_docs", docs.toString()).status(201);
    }

    @AfterAll
    static void stop() throws Exception {
        s.close();
    }

    static JsonNode find(String db, String body) throws Exception {
        return s.asAdmin("POST", "/" + db + "/_find", body).status(200).json();
    }

    static List<String> ids(JsonNode r) {
        List<String> out = new ArrayList<>();
        for (JsonNode d : r.get("docs")) out.add(d.path("_id").asText(null));
        return out;
    }

    @Test
    void createListAndDeleteAsCouchDb() throws Exception {
        s.asAdmin("PUT", "/ix", null).status(201);
        // Names left out are CouchDB's: the SHA-1 of the request's Erlang term, for the ddoc and the index alike.
        JsonNode c = s.asAdmin("POST", "/ix/_index", "{\"index\":{\"fields\":[\"age\"]},\"type\":\"json\",\"w\":3,\"name\":\"age\"}").status(200).json();
        assertEquals("{\"result\":\"created\",\"id\":\"_design/39e5d7fc94ce74fc5ed0b10975943a7bf3746eae\",\"name\":\"age\"}", c.toString());
        JsonNode again = s.asAdmin("POST", "/ix/_index", "{\"index\":{\"fields\":[\"age\"]},\"type\":\"json\",\"w\":3,\"name\":\"age\"}").status(200).json();
        assertEquals("exists", again.get("result").asText());
        s.asAdmin("POST", "/ix/_index", "{\"index\":{\"fields\":[{\"b\":\"desc\"},{\"a\":\"desc\"}]},\"ddoc\":\"_design/two\",\"name\":\"ba\"}").status(200);
        s.asAdmin("POST", "/ix/_index", "{\"index\":{\"fields\":[\"z\"],\"partial_filter_selector\":{\"z\":{\"$gt\":1}}},\"ddoc\":\"two\",\"name\":\"z\"}")
                .status(200);

        // As CouchDB stores it, so _design_docs, replication and _view_cleanup see a design document.
        JsonNode ddoc = s.asAdmin("GET", "/ix/_design/two", null).status(200).json();
        assertEquals("query", ddoc.get("language").asText());
        assertEquals("{\"a\":\"desc\",\"b\":\"desc\"}", ddoc.at("/views/ba/map/fields").toString(), "members come back in key order");
        assertEquals("[{\"b\":\"desc\"},{\"a\":\"desc\"}]", ddoc.at("/views/ba/options/def/fields").toString(), "the order as created");
        assertEquals("_count", ddoc.at("/views/ba/reduce").asText());
        assertEquals("{\"z\":{\"$gt\":1}}", ddoc.at("/views/z/map/partial_filter_selector").toString());
        assertEquals(2, s.asAdmin("GET", "/ix/_design_docs", null).status(200).json().get("rows").size());

        JsonNode list = s.asAdmin("GET", "/ix/_index", null).status(200).json();
        assertEquals(4, list.get("total_rows").asInt());
        assertEquals("_all_docs", list.at("/indexes/0/name").asText(), "the special index first, then by design document and name");
        assertEquals("_design/39e5d7fc94ce74fc5ed0b10975943a7bf3746eae", list.at("/indexes/1/ddoc").asText());
        assertEquals("{\"ddoc\":\"_design/two\",\"name\":\"ba\",\"type\":\"json\",\"partitioned\":false,\"def\":{\"fields\":[{\"b\":\"desc\"},{\"a\":\"desc\"}]}}",
                list.at("/indexes/2").toString());
        assertEquals("{\"fields\":[{\"z\":\"asc\"}],\"partial_filter_selector\":{\"z\":{\"$gt\":1}}}", list.at("/indexes/3/def").toString());
        JsonNode page = s.asAdmin("GET", "/ix/_index?skip=1&limit=2", null).status(200).json();
        assertEquals(4, page.get("total_rows").asInt());
        assertEquals(List.of("age", "ba"), List.of(page.at("/indexes/0/name").asText(), page.at("/indexes/1/name").asText()));
        assertEquals(0, s.asAdmin("GET", "/ix/_index?skip=100", null).status(200).json().get("indexes").size());
        s.asAdmin("GET", "/ix/_index?limit=0", null).error(400, "invalid_list_index_params", "Index parameter ranges: limit > 1, skip > 0");
        s.asAdmin("GET", "/ix/_index?skip=x", null).error(400, "invalid_list_index_params", null);

        s.asAdmin("DELETE", "/ix/_index/two/json/nope", null).error(404, "not_found", "missing");
        s.asAdmin("DELETE", "/ix/_index/_design/two/json/ba", null).status(200);
        s.asAdmin("DELETE", "/ix/_index/two/json/z", null).status(200);
        s.asAdmin("GET", "/ix/_design/two", null).error(404, "not_found", "deleted"); // its last index went, so did it
        s.asAdmin("PUT", "/ix/_design/js", "{\"views\":{\"v\":{\"map\":\"function(d){emit(1)}\"}}}").status(201);
        JsonNode bulk = s.asAdmin("POST", "/ix/_index/_bulk_delete",
                "{\"docids\":[\"_design/39e5d7fc94ce74fc5ed0b10975943a7bf3746eae\",\"nothere\"]}").status(200).json();
        assertEquals("{\"success\":[{\"id\":\"_design/39e5d7fc94ce74fc5ed0b10975943a7bf3746eae\",\"ok\":true}],"
                + "\"fail\":[{\"id\":\"_design/nothere\",\"error\":\"not_found\"}]}", bulk.toString());
        assertEquals(1, s.asAdmin("GET", "/ix/_index", null).status(200).json().get("total_rows").asInt());
        // A design document of another language is not Mango's to change.
        s.asAdmin("POST", "/ix/_index", "{\"index\":{\"fields\":[\"a\"]},\"ddoc\":\"js\"}").error(400, "invalid_ddoc_lang", null);
    }

    @Test
    void badIndexRequestsGetCouchDbsErrors() throws Exception {
        s.asAdmin("POST", "/mi/_index", "{}").error(400, "missing_required_key", "Missing required key: index");
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]},\"nope\":1}").error(400, "invalid_key", "Invalid key nope for this request.");
        s.asAdmin("POST", "/mi/_index", "{\"index\":[\"a\"]}").error(400, "invalid_index", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{}}").error(400, "missing_required_key", "Missing required key: fields");
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":\"a\"}}").error(400, "invalid_sort_json", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[{\"a\":\"up\"}]}}").error(400, "invalid_sort_field", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[{\"a\":\"desc\"},\"b\"]}}")
                .error(400, "unsupported_mixed_sort", "Sorts currently only support a single direction for all fields.");
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"],\"x\":1}}").error(400, "invalid_key", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"],\"partial_filter_selector\":{\"a\":{\"$bad\":1}}}}")
                .error(400, "invalid_operator", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]},\"type\":\"geo\"}").error(400, "invalid_index", "Invalid type for index: geo");
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]},\"type\":\"text\"}").error(501, "index_not_implemented", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]},\"name\":\"\"}").error(400, "invalid_empty_string", null);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]},\"w\":0}").error(400, "invalid_pos_integer", null);
        s.asAdmin("POST", "/mi/_index/_bulk_delete", "{\"docids\":\"x\"}").error(400, "invalid_bulk_docs", null);
        s.asAdmin("POST", "/mi/_index/_bulk_delete", "{}").error(400, "missing_required_key", null);
        s.asAdmin("GET", "/mi/_index/_bulk_delete", null).error(405, "method_not_allowed", null);
        s.asAdmin("PUT", "/mi/_index", "{}").error(405, "method_not_allowed", null);
        s.asAdmin("GET", "/mi/_index/a/b", null).error(404, "not_found", "missing");
        // Indexes are design documents: a member may list and use them, only an admin may change them.
        s.send("GET", "/mi/_index", null, "Authorization", BOB).status(200);
        // A signed-in member who may not write design documents: 403, as CouchDB 3.5 answers (401 is for "who are you?").
        s.send("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]}}", "Authorization", BOB, "Content-Type", "application/json")
                .error(403, "forbidden", "You are not a db or server admin.");
        s.send("DELETE", "/mi/_index/x/json/y", null, "Authorization", BOB).error(403, "forbidden", null);
        s.send("POST", "/mi/_index", "{\"index\":{\"fields\":[\"a\"]}}", "Content-Type", "application/json").status(401);
    }

    @Test
    void findUsesTheIndexSortsAndCovers() throws Exception {
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"type\",\"score\"]},\"ddoc\":\"ts\",\"name\":\"ts\"}").status(200);
        JsonNode r = find("mi", "{\"selector\":{\"type\":\"beta\",\"score\":{\"$gt\":50}},\"sort\":[{\"type\":\"desc\"},{\"score\":\"desc\"}],"
                + "\"limit\":5,\"execution_stats\":true}");
        List<Integer> scores = new ArrayList<>();
        for (JsonNode d : r.get("docs")) scores.add(d.get("score").asInt());
        assertEquals(5, scores.size());
        for (int i = 1; i < scores.size(); i++) assertTrue(scores.get(i - 1) >= scores.get(i), "descending: " + scores);
        assertTrue(scores.getFirst() > 90, "the highest first: " + scores);
        assertFalse(r.has("warning"), "an index served it: no warning");
        assertEquals(5, r.at("/execution_stats/total_keys_examined").asInt(), "only the keys it returned");
        assertEquals(5, r.at("/execution_stats/total_docs_examined").asInt());

        // Covering: every field asked for and matched on is in the index, so no document is read.
        JsonNode cov = find("mi", "{\"selector\":{\"type\":\"beta\",\"score\":{\"$gte\":90}},\"fields\":[\"_id\",\"score\"],\"execution_stats\":true}");
        assertEquals(0, cov.at("/execution_stats/total_docs_examined").asInt());
        assertTrue(cov.get("docs").size() > 0);
        for (JsonNode d : cov.get("docs")) assertEquals(List.of("_id", "score"), names(d));

        // $in: ten values, ten ranges; only the matching keys are examined (beyond CouchDB, which scans the whole index).
        JsonNode in = find("mi", "{\"selector\":{\"type\":\"gamma\",\"score\":{\"$in\":[2,6,10,14,18,22,26,30,34,38]}},\"execution_stats\":true,\"limit\":100}");
        int n = in.get("docs").size();
        assertTrue(n > 0);
        assertEquals(n, in.at("/execution_stats/total_keys_examined").asInt(), "keys examined are the matching ones");
        // $or over the first column: one range each, merged in index order.
        JsonNode or = find("mi", "{\"selector\":{\"$or\":[{\"type\":\"alpha\"},{\"type\":\"Delta\"}],\"score\":{\"$lt\":10}},\"sort\":[\"type\",\"score\"],"
                + "\"execution_stats\":true,\"limit\":100}");
        List<String> types = new ArrayList<>();
        for (JsonNode d : or.get("docs")) types.add(d.get("type").asText());
        assertEquals(types.stream().sorted((a, b) -> a.equalsIgnoreCase(b) ? 0 : a.compareToIgnoreCase(b)).toList(), types, "alpha before Delta: " + types);
        assertEquals(types.size(), or.at("/execution_stats/total_keys_examined").asInt());

        // Pages by bookmark run on the same index, in the same order, each document once.
        List<String> all = ids(find("mi", "{\"selector\":{\"type\":{\"$gt\":\"a\"}},\"sort\":[\"type\",\"score\"],\"limit\":1000}"));
        List<String> paged = new ArrayList<>();
        String bookmark = null;
        for (int i = 0; i < 50; i++) {
            JsonNode p = find("mi", "{\"selector\":{\"type\":{\"$gt\":\"a\"}},\"sort\":[\"type\",\"score\"],\"limit\":17"
                    + (bookmark == null ? "" : ",\"bookmark\":\"" + bookmark + "\"") + "}");
            paged.addAll(ids(p));
            bookmark = p.get("bookmark").asText();
            if (p.get("docs").size() < 17) break;
        }
        assertEquals(all, paged);
        assertEquals(200, all.size(), "nokey has no score, so it is not in the index");

        // use_index naming an index that cannot serve the query: CouchDB's warning, and another index.
        JsonNode w = find("mi", "{\"selector\":{\"user.name\":\"u1\"},\"use_index\":\"ts\",\"limit\":1}");
        assertEquals("_design/ts was not used because it does not contain a valid index for this query.\n"
                + "No matching index found, create an index to optimize query time.", w.get("warning").asText());
        s.asAdmin("POST", "/mi/_find", "{\"selector\":{\"user.name\":\"u1\"},\"use_index\":\"ts\",\"allow_fallback\":false}")
                .error(400, "invalid_index", "_design/ts specified by `use_index` could not be found or it is not suitable.");
        s.asAdmin("POST", "/mi/_find", "{\"selector\":{\"score\":1},\"sort\":[\"user.name\"]}").error(400, "no_usable_index", null);
        s.asAdmin("POST", "/mi/_find", "{\"selector\":{\"type\":\"a\"},\"sort\":[{\"type\":\"asc\"},{\"score\":\"desc\"}]}")
                .error(400, "unsupported_mixed_sort", null);
        s.asAdmin("POST", "/mi/_find", "{\"selector\":{\"type\":\"a\"},\"bookmark\":\"AAAA\"}").error(400, "invalid_bookmark", null);
        // without a nouveau index: not "every document" from _all_docs, as CouchDB answers (MangoNouveauTest)
        s.asAdmin("POST", "/mi/_find", "{\"selector\":{\"$text\":\"alpha\"}}").error(400, "no_usable_index", null);
    }

    @Test
    void projectionsReadOnlyWhatTheyReturn() throws Exception {
        JsonNode r = find("mi", "{\"selector\":{\"user.name\":\"u3\",\"score\":{\"$lt\":40}},\"fields\":[\"user.name\",\"tags\"],\"limit\":3}");
        assertEquals(3, r.get("docs").size());
        for (JsonNode d : r.get("docs")) {
            assertEquals(List.of("user", "tags"), names(d));
            assertEquals("u3", d.at("/user/name").asText());
        }
    }

    @Test
    void explainShowsTheChoiceTheRangesAndTheCandidates() throws Exception {
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"score\"]},\"ddoc\":\"sc\",\"name\":\"sc\"}").status(200);
        s.asAdmin("POST", "/mi/_index", "{\"index\":{\"fields\":[\"type\",\"score\"]},\"ddoc\":\"ts\",\"name\":\"ts\"}").status(200);
        JsonNode e = s.asAdmin("POST", "/mi/_explain", "{\"selector\":{\"type\":{\"$in\":[\"alpha\",\"beta\"]},\"score\":{\"$gt\":10}},\"fields\":[\"_id\"]}")
                .status(200).json();
        assertEquals("sc", e.at("/index/name").asText(), "$in is not indexable to CouchDB: score alone decides");
        assertEquals("[10]", e.at("/mrargs/start_key").toString());
        assertEquals("[\"<MAX>\"]", e.at("/mrargs/end_key").toString());
        assertEquals("fwd", e.at("/mrargs/direction").asText());
        assertTrue(e.get("covering").asBoolean() == false, "type is matched on but not in sc");
        assertEquals("[{\"start_key\":[10],\"inclusive_start\":false,\"end_key\":[\"<MAX>\"],\"inclusive_end\":true}]", e.get("ranges").toString());
        assertEquals("{\"use_index\":[],\"bookmark\":\"nil\",\"limit\":25,\"skip\":0,\"sort\":{},\"fields\":[\"_id\"],\"partition\":\"\",\"r\":1,"
                + "\"conflicts\":false,\"stale\":false,\"update\":true,\"stable\":false,\"execution_stats\":false,\"allow_fallback\":true}", e.get("opts").toString());
        boolean sawTs = false;
        for (JsonNode c : e.get("index_candidates")) {
            if (c.at("/index/name").asText().equals("ts")) {
                sawTs = true;
                assertTrue(c.at("/analysis/usable").asBoolean());
                assertEquals("less_overlap", c.at("/analysis/reasons/0/name").asText(), "its first column is not narrowed");
            }
        }
        assertTrue(sawTs, e.toString());
        assertEquals("[\"score\"]", e.at("/selector_hints/0/indexable_fields").toString());
        JsonNode ts = s.asAdmin("POST", "/mi/_explain", "{\"selector\":{\"type\":{\"$in\":[\"alpha\",\"beta\"]},\"score\":{\"$gt\":10}},\"use_index\":\"ts\"}")
                .status(200).json();
        assertEquals(3, ts.get("ranges").size(), "two values and every array, each narrowed by score: " + ts.get("ranges"));
    }

    @Test
    void staleReadsAndInteractiveIndexes() throws Exception {
        s.asAdmin("PUT", "/st", null).status(201);
        s.asAdmin("POST", "/st/_index", "{\"index\":{\"fields\":[\"v\"]},\"ddoc\":\"v\",\"name\":\"v\"}").status(200);
        s.asAdmin("POST", "/st/_index", "{\"index\":{\"fields\":[\"w\"]},\"ddoc\":\"w\",\"name\":\"w\",\"interactive\":true}").status(200);
        assertEquals(0, find("st", "{\"selector\":{\"v\":1}}").get("docs").size());
        assertEquals(0, find("st", "{\"selector\":{\"w\":1}}").get("docs").size());
        s.asAdmin("PUT", "/st/x", "{\"v\":1,\"w\":1}").status(201);
        // update=false reads the index as it is: the ordinary one has not seen the write yet...
        assertEquals(0, find("st", "{\"selector\":{\"v\":1},\"update\":false}").get("docs").size());
        // ...the interactive one indexed it in the write's own transaction.
        assertEquals(List.of("x"), ids(find("st", "{\"selector\":{\"w\":1},\"update\":false}")));
        assertEquals(List.of("x"), ids(find("st", "{\"selector\":{\"v\":1}}")), "a default query brings the index up to date");
        JsonNode ddoc = s.asAdmin("GET", "/st/_design/w", null).status(200).json();
        assertTrue(ddoc.at("/options/interactive").asBoolean());
        // A Mango index is a view like any other: its rows are the column values, its reduce _count.
        JsonNode view = s.asAdmin("GET", "/st/_design/v/_view/v?reduce=false", null).status(200).json();
        assertEquals("[{\"id\":\"x\",\"key\":[1],\"value\":null}]", view.get("rows").toString());
    }

    static List<String> names(JsonNode o) {
        List<String> out = new ArrayList<>();
        o.fieldNames().forEachRemaining(out::add);
        return out;
    }
}

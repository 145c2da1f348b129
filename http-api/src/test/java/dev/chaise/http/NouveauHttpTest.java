package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Nouveau's HTTP API ({@code src/nouveau/src/nouveau_httpd.erl}) against CouchDB 3.5's
 * {@code test/elixir/test/nouveau_test.exs}: its documents, design document and answers.
 */
class NouveauHttpTest {
    static HttpTestServer s;
    static int dbs;

    static final String DOCS = """
            {"docs":[{"_id":"doc4","foo":"foo","bar":42,"baz":"hello there"},{"_id":"doc3","foo":"bar","bar":12.0,"baz":"hello"},
            {"_id":"doc1","foo":"baz","bar":0,"baz":"there"},{"_id":"doc2","foo":"foobar","bar":100,"baz":"hi"}]}""";
    static final String DDOC = """
            {"nouveau":{"bar":{"default_analyzer":"standard","index":"function (doc) { index(\\"string\\", \\"foo\\", doc.foo, {store: true}); index(\\"double\\", \\"bar\\", doc.bar, {store: true}); index(\\"stored\\", \\"baz\\", doc.foo); }"}}}""";

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /** A fresh database with the test's four documents and design document. */
    static String db() throws Exception {
        String db = "nv" + (dbs++);
        s.asAdmin("PUT", "/" + db, null).status(201);
        s.asAdmin("POST", "/" + db + "/_bulk_docs", DOCS).status(201);
        s.asAdmin("PUT", "/" + db + "/_design/foo", DDOC).status(201);
        return db;
    }

    static List<String> ids(HttpTestServer.Resp r) {
        List<String> out = new ArrayList<>();
        for (JsonNode h : r.json().get("hits")) out.add(h.has("doc") ? h.get("doc").get("_id").asText() : h.get("id").asText());
        return out;
    }

    static HttpTestServer.Resp post(String db, String body) throws Exception {
        return s.asAdmin("POST", "/" + db + "/_design/foo/_nouveau/bar", body);
    }

    @Test
    void getAndPostReturnEveryHitByRelevanceThenId() throws Exception {
        String db = db();
        HttpTestServer.Resp g = s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*&include_docs=true", null).status(200);
        assertEquals(List.of("doc1", "doc2", "doc3", "doc4"), ids(g));
        JsonNode b = g.json();
        assertEquals(4, b.get("total_hits").asInt());
        assertEquals("EQUAL_TO", b.get("total_hits_relation").asText());
        assertTrue(b.get("counts").isNull() && b.get("ranges").isNull(), b.toString());
        assertTrue(b.get("update_latency").asLong() >= 0);
        assertEquals("baz", b.get("hits").get(0).get("doc").get("foo").asText());
        assertEquals(0.0, b.get("hits").get(0).get("fields").get("bar").asDouble());
        assertEquals(List.of("doc1", "doc2", "doc3", "doc4"), ids(post(db, "{\"q\":\"*:*\",\"include_docs\":true}").status(200)));
        assertEquals(List.of("doc3"), ids(post(db, "{\"q\":\"foo:bar\"}")));
        // Without include_docs a hit has no doc member.
        assertTrue(!post(db, "{\"q\":\"*:*\"}").json().get("hits").get(0).has("doc"));
    }

    @Test
    void pagesSortsRangesCountsAndTopN() throws Exception {
        String db = db();
        HttpTestServer.Resp p1 = post(db, "{\"q\":\"*:*\",\"limit\":2}");
        assertEquals(List.of("doc1", "doc2"), ids(p1));
        String bm = p1.json().get("bookmark").asText();
        assertEquals(List.of("doc3", "doc4"), ids(post(db, "{\"q\":\"*:*\",\"limit\":2,\"bookmark\":\"" + bm + "\"}")));
        assertEquals(List.of("doc3", "doc4"), ids(s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*&limit=2&bookmark=" + bm, null)));
        assertEquals(List.of("doc3"), ids(post(db, "{\"q\":\"bar:[10.0 TO 20.0]\",\"locale\":\"us\"}")));
        assertEquals(List.of("doc2"), ids(post(db, "{\"q\":\"bar:[10.0 TO 20.0]\",\"locale\":\"de\"}")));
        assertEquals(List.of("doc3", "doc1", "doc4", "doc2"), ids(post(db, "{\"q\":\"*:*\",\"sort\":\"foo\"}")));
        assertEquals(List.of("doc2", "doc4", "doc1", "doc3"), ids(s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*&sort=%22-foo%22", null)));
        assertEquals(List.of("doc1", "doc3", "doc4", "doc2"), ids(post(db, "{\"q\":\"*:*\",\"sort\":\"bar\"}")));
        assertEquals(List.of("doc2", "doc4", "doc3", "doc1"), ids(post(db, "{\"q\":\"*:*\",\"sort\":[\"-bar\"]}")));
        assertEquals("{\"foo\":{\"bar\":1,\"baz\":1,\"foo\":1,\"foobar\":1}}", post(db, "{\"q\":\"*:*\",\"counts\":[\"foo\"]}").json().get("counts").toString());
        String ranges = "\"ranges\":{\"bar\":[{\"label\":\"cheap\",\"min\":0,\"max\":42},{\"label\":\"expensive\",\"min\":42,\"min_inclusive\":false,\"max\":1000}]}";
        assertEquals("{\"bar\":{\"cheap\":3,\"expensive\":1}}", post(db, "{\"q\":\"*:*\"," + ranges + "}").json().get("ranges").toString());
        assertEquals("{\"bar\":{\"cheap\":3}}", post(db, "{\"q\":\"*:*\",\"top_n\":1," + ranges + "}").json().get("ranges").toString());
    }

    @Test
    void deletionsAndPurgesLeaveTheIndexAndInfoSaysWhereItIs() throws Exception {
        String db = db();
        assertEquals(4, post(db, "{\"q\":\"*:*\"}").json().get("total_hits").asInt());
        String rev4 = s.asAdmin("GET", "/" + db + "/doc4", null).json().get("_rev").asText();
        s.asAdmin("DELETE", "/" + db + "/doc4?rev=" + rev4, null).status(200);
        assertEquals(3, post(db, "{\"q\":\"*:*\"}").json().get("total_hits").asInt());
        String rev3 = s.asAdmin("GET", "/" + db + "/doc3", null).json().get("_rev").asText();
        s.asAdmin("POST", "/" + db + "/_purge", "{\"doc3\":[\"" + rev3 + "\"]}").status(201);
        assertEquals(List.of("doc1", "doc2"), ids(post(db, "{\"q\":\"*:*\"}")));
        JsonNode info = s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau_info/bar", null).status(200).json();
        JsonNode dbInfo = s.asAdmin("GET", "/" + db, null).json();
        assertEquals("_design/foo/bar", info.get("name").asText());
        assertEquals(dbInfo.get("update_seq").asText(), info.get("search_index").get("update_seq").asText());
        assertEquals(dbInfo.get("purge_seq").asText(), info.get("search_index").get("purge_seq").asText());
        assertEquals(2, info.get("search_index").get("num_docs").asInt());
        assertTrue(info.get("search_index").get("disk_size").asLong() > 0);
        assertEquals(64, info.get("search_index").get("signature").asText().length());
    }

    @Test
    void updateFalseAnswersFromTheIndexAsItIs() throws Exception {
        String db = db();
        assertEquals(4, post(db, "{\"q\":\"*:*\"}").json().get("total_hits").asInt());
        s.asAdmin("PUT", "/" + db + "/doc5", "{\"foo\":\"x\",\"bar\":1}").status(201);
        assertEquals(4, post(db, "{\"q\":\"*:*\",\"update\":false}").json().get("total_hits").asInt());
        assertEquals(4, s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*&update=false", null).json().get("total_hits").asInt());
        assertEquals(5, post(db, "{\"q\":\"*:*\"}").json().get("total_hits").asInt());
    }

    @Test
    void errorsAreNouveaus() throws Exception {
        String db = db();
        // nouveau_httpd:validate_query_arg
        post(db, "{}").error(400, "query_parse_error", "q parameter is mandatory");
        s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar", null).error(400, "query_parse_error", "q parameter is mandatory");
        post(db, "{\"q\":\"*:*\",\"limit\":0}").error(400, "query_parse_error", "limit parameter must be greater than zero");
        s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*&limit=x", null).error(400, "query_parse_error", "limit parameter must be an integer");
        post(db, "{\"q\":\"*:*\",\"top_n\":0}").error(400, "query_parse_error", "top_n parameter must be greater than zero");
        post(db, "{\"q\":\"*:*\",\"ranges\":{\"bar\":1}}").error(400, "query_parse_error", "range values must be lists of objects");
        // The service's 400s: a query Lucene cannot parse, a field it cannot sort on.
        post(db, "{\"q\":\"foo:(\"}").error(400, "bad_request", null);
        post(db, "{\"q\":\"*:*\",\"sort\":\"baz\"}").error(400, "bad_request", null);
        // nouveau_util:design_doc_to_index and the design document's own 404.
        post(db, "{\"q\":\"*:*\"}".replace("*:*", "foo:bar")).status(200);
        s.asAdmin("POST", "/" + db + "/_design/foo/_nouveau/missing", "{\"q\":\"foo:bar\"}").error(404, "not_found", "missing not found.");
        s.asAdmin("POST", "/" + db + "/_design/nope/_nouveau/bar", "{\"q\":\"foo:bar\"}").error(404, "not_found", "missing");
        s.asAdmin("PUT", "/" + db + "/_design/foo/_nouveau/bar", "{}").error(405, "method_not_allowed", null);
        // A field indexed as two types: Nouveau's 400 from its update.
        s.asAdmin("PUT", "/" + db + "/_design/two", "{\"nouveau\":{\"bar\":{\"index\":\"function (doc) { index('string', 'foo', 'bar', {store: true}); index('double', 'foo', 12.0, {store: true}); }\"}}}").status(201);
        s.asAdmin("POST", "/" + db + "/_design/two/_nouveau/bar", "{\"q\":\"foo:bar\"}").error(400, "bad_request", null);
        // An index function that does not compile: 400 compilation_error, as a view's map function.
        s.asAdmin("PUT", "/" + db + "/_design/bad", "{\"nouveau\":{\"bar\":{\"index\":\"function (doc) { index(\"}}}").status(201);
        s.asAdmin("POST", "/" + db + "/_design/bad/_nouveau/bar", "{\"q\":\"*:*\"}").error(400, "compilation_error", null);
        // Readers only: eve is no member of an admin-only database.
        s.send("POST", "/" + db + "/_design/foo/_nouveau/bar", "{\"q\":\"*:*\"}", "Authorization", HttpTestServer.EVE, "Content-Type", "application/json").status(403);
        // Clouseau's _search stays 501.
        s.asAdmin("GET", "/" + db + "/_design/foo/_search/bar?q=*:*", null).error(501, "not_implemented", null);
    }

    @Test
    void analyzeAndCleanup() throws Exception {
        assertEquals("{\"tokens\":[\"hello\",\"there\"]}",
                s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"standard\",\"text\":\"hello there\"}").status(200).json().toString());
        assertEquals("{\"tokens\":[\"run\"]}",
                s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"english\",\"text\":\"running\"}").status(200).json().toString());
        s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"standard\"}").error(400, "bad_request", null);
        s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"klingon\",\"text\":\"x\"}").error(400, "bad_request", "klingon is not a valid analyzer name");
        // Nouveau's chinese and japanese: Lucene's SmartChineseAnalyzer (words, not characters) and
        // JapaneseAnalyzer (kuromoji: particles dropped, verbs to their base form).
        assertEquals("{\"tokens\":[\"我\",\"是\",\"中国\",\"人\"]}",
                s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"chinese\",\"text\":\"我是中国人\"}").status(200).json().toString());
        assertEquals("{\"tokens\":[\"関西\",\"国際\",\"空港\",\"行く\"]}",
                s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"japanese\",\"text\":\"関西国際空港に行きました\"}").status(200).json().toString());
        // polish needs lucene-analysis-stempel, which Maven Central does not serve at our Lucene version.
        s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"polish\",\"text\":\"x\"}").error(400, "bad_request", "polish is not a valid analyzer name");
        s.asAdmin("GET", "/_nouveau_analyze", null).error(405, "method_not_allowed", null);

        String db = db();
        post(db, "{\"q\":\"*:*\"}").status(200);
        String sig = s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau_info/bar", null).json().get("search_index").get("signature").asText();
        s.asAdmin("POST", "/" + db + "/_nouveau_cleanup", "{}").status(202);
        // Still defined: kept.
        assertEquals(4, post(db, "{\"q\":\"*:*\",\"update\":false}").json().get("total_hits").asInt());
        String rev = s.asAdmin("GET", "/" + db + "/_design/foo", null).json().get("_rev").asText();
        s.asAdmin("PUT", "/" + db + "/_design/foo?rev=" + rev, DDOC.replace("standard", "english")).status(201);
        String sig2 = s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau_info/bar", null).json().get("search_index").get("signature").asText();
        assertTrue(!sig.equals(sig2), "a new analyzer is a new index");
        s.asAdmin("POST", "/" + db + "/_nouveau_cleanup", "{}").status(202);
        // couch_db:check_is_admin's 401 for a caller who is no admin of the database.
        s.send("POST", "/" + db + "/_nouveau_cleanup", "{}", "Authorization", HttpTestServer.BOB, "Content-Type", "application/json").status(401);
    }

    /**
     * {@code [nouveau] enable = false} (live, over {@code _config}): nouveau_httpd's
     * {@code check_if_enabled} throws {@code not_found} before search, info and analyze do anything,
     * cleanup has no check (202), and chttpd_misc:get_features drops {@code nouveau} from {@code GET /}.
     */
    @Test
    void disabledNouveauIsNotFoundAsInCouchDb() throws Exception {
        try (HttpTestServer own = new HttpTestServer()) { // its own server: the switch is server-wide
            HttpTestServer was = s;
            s = own;
            try {
                String db = db();
                post(db, "{\"q\":\"*:*\"}").status(200);
                assertEquals("nouveau", s.asAdmin("GET", "/", null).json().path("features").get(0).asText());
                s.asAdmin("PUT", "/_node/_local/_config/nouveau/enable", "\"false\"").status(200);
                assertTrue(!s.asAdmin("GET", "/", null).json().path("features").toString().contains("nouveau"));
                post(db, "{\"q\":\"*:*\"}").error(404, "not_found", "missing");
                s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*", null).error(404, "not_found", "missing");
                s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau_info/bar", null).error(404, "not_found", "missing");
                s.asAdmin("POST", "/_nouveau_analyze", "{\"analyzer\":\"standard\",\"text\":\"x\"}").error(404, "not_found", "missing");
                s.asAdmin("POST", "/" + db + "/_nouveau_cleanup", "{}").status(202);
                // The database's own rules come first: a missing database is still the database's 404.
                s.asAdmin("GET", "/nodb/_design/foo/_nouveau/bar?q=*:*", null).error(404, "not_found", "Database does not exist.");
                s.asAdmin("PUT", "/_node/_local/_config/nouveau/enable", "\"true\"").status(200);
                assertEquals(4, post(db, "{\"q\":\"*:*\"}").status(200).json().path("total_hits").asInt());
            } finally {
                s = was;
            }
        }
    }

    /** [nouveau] max_indexes_open takes a positive count; the bound itself is SearchIndexesTest's. */
    @Test
    void maxIndexesOpenIsASettingUnderNouveau() throws Exception {
        try (HttpTestServer own = new HttpTestServer()) {
            HttpTestServer was = s;
            s = own;
            try {
                s.asAdmin("PUT", "/_node/_local/_config/nouveau/max_indexes_open", "\"1\"").status(200);
                String a = db();
                String b = db();
                for (int i = 0; i < 2; i++) {
                    assertEquals(4, post(a, "{\"q\":\"*:*\"}").status(200).json().path("total_hits").asInt());
                    assertEquals(1, post(b, "{\"q\":\"foo:foo\"}").status(200).json().path("total_hits").asInt());
                }
            } finally {
                s = was;
            }
        }
    }

    /** nouveau_test.exs "search GET/POST (partitioned)": a partition's query keeps to its documents; a global one sees all. */
    @Test
    void partitionQueriesKeepToThePartition() throws Exception {
        String db = "nvp" + (dbs++);
        s.asAdmin("PUT", "/" + db + "?partitioned=true", null).status(201);
        s.asAdmin("POST", "/" + db + "/_bulk_docs", """
                {"docs":[{"_id":"foo:doc4","foo":"foo","bar":42},{"_id":"bar:doc3","foo":"bar","bar":12.0},
                {"_id":"foo:doc1","foo":"baz","bar":0},{"_id":"bar:doc2","foo":"foobar","bar":100}]}""").status(201);
        s.asAdmin("PUT", "/" + db + "/_design/foo", DDOC).status(201);
        String foo = "/" + db + "/_partition/foo/_design/foo/_nouveau/bar";
        assertEquals(List.of("foo:doc1", "foo:doc4"), ids(s.asAdmin("GET", foo + "?q=*:*&include_docs=true", null).status(200)));
        assertEquals(List.of("bar:doc2", "bar:doc3"),
                ids(s.asAdmin("POST", "/" + db + "/_partition/bar/_design/foo/_nouveau/bar", "{\"q\":\"*:*\",\"include_docs\":true}").status(200)));
        assertEquals(List.of("foo:doc4"), ids(s.asAdmin("GET", foo + "?q=bar:[40%20TO%2050]", null).status(200)));
        assertEquals(2, s.asAdmin("GET", foo + "?q=*:*", null).status(200).json().path("total_hits").asInt());
        assertEquals(4, s.asAdmin("GET", "/" + db + "/_design/foo/_nouveau/bar?q=*:*", null).status(200).json().path("total_hits").asInt());
    }

}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Mango over Nouveau, as CouchDB 3.5 serves it: {@code POST _index} with {@code "type": "nouveau"}
 * (mango_idx_nouveau), {@code _find} and {@code _explain} on such an index (mango_cursor_nouveau,
 * the selector as a Lucene query by mango_selector_text), listing and deleting it. The documents
 * and the index are nouveau_test.exs's ({@code create_search_docs}, {@code create_mango_index}).
 */
class MangoNouveauTest {
    static HttpTestServer s;
    static int dbs;

    static final String INDEX = """
            {"type":"nouveau","index":{"fields":[{"name":"foo","type":"string"},{"name":"bar","type":"number"},{"name":"baz","type":"string"}]}}""";

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /** A fresh database with nouveau_test.exs's four documents and its Mango index. */
    static String db(boolean partitioned) throws Exception {
        String db = "mn" + (dbs++);
        s.asAdmin("PUT", "/" + db + (partitioned ? "?partitioned=true" : ""), null).status(201);
        String docs = partitioned
                ? """
                {"docs":[{"_id":"foo:doc4","foo":"foo","bar":42},{"_id":"bar:doc3","foo":"bar","bar":12.0},
                {"_id":"foo:doc1","foo":"baz","bar":0},{"_id":"bar:doc2","foo":"foobar","bar":100}]}"""
                : NouveauHttpTest.DOCS;
        s.asAdmin("POST", "/" + db + "/_bulk_docs", docs).status(201);
        s.asAdmin("POST", "/" + db + "/_index", INDEX).status(200);
        return db;
    }

    static HttpTestServer.Resp find(String db, String body) throws Exception {
        return s.asAdmin("POST", "/" + db + "/_find", body);
    }

    static List<String> ids(HttpTestServer.Resp r) {
        List<String> out = new ArrayList<>();
        for (JsonNode d : r.json().get("docs")) out.add(d.get("_id").asText());
        return out;
    }

    @Test
    void nouveauTestsMangoQueries() throws Exception {
        String db = db(false);
        // "mango search by number": a range, all hits scoring alike, so in id order
        assertEquals(List.of("doc2", "doc3", "doc4"), ids(find(db, "{\"selector\":{\"bar\":{\"$gt\":5}}}").status(200)));
        // "mango search by string"
        assertEquals(List.of("doc4"), ids(find(db, "{\"selector\":{\"foo\":{\"$eq\":\"foo\"}}}").status(200)));
        // "mango sort by number" and "mango sort by string": the sort names the index's field and type
        assertEquals(List.of("doc3", "doc4", "doc2"), ids(find(db, "{\"sort\":[{\"bar:number\":\"asc\"}],\"selector\":{\"bar\":{\"$gt\":5}}}").status(200)));
        assertEquals(List.of("doc3", "doc1", "doc4", "doc2"), ids(find(db, "{\"sort\":[{\"foo:string\":\"asc\"}],\"selector\":{\"bar\":{\"$gte\":0}}}").status(200)));
        assertEquals(List.of("doc2", "doc4", "doc1", "doc3"), ids(find(db, "{\"sort\":[{\"foo:string\":\"desc\"}],\"selector\":{\"bar\":{\"$gte\":0}}}").status(200)));
        // "mango search by text": $text searches every string of the document ($default, standard analyzer)
        List<String> hello = ids(find(db, "{\"selector\":{\"$text\":\"hello\"}}").status(200));
        assertEquals(List.of("doc3", "doc4"), hello.stream().sorted().toList());
        assertEquals(List.of("doc4"), ids(find(db, "{\"selector\":{\"$text\":\"hello there\"}}")), "a phrase");
    }

    @Test
    void everyHitIsMatchedAgainstTheSelector() throws Exception {
        String db = db(false);
        // $ne, $in, $exists, $regex, $and/$or: the query finds candidates, the selector decides
        assertEquals(List.of("doc1", "doc2", "doc3"), ids(find(db, "{\"selector\":{\"foo\":{\"$ne\":\"foo\"}},\"sort\":[\"foo:string\"]}")).stream().sorted().toList());
        assertEquals(List.of("doc1", "doc3"), ids(find(db, "{\"selector\":{\"foo\":{\"$in\":[\"bar\",\"baz\"]}}}")));
        assertEquals(List.of("doc2", "doc4"), ids(find(db, "{\"selector\":{\"foo\":{\"$regex\":\"^foo\"}}}")));
        assertEquals(List.of("doc1"), ids(find(db, "{\"selector\":{\"$or\":[{\"bar\":0},{\"bar\":{\"$lt\":-1}}]}}")));
        assertEquals(List.of("doc3"), ids(find(db, "{\"selector\":{\"$and\":[{\"bar\":{\"$gte\":12.0}},{\"bar\":{\"$lt\":12.5}}]}}")), "a float bound is exact");
        assertEquals(List.of(), ids(find(db, "{\"selector\":{\"foo\":{\"$in\":[]}}}")), "an empty query finds nothing");
        // a string is the keyword it was indexed as (the analyzer Mango records), whatever its case or spaces
        s.asAdmin("PUT", "/" + db + "/doc6", "{\"foo\":\"Mixed Case: ok\",\"bar\":1,\"baz\":\"Hello\"}").status(201);
        assertEquals(List.of("doc6"), ids(find(db, "{\"selector\":{\"foo\":\"Mixed Case: ok\"}}")));
        assertEquals(List.of("doc6"), ids(find(db, "{\"selector\":{\"foo\":{\"$beginsWith\":\"Mixed C\"}}}")));
        s.asAdmin("PUT", "/" + db + "/doc7", "{\"foo\":\"zebra\",\"bar\":2}").status(201);
        assertEquals(List.of("doc6", "doc7"), ids(find(db, "{\"selector\":{\"foo\":{\"$gt\":\"foobar\"}}}")).stream().sorted().toList(),
                "a string range is open above");
        assertEquals(List.of("doc6"), ids(find(db, "{\"selector\":{\"foo\":{\"$gt\":\"foobar\",\"$lt\":\"zebra\"}}}")),
                "in Mango's collation, where Mixed comes after foobar (not in Lucene's byte order)");
        assertEquals(List.of("doc3", "doc4", "doc6"), ids(find(db, "{\"selector\":{\"$text\":\"hello\"}}")).stream().sorted().toList(),
                "while $default text is analyzed (standard)");
    }

    @Test
    void limitSkipFieldsBookmarkAndExecutionStats() throws Exception {
        String db = db(false);
        String sel = "\"selector\":{\"bar\":{\"$gte\":0}},\"sort\":[{\"bar:number\":\"asc\"}]";
        HttpTestServer.Resp p1 = find(db, "{" + sel + ",\"limit\":2,\"fields\":[\"_id\",\"bar\"],\"execution_stats\":true}").status(200);
        assertEquals(List.of("doc1", "doc3"), ids(p1));
        assertEquals("{\"_id\":\"doc1\",\"bar\":0}", p1.json().get("docs").get(0).toString(), "fields keeps what was asked for");
        JsonNode st = p1.json().get("execution_stats");
        assertEquals(0, st.get("total_keys_examined").asInt(), "mango_cursor_nouveau counts no keys");
        assertEquals(2, st.get("total_docs_examined").asInt());
        assertEquals(2, st.get("results_returned").asInt());
        String bm = p1.json().get("bookmark").asText();
        assertEquals(List.of("doc4", "doc2"), ids(find(db, "{" + sel + ",\"limit\":2,\"bookmark\":\"" + bm + "\"}")), "the bookmark resumes after the last hit");
        assertEquals(List.of("doc4"), ids(find(db, "{" + sel + ",\"limit\":1,\"skip\":2}")), "skip counts matches");
        assertTrue(find(db, "{\"selector\":{\"bar\":{\"$gt\":1000}}}").json().get("bookmark").isNull(), "no hit and no bookmark: null, as nouveau_bookmark:pack(nil)");
        HttpTestServer.Resp bad = find(db, "{" + sel + ",\"bookmark\":\"not-a-bookmark\"}").status(400);
        assertEquals("invalid_bookmark", bad.json().get("error").asText());
        // an update is seen by the next query, the index brought up to date first
        s.asAdmin("PUT", "/" + db + "/doc5", "{\"foo\":\"new\",\"bar\":7}").status(201);
        assertEquals(List.of("doc5"), ids(find(db, "{\"selector\":{\"foo\":\"new\"}}")));
    }

    @Test
    void indexesAreListedStoredAndDeletedAsCouchDbWritesThem() throws Exception {
        String db = db(false);
        HttpTestServer.Resp again = s.asAdmin("POST", "/" + db + "/_index", INDEX).status(200);
        assertEquals("exists", again.json().get("result").asText());
        String ddoc = again.json().get("id").asText();
        String name = again.json().get("name").asText();
        JsonNode list = s.asAdmin("GET", "/" + db + "/_index", null).status(200).json();
        assertEquals(2, list.get("total_rows").asInt());
        JsonNode idx = list.get("indexes").get(1);
        assertEquals("nouveau", idx.get("type").asText());
        assertEquals(ddoc, idx.get("ddoc").asText());
        assertEquals(false, idx.get("partitioned").asBoolean());
        assertEquals("{\"default_analyzer\":\"keyword\",\"default_field\":{},\"selector\":{},\"fields\":[{\"foo\":\"string\"},{\"bar\":\"number\"},"
                + "{\"baz\":\"string\"}],\"index_array_lengths\":true}", idx.get("def").toString(), "mango_idx_nouveau:to_json");
        JsonNode body = s.asAdmin("GET", "/" + db + "/" + ddoc, null).status(200).json();
        assertEquals("query", body.get("language").asText());
        JsonNode entry = body.get("nouveau").get(name);
        assertEquals(Json.MAPPER.readTree("{\"name\":\"perfield\",\"default\":\"keyword\",\"fields\":{\"$default\":\"standard\"}}"), entry.get("analyzer"),
                "mango_idx_nouveau:construct_analyzer, recorded beside the definition");
        s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{},\"ddoc\":\"all\",\"name\":\"all\"}").status(200);
        JsonNode all = s.asAdmin("GET", "/" + db + "/_design/all", null).status(200).json().get("nouveau").get("all").get("index");
        assertEquals("all_fields", all.get("fields").asText(), "no fields: every field, as mango_fields:new([])");

        s.asAdmin("DELETE", "/" + db + "/_index/" + ddoc + "/nouveau/" + name, null).status(200);
        s.asAdmin("GET", "/" + db + "/" + ddoc, null).status(404); // its last index: the design document goes
        s.asAdmin("DELETE", "/" + db + "/_index/" + ddoc + "/nouveau/" + name, null).status(404);
        s.asAdmin("DELETE", "/" + db + "/_index/_design/all/json/" + "x", null).status(404);
        JsonNode bulk = s.asAdmin("POST", "/" + db + "/_index/_bulk_delete", "{\"docids\":[\"_design/all\"]}").status(200).json();
        assertEquals("[{\"id\":\"_design/all\",\"ok\":true}]", bulk.get("success").toString(), "_bulk_delete takes nouveau indexes too");
        assertEquals(1, s.asAdmin("GET", "/" + db + "/_index", null).json().get("total_rows").asInt());
    }

    @Test
    void explainShowsTheLuceneQuery() throws Exception {
        String db = db(false);
        JsonNode e = s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"bar\":{\"$gt\":5}},\"sort\":[{\"bar:number\":\"desc\"}]}").status(200).json();
        assertEquals("nouveau", e.get("index").get("type").asText());
        assertEquals("(bar_3anumber:{5 TO *])", e.get("query").asText());
        assertTrue(e.get("partition").isNull());
        assertEquals("[\"-bar_3anumber\"]", e.get("sort").toString());
        assertEquals(25, e.get("limit").asInt());
        assertTrue(e.has("index_candidates") && e.has("selector_hints"));
        JsonNode t = s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"$text\":\"hello\"}}").status(200).json();
        assertEquals("($default:\"hello\")", t.get("query").asText());
        assertTrue(t.get("sort").isNull());
    }

    @Test
    void aUsableJsonIndexComesFirst() throws Exception {
        String db = db(false);
        s.asAdmin("POST", "/" + db + "/_index", "{\"index\":{\"fields\":[\"foo\"]},\"ddoc\":\"j\",\"name\":\"j\"}").status(200);
        JsonNode e = s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"foo\":\"foo\"}}").status(200).json();
        assertEquals("json", e.get("index").get("type").asText(), "CouchDB tries view cursors before nouveau ones");
        JsonNode n = s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"foo\":\"foo\"},\"use_index\":\"" + nouveauDdoc(db) + "\"}").status(200).json();
        assertEquals("nouveau", n.get("index").get("type").asText(), "unless use_index names the nouveau one");
        assertEquals(List.of("doc4"), ids(find(db, "{\"selector\":{\"foo\":\"foo\"},\"use_index\":\"" + nouveauDdoc(db) + "\"}").status(200)));
    }

    private static String nouveauDdoc(String db) throws Exception {
        for (JsonNode i : s.asAdmin("GET", "/" + db + "/_index", null).json().get("indexes")) {
            if (i.get("type").asText().equals("nouveau")) return i.get("ddoc").asText();
        }
        throw new AssertionError("no nouveau index");
    }

    @Test
    void partitionedQueriesKeepToTheirPartition() throws Exception {
        String db = db(true);
        // nouveau_test.exs "mango (partitioned)"
        assertEquals(List.of("foo:doc4"), ids(s.asAdmin("POST", "/" + db + "/_partition/foo/_find", "{\"selector\":{\"foo\":{\"$eq\":\"foo\"}}}").status(200)));
        assertEquals(List.of("bar:doc3"), ids(s.asAdmin("POST", "/" + db + "/_partition/bar/_find", "{\"selector\":{\"foo\":{\"$eq\":\"bar\"}}}").status(200)));
        JsonNode e = s.asAdmin("POST", "/" + db + "/_partition/foo/_explain", "{\"selector\":{\"foo\":\"foo\"}}").status(200).json();
        assertEquals("foo", e.get("partition").asText());
    }

    @Test
    void couchDbsErrors() throws Exception {
        String db = db(false);
        // mango_selector_text: no Lucene query for $keyMapMatch, and usability asks for one
        HttpTestServer.Resp r = find(db, "{\"selector\":{\"foo\":{\"$keyMapMatch\":{\"$eq\":\"a\"}}}}").status(400);
        assertEquals("invalid_operator", r.json().get("error").asText());
        assertEquals("Invalid text operator: $keyMapMatch", r.json().get("reason").asText());
        // mango_idx_nouveau:validate_fields
        r = s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{\"fields\":[{\"name\":\"a\",\"type\":\"date\"}]}}").status(400);
        assertEquals("invalid_index_fields_definition", r.json().get("error").asText());
        assertTrue(r.json().get("reason").asText().startsWith("Text Index field definitions must be of the form"));
        r = s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{\"fields\":[{\"name\":\"\",\"type\":\"string\"}]}}").status(400);
        assertEquals("invalid_index_fields_definition", r.json().get("error").asText());
        // mango_opts
        r = s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{\"fields\":[],\"colour\":1}}").status(400);
        assertEquals("invalid_key", r.json().get("error").asText());
        assertEquals("Invalid key colour for this request.", r.json().get("reason").asText());
        r = s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{\"index_array_lengths\":1}}").status(400);
        assertEquals("invalid_boolean", r.json().get("error").asText());
        r = s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{\"partial_filter_selector\":[]}}").status(400);
        assertEquals("invalid_selector_json", r.json().get("error").asText());
        // a second usable nouveau index: mango_cursor_nouveau:create wants one
        s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"nouveau\",\"index\":{\"fields\":[{\"name\":\"bar\",\"type\":\"number\"}]},\"ddoc\":\"two\"}").status(200);
        r = find(db, "{\"selector\":{\"bar\":{\"$gt\":5}}}").status(400);
        assertEquals("multiple_nouveau_indexes", r.json().get("error").asText());
        assertEquals("You must specify an index with the `use_index` parameter.", r.json().get("reason").asText());
        assertEquals(List.of("doc2", "doc3", "doc4"), ids(find(db, "{\"selector\":{\"bar\":{\"$gt\":5}},\"use_index\":\"two\"}").status(200)));
        // a text index (Clouseau's) is still not built
        assertEquals(501, s.asAdmin("POST", "/" + db + "/_index", "{\"type\":\"text\",\"index\":{}}").status());
    }

    /** mango_idx with {@code [nouveau] enable = false}: the type is unavailable, and its indexes are not listed or used. */
    @Test
    void disabledNouveauIsAnUnavailableIndexType() throws Exception {
        String db = db(false);
        s.asAdmin("PUT", "/_node/_local/_config/nouveau/enable", "\"false\"").status(200);
        try {
            HttpTestServer.Resp r = s.asAdmin("POST", "/" + db + "/_index", INDEX).status(503);
            assertEquals("required index service unavailable", r.json().get("error").asText());
            assertEquals("nouveau", r.json().get("reason").asText());
            assertEquals(1, s.asAdmin("GET", "/" + db + "/_index", null).status(200).json().get("total_rows").asInt());
            assertEquals("special", s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"bar\":{\"$gt\":5}}}").status(200).json()
                    .get("index").get("type").asText());
        } finally {
            s.asAdmin("PUT", "/_node/_local/_config/nouveau/enable", "\"true\"").status(200);
        }
        assertEquals("nouveau", s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"bar\":{\"$gt\":5}}}").json().get("index").get("type").asText());
    }

    @Test
    void textWithoutANouveauIndexSaysWhatIsMissing() throws Exception {
        String db = "mn" + (dbs++);
        s.asAdmin("PUT", "/" + db, null).status(201);
        HttpTestServer.Resp r = find(db, "{\"selector\":{\"$text\":\"hello\"}}").status(400);
        assertEquals("no_usable_index", r.json().get("error").asText());
        assertFalse(r.json().get("reason").asText().isEmpty());
        assertEquals(400, s.asAdmin("POST", "/" + db + "/_explain", "{\"selector\":{\"$text\":\"hello\"}}").status());
    }
}

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
 * Mango in partitioned databases (issue 29), as CouchDB 3.5.0 answers it: {@code _find} and
 * {@code _explain} under {@code /{db}/_partition/{p}}, indexes with {@code "partitioned"}, a
 * partition's queries on partitioned indexes only and global ones on global indexes only, and
 * the {@code no_usable_index} reasons ({@code mango_idx}, {@code mango_httpd},
 * {@code mango_error}; the cases of {@code partition_mango_test.exs}).
 */
class PartitionedMangoTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        for (String db : new String[] {"pm", "pmg", "pmp"}) {
            s.asAdmin("PUT", "/" + db + "?partitioned=true", null).status(201);
            PartitionedDatabaseTest.createPartitionDocs(s, db);
        }
        s.asAdmin("PUT", "/pmplain", null).status(201);
        s.asAdmin("PUT", "/pmplain/a", "{\"some\":\"field\"}").status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void aPartitionsFindUsesItsPartitionedIndex() throws Exception {
        // an index without "partitioned" takes the database's flag
        JsonNode created = s.asAdmin("POST", "/pm/_index", "{\"index\":{\"fields\":[\"value\"]}}").status(200).json();
        assertEquals("created", created.path("result").asText());
        JsonNode list = s.asAdmin("GET", "/pm/_index", null).status(200).json().path("indexes");
        assertTrue(list.path(1).path("partitioned").asBoolean(), list.toString());
        String sel = "{\"selector\":{\"value\":{\"$gte\":6,\"$lt\":16}},\"limit\":100}";
        JsonNode found = s.asAdmin("POST", "/pm/_partition/foo/_find", sel).status(200).json();
        assertEquals(List.of("foo:6", "foo:8", "foo:10", "foo:12", "foo:14"), ids(found));
        JsonNode explain = s.asAdmin("POST", "/pm/_partition/foo/_explain", sel).status(200).json();
        assertEquals("[{\"value\":\"asc\"}]", explain.path("index").path("def").path("fields").toString());
        assertEquals("foo", explain.path("mrargs").path("partition").asText());
        assertEquals("foo", explain.path("opts").path("partition").asText());
        assertTrue(explain.path("partitioned").asBoolean());
        assertEquals(List.of("bar:7", "bar:9", "bar:11", "bar:13", "bar:15"), ids(s.asAdmin("POST", "/pm/_partition/bar/_find", sel)));
        // sorted, limited and paged by bookmark, all within the partition
        String sorted = "{\"selector\":{\"value\":{\"$gt\":0}},\"sort\":[{\"value\":\"desc\"}],\"limit\":3}";
        JsonNode page = s.asAdmin("POST", "/pm/_partition/foo/_find", sorted).status(200).json();
        assertEquals(List.of("foo:100", "foo:98", "foo:96"), ids(page));
        String next = "{\"selector\":{\"value\":{\"$gt\":0}},\"sort\":[{\"value\":\"desc\"}],\"limit\":3,\"bookmark\":\"" + page.path("bookmark").asText() + "\"}";
        assertEquals(List.of("foo:94", "foo:92", "foo:90"), ids(s.asAdmin("POST", "/pm/_partition/foo/_find", next)));
        // the global query cannot use a partitioned index: _all_docs, every partition
        JsonNode global = s.asAdmin("POST", "/pm/_explain", "{\"selector\":{\"value\":{\"$gte\":6,\"$lt\":16}}}").status(200).json();
        assertEquals("_all_docs", global.path("index").path("name").asText());
        assertTrue(global.path("mrargs").path("partition").isNull());
        assertEquals("scope_mismatch", global.path("index_candidates").path(0).path("analysis").path("reasons").path(0).path("name").asText());
        assertEquals(10, ids(s.asAdmin("POST", "/pm/_find", "{\"selector\":{\"value\":{\"$gte\":6,\"$lt\":16}}}")).size());
        // the partition in the body, as well as by the path
        assertEquals(5, ids(s.asAdmin("POST", "/pm/_find", "{\"selector\":{\"value\":{\"$gte\":6,\"$lt\":16}},\"partition\":\"foo\"}")).size());
    }

    @Test
    void globalIndexesServeGlobalQueriesOnly() throws Exception {
        s.asAdmin("POST", "/pmg/_index", "{\"index\":{\"fields\":[\"some\"]},\"partitioned\":false}").status(200);
        String sel = "{\"selector\":{\"some\":\"field\"},\"limit\":100}";
        JsonNode global = s.asAdmin("POST", "/pmg/_explain", sel).status(200).json();
        assertEquals("[{\"some\":\"asc\"}]", global.path("index").path("def").path("fields").toString());
        assertEquals(100, ids(s.asAdmin("POST", "/pmg/_find", sel)).size());
        JsonNode part = s.asAdmin("POST", "/pmg/_partition/foo/_explain", "{\"selector\":{\"some\":\"field\"},\"limit\":50}").status(200).json();
        assertEquals("_all_docs", part.path("index").path("name").asText());
        List<String> foo = ids(s.asAdmin("POST", "/pmg/_partition/foo/_find", "{\"selector\":{\"some\":\"field\"},\"limit\":50}"));
        assertEquals(50, foo.size());
        for (String id : foo) assertTrue(id.startsWith("foo:"), id);
        // _id and partition together (partition_mango_test.exs)
        assertEquals(List.of("foo:2", "foo:4"),
                ids(s.asAdmin("POST", "/pmg/_partition/foo/_find", "{\"selector\":{\"_id\":{\"$gt\":\"foo:\",\"$lt\":\"foo:5\"},\"value\":{\"$lt\":5}}}")));
    }

    @Test
    void sortsWithoutAnIndexSayWhichKindIsMissing() throws Exception {
        String sel = "{\"selector\":{\"some\":\"field\"},\"sort\":[\"some\"],\"limit\":50}";
        s.asAdmin("POST", "/pmp/_partition/foo/_find", sel)
                .error(400, "no_usable_index", "No partitioned index exists for this sort, try indexing by the sort fields.");
        s.asAdmin("POST", "/pmp/_find", sel).error(400, "no_usable_index", "No global index exists for this sort, try indexing by the sort fields.");
        s.asAdmin("POST", "/pmplain/_find", sel).error(400, "no_usable_index", "No index exists for this sort, try indexing by the sort fields.");
    }

    @Test
    void partitionErrors() throws Exception {
        String sel = "{\"selector\":{\"some\":\"field\"}}";
        s.asAdmin("POST", "/pmp/_partition/_find", sel).error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("POST", "/pmp/_partition/_explain", sel).error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("POST", "/pmp/_find", "{\"selector\":{},\"partition\":\"_x\"}").error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("POST", "/pmp/_find", "{\"selector\":{},\"partition\":3}").error(400, "illegal_partition", "Partition must be a string");
        s.asAdmin("POST", "/pmp/_partition/foo/_find", "{\"selector\":{},\"partition\":\"bar\"}")
                .error(400, "bad_request", "Conflicting value for `partition` in query string");
        s.asAdmin("POST", "/pmplain/_find", "{\"selector\":{},\"partition\":\"foo\"}")
                .error(400, "query_parse_error", "`partition` parameter is not supported on this db");
        s.asAdmin("POST", "/pmplain/_partition/foo/_find", sel).error(400, "bad_request", "database is not partitioned");
    }

    @Test
    void indexesNameTheirPartitionedOption() throws Exception {
        // a database that is not partitioned refuses a partitioned index, as its design document (couch_mrview:validate)
        s.asAdmin("POST", "/pmplain/_index", "{\"index\":{\"fields\":[\"x\"]},\"partitioned\":true}")
                .error(400, "invalid_design_doc", "partitioned option cannot be true in a non-partitioned database.");
        s.asAdmin("POST", "/pmplain/_index", "{\"index\":{\"fields\":[\"x\"]},\"partitioned\":\"yes\"}")
                .error(400, "invalid_partitioned_value", null);
        s.asAdmin("POST", "/pmplain/_index", "{\"index\":{\"fields\":[\"x\"]},\"partitioned\":false,\"ddoc\":\"d\"}").status(200);
        // mango_idx:set_ddoc_partitioned: a design document keeps the option it was created with
        s.asAdmin("POST", "/pmp/_index", "{\"index\":{\"fields\":[\"x\"]},\"partitioned\":false,\"ddoc\":\"g\"}").status(200);
        assertEquals(false, s.asAdmin("GET", "/pmp/_design/g", null).status(200).json().path("options").path("partitioned").asBoolean(true));
        s.asAdmin("POST", "/pmp/_index", "{\"index\":{\"fields\":[\"y\"]},\"partitioned\":true,\"ddoc\":\"g\"}")
                .error(400, "invalid_partitioned_option", "Requested partitioned option does not match existing value on design document _design/g");
        s.asAdmin("POST", "/pmp/_index", "{\"index\":{\"fields\":[\"y\"]},\"ddoc\":\"g\"}")
                .error(400, "invalid_partitioned_option", "Requested partitioned option does not match existing value on design document _design/g");
        s.asAdmin("POST", "/pmp/_index", "{\"index\":{\"fields\":[\"y\"]},\"partitioned\":false,\"ddoc\":\"g\"}").status(200);
        JsonNode list = s.asAdmin("GET", "/pmp/_index", null).status(200).json().path("indexes");
        for (JsonNode i : list) if (i.path("ddoc").asText().equals("_design/g")) assertEquals(false, i.path("partitioned").asBoolean(true));
    }

    private static List<String> ids(HttpTestServer.Resp r) {
        List<String> out = new ArrayList<>();
        for (JsonNode d : r.status(200).json().path("docs")) out.add(d.path("_id").asText());
        return out;
    }

    private static List<String> ids(JsonNode body) {
        List<String> out = new ArrayList<>();
        for (JsonNode d : body.path("docs")) out.add(d.path("_id").asText());
        return out;
    }
}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Partitioned design documents and views (issue 29), as CouchDB 3.5.0 answers them
 * ({@code couch_mrview:validate}, {@code couch_mrview_util:validate_args}; the cases of
 * {@code partition_view_test.exs} and {@code partition_ddoc_test.exs}).
 */
class PartitionedViewsTest {
    static HttpTestServer s;

    static final String MAP_VALUE = "function(doc) { if (doc.some) { emit(doc.value, doc.some); } }";
    static final String MAP_GROUP = "function(doc) { if (doc.group) { emit([doc.some, doc.group], 1); } }";

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/pv?partitioned=true", null).status(201);
        s.asAdmin("PUT", "/plainv", null).status(201);
        PartitionedDatabaseTest.createPartitionDocs(s, "pv");
        String ddocs = "{\"docs\":["
                + ddoc("map", MAP_VALUE, null, null) + ","
                + ddoc("map_some", MAP_GROUP, null, null) + ","
                + ddoc("partitioned_true", MAP_VALUE, null, "{\"partitioned\":true}") + ","
                + ddoc("partitioned_false", MAP_VALUE, null, "{\"partitioned\":false}") + ","
                + ddoc("reduce", MAP_GROUP, "_count", null) + ","
                + ddoc("include_ddocs", MAP_VALUE, null, "{\"include_design\":true}") + "]}";
        s.asAdmin("POST", "/pv/_bulk_docs", ddocs).status(201);
    }

    private static String ddoc(String name, String map, String reduce, String options) {
        return "{\"_id\":\"_design/" + name + "\",\"views\":{\"some\":{\"map\":\"" + map + "\"" + (reduce == null ? "" : ",\"reduce\":\"" + reduce + "\"")
                + "}}" + (options == null ? "" : ",\"options\":" + options) + "}";
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void partitionQueriesKeepToThePartition() throws Exception {
        for (String d : new String[] {"map", "partitioned_true"}) {
            List<String> foo = ids(s.asAdmin("GET", "/pv/_partition/foo/_design/" + d + "/_view/some", null));
            assertEquals(50, foo.size());
            for (String id : foo) assertEquals("foo", id.substring(0, id.indexOf(':')));
            assertEquals(50, ids(s.asAdmin("GET", "/pv/_partition/bar/_design/" + d + "/_view/some", null)).size());
        }
        // the same through ?partition= on the design document's own route
        assertEquals(50, ids(s.asAdmin("GET", "/pv/_design/map/_view/some?partition=foo", null)).size());
        // a start key from another key space finds nothing, as in CouchDB
        assertEquals(List.of(), ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?start_key=%22foo:12%22", null)));
        assertEquals(5, ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?start_key=12&end_key=20", null)).size());
        assertEquals(List.of("foo:2", "foo:4", "foo:6"),
                ids(s.asAdmin("POST", "/pv/_partition/foo/_design/map/_view/some", "{\"keys\":[2,4,6]}")));
        assertEquals(List.of("foo:2", "foo:4", "foo:6"), ids(s.asAdmin("POST", "/pv/_design/partitioned_false/_view/some", "{\"keys\":[2,4,6]}")));
        assertEquals(List.of("foo:100", "foo:98", "foo:96", "foo:94", "foo:92"),
                ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?descending=true&limit=5", null)));
        assertEquals(List.of("foo:2", "foo:4", "foo:6", "foo:8", "foo:10"),
                ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?limit=5", null)));
        assertEquals(List.of("foo:12", "foo:14", "foo:16", "foo:18", "foo:20"),
                ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?skip=5&limit=5", null)));
        assertEquals(List.of("foo:22"), ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?key=22", null)));
        assertEquals(List.of("foo:12", "foo:18", "foo:24", "foo:30"), ids(s.asAdmin("GET", "/pv/_partition/foo/_design/map_some/_view/some"
                + "?startkey=%5B%22field%22,%22one%22%5D&endkey=%5B%22field%22,%22one%22%5D&startkey_docid=foo:12&endkey_docid=foo:30", null)));
        // the emitted keys and values come back as emitted
        JsonNode row = s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?limit=1", null).status(200).json().path("rows").path(0);
        assertEquals("{\"id\":\"foo:2\",\"key\":2,\"value\":\"field\"}", row.toString());
        // a design document with include_design still has no row for design documents: they are in no partition
        assertEquals(50, ids(s.asAdmin("GET", "/pv/_partition/foo/_design/include_ddocs/_view/some", null)).size());
        // a global view of a partitioned database has every partition
        assertEquals(100, ids(s.asAdmin("GET", "/pv/_design/partitioned_false/_view/some", null)).size());
    }

    @Test
    void reduceAndGroupLevelWorkWithinThePartition() throws Exception {
        String url = "/pv/_partition/foo/_design/reduce/_view/some";
        assertEquals("[{\"key\":[\"field\"],\"value\":50}]", rows(s.asAdmin("GET", url + "?reduce=true&group_level=1", null)));
        assertEquals("[{\"key\":[\"field\",\"one\"],\"value\":16},{\"key\":[\"field\",\"two\"],\"value\":34}]",
                rows(s.asAdmin("GET", url + "?reduce=true&group_level=2", null)));
        assertEquals("[{\"key\":[\"field\",\"one\"],\"value\":16},{\"key\":[\"field\",\"two\"],\"value\":34}]",
                rows(s.asAdmin("GET", url + "?group=true", null)));
        assertEquals("[{\"key\":null,\"value\":50}]", rows(s.asAdmin("GET", url, null)));
        // bar: the odd values, 17 of them multiples of three
        assertEquals("[{\"key\":null,\"value\":17}]", rows(s.asAdmin("GET",
                "/pv/_partition/bar/_design/reduce/_view/some?startkey=%5B%22field%22,%22one%22%5D&endkey=%5B%22field%22,%22one%22%5D", null)));
        assertEquals("[{\"key\":[\"field\",\"one\"],\"value\":16}]",
                rows(s.asAdmin("POST", url + "?group=true", "{\"keys\":[[\"field\",\"one\"]]}")));
        assertEquals("[{\"key\":[\"field\",\"two\"],\"value\":34},{\"key\":[\"field\",\"one\"],\"value\":16}]",
                rows(s.asAdmin("GET", url + "?group=true&descending=true", null)));
    }

    @Test
    void partitionedAndGlobalViewsRefuseTheOtherKindOfQuery() throws Exception {
        s.asAdmin("GET", "/pv/_design/map/_view/some", null)
                .error(400, "query_parse_error", "`partition` parameter is mandatory for queries to this view.");
        s.asAdmin("GET", "/pv/_partition/foo/_design/partitioned_false/_view/some", null)
                .error(400, "query_parse_error", "`partition` parameter is not supported in this design doc");
        s.asAdmin("GET", "/pv/_partition/_bar/_design/map/_view/some", null).error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("GET", "/pv/_partition//_design/map/_view/some", null).status(400);
        s.asAdmin("GET", "/pv/_partition/foo/_design/map/_view/some?partition=bar", null)
                .error(400, "bad_request", "Conflicting value for `partition` in query string");
        s.asAdmin("GET", "/pv/_design/map/_view/some?partition=_x", null).error(400, "illegal_partition", "Partition must not start with an underscore");
        // a database that is not partitioned: its views take no partition
        s.asAdmin("PUT", "/plainv/_design/v", "{\"views\":{\"v\":{\"map\":\"function(d){emit(1)}\"}}}").status(201);
        s.asAdmin("GET", "/plainv/_design/v/_view/v?partition=foo", null)
                .error(400, "query_parse_error", "`partition` parameter is not supported in this design doc");
    }

    @Test
    void designDocumentsSayWhetherTheyArePartitioned() throws Exception {
        // couch_mrview:validate
        s.asAdmin("PUT", "/plainv/_design/p", "{\"options\":{\"partitioned\":true},\"views\":{\"v\":{\"map\":\"function(d){emit(1)}\"}}}")
                .error(400, "invalid_design_doc", "partitioned option cannot be true in a non-partitioned database.");
        s.asAdmin("PUT", "/plainv/_design/f", "{\"options\":{\"partitioned\":false},\"views\":{\"v\":{\"map\":\"function(d){emit(1)}\"}}}").status(201);
        s.asAdmin("PUT", "/pv/_design/bad", "{\"options\":{\"partitioned\":\"yes\"},\"views\":{}}")
                .error(400, "invalid_design_doc", "`options.partitioned` field must have boolean type");
        // a design document is global in a partitioned database, and a view follows edits to its partition's documents
        s.asAdmin("PUT", "/pv/_design/later", "{\"views\":{\"v\":{\"map\":\"function(d){ if (d.n) emit(d.n, d.n) }\",\"reduce\":\"_sum\"}}}").status(201);
        String rev = s.asAdmin("PUT", "/pv/zz:1", "{\"n\":5}").status(201).json().path("rev").asText();
        s.asAdmin("PUT", "/pv/yy:1", "{\"n\":7}").status(201);
        assertEquals("[{\"key\":null,\"value\":5}]", rows(s.asAdmin("GET", "/pv/_partition/zz/_design/later/_view/v", null)));
        s.asAdmin("DELETE", "/pv/zz:1?rev=" + rev, null).status(200);
        assertEquals("[]", rows(s.asAdmin("GET", "/pv/_partition/zz/_design/later/_view/v", null)));
        assertEquals("[{\"key\":null,\"value\":7}]", rows(s.asAdmin("GET", "/pv/_partition/yy/_design/later/_view/v", null)));
    }

    @Test
    void queryLimitsHoldPartitionAndGlobalQueries() throws Exception {
        // couch_mrview_util:apply_limit, through the config API (partition_all_docs_test.exs, partition_view_test.exs)
        s.asAdmin("PUT", "/_node/_local/_config/query_server_config/partition_query_limit", "\"20\"").status(200);
        try {
            String view = "/pv/_partition/foo/_design/map/_view/some";
            assertEquals(20, ids(s.asAdmin("GET", view, null)).size());
            assertEquals(10, ids(s.asAdmin("GET", view + "?limit=10", null)).size());
            assertEquals(20, ids(s.asAdmin("GET", view + "?limit=20", null)).size());
            s.asAdmin("GET", view + "?limit=21", null).error(400, "query_parse_error", "Limit is too large, must not exceed 20");
            assertEquals(5, ids(s.asAdmin("GET", view + "?limit=20&skip=45", null)).size());
            assertEquals(20, ids(s.asAdmin("GET", "/pv/_partition/foo/_all_docs", null)).size());
            s.asAdmin("GET", "/pv/_partition/foo/_all_docs?limit=21", null).error(400, "query_parse_error", "Limit is too large, must not exceed 20");
            // global queries are held to query_limit, not this
            assertEquals(100, ids(s.asAdmin("GET", "/pv/_design/partitioned_false/_view/some", null)).size());
            s.asAdmin("PUT", "/_node/_local/_config/query_server_config/query_limit", "\"30\"").status(200);
            assertEquals(30, ids(s.asAdmin("GET", "/pv/_design/partitioned_false/_view/some", null)).size());
            assertEquals(30, s.asAdmin("GET", "/pv/_all_docs", null).status(200).json().path("rows").size());
            s.asAdmin("GET", "/pv/_all_docs?limit=31", null).error(400, "query_parse_error", "Limit is too large, must not exceed 30");
        } finally {
            s.asAdmin("DELETE", "/_node/_local/_config/query_server_config/partition_query_limit", null);
            s.asAdmin("DELETE", "/_node/_local/_config/query_server_config/query_limit", null);
        }
    }

    private static List<String> ids(HttpTestServer.Resp r) {
        List<String> out = new ArrayList<>();
        for (JsonNode row : r.status(200).json().path("rows")) out.add(row.path("id").asText());
        return out;
    }

    private static String rows(HttpTestServer.Resp r) {
        return r.status(200).json().path("rows").toString();
    }

    /** A partitioned view with {@code options.collation: "raw"}: the partition first, then Erlang term order within it. */
    @Test
    void rawCollationWithinAPartition() throws Exception {
        s.asAdmin("PUT", "/pvraw?partitioned=true", null).status(201);
        s.asAdmin("POST", "/pvraw/_bulk_docs", "{\"docs\":[{\"_id\":\"a:1\",\"k\":\"b\"},{\"_id\":\"a:2\",\"k\":\"B\"},"
                + "{\"_id\":\"a:3\",\"k\":\"a\"},{\"_id\":\"z:1\",\"k\":\"A\"},"
                + "{\"_id\":\"_design/raw\",\"views\":{\"v\":{\"map\":\"function(doc){emit(doc.k, null);}\",\"reduce\":\"_count\",\"options\":{\"collation\":\"raw\"}}}}]}").status(201);
        // raw: bytes order, so uppercase first ("B" < "a" < "b"); ICU would give a, b, B
        assertEquals(List.of("a:2", "a:3", "a:1"), ids(s.asAdmin("GET", "/pvraw/_partition/a/_design/raw/_view/v?reduce=false", null)));
        assertEquals(List.of("a:1", "a:3", "a:2"), ids(s.asAdmin("GET", "/pvraw/_partition/a/_design/raw/_view/v?reduce=false&descending=true", null)));
        assertEquals(List.of("a:3", "a:1"), ids(s.asAdmin("GET", "/pvraw/_partition/a/_design/raw/_view/v?reduce=false&start_key=%22a%22", null)));
        assertEquals(List.of("a:1"), ids(s.asAdmin("GET", "/pvraw/_partition/a/_design/raw/_view/v?reduce=false&key=%22b%22", null)));
        assertEquals(2, s.asAdmin("GET", "/pvraw/_partition/a/_design/raw/_view/v?start_key=%22a%22", null).status(200).json().path("rows").get(0).path("value").asInt());
        assertEquals(List.of("z:1"), ids(s.asAdmin("GET", "/pvraw/_partition/z/_design/raw/_view/v?reduce=false", null)));
    }

}

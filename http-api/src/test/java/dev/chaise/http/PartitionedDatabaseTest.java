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
 * Partitioned databases (issue 29): creation, {@code partition:docid} ids on every write path,
 * {@code /{db}/_partition/{p}} and its {@code _all_docs}, each pinned to CouchDB 3.5.0's status,
 * error and body ({@code couch_partition.erl}, {@code chttpd_db:handle_partition_req},
 * {@code couch_mrview_util:apply_all_docs_partition}; the cases of {@code partition_crud_test.exs},
 * {@code partition_size_test.exs} and {@code partition_all_docs_test.exs}).
 */
class PartitionedDatabaseTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/pdb?partitioned=true", null).status(201);
        s.asAdmin("PUT", "/plain", null).status(201);
        createPartitionDocs(s, "pdb");
    }

    /** partition_helpers.exs's documents: values 1 to 100, even ones in partition foo, odd ones in bar. */
    static void createPartitionDocs(HttpTestServer s, String db) throws Exception {
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 1; i <= 100; i++) {
            if (i > 1) docs.append(',');
            docs.append("{\"_id\":\"").append(i % 2 == 0 ? "foo:" : "bar:").append(i).append("\",\"value\":").append(i)
                    .append(",\"some\":\"field\",\"group\":\"").append(i % 3 == 0 ? "one" : "two").append("\"}");
        }
        s.asAdmin("POST", "/" + db + "/_bulk_docs", docs.append("]}").toString()).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void createdPartitionedItSaysSoForEver() throws Exception {
        assertEquals("{\"partitioned\":true}", s.asAdmin("GET", "/pdb", null).status(200).json().path("props").toString());
        assertEquals("{}", s.asAdmin("GET", "/plain", null).status(200).json().path("props").toString());
        s.asAdmin("PUT", "/notp?partitioned=false", null).status(201);
        assertEquals("{}", s.asAdmin("GET", "/notp", null).status(200).json().path("props").toString());
        // chttpd_db:parse_partitioned_opt
        s.asAdmin("PUT", "/bad-db?partitioned=tru", null).error(400, "bad_request", "Invalid `partitioned` parameter");
        s.asAdmin("GET", "/bad-db", null).status(404);
        // couch_partition:validate_dbname: system databases, and names ending in /_users or /_replicator
        s.asAdmin("PUT", "/_replicator?partitioned=true", null).error(400, "bad_request", "Cannot partition a system database");
        s.asAdmin("PUT", "/acme%2F_users?partitioned=true", null).error(400, "bad_request", "Cannot partition a system database");
        s.asAdmin("PUT", "/acme%2F_replicator?partitioned=true", null).error(400, "bad_request", "Cannot partition a system database");
        s.asAdmin("PUT", "/acme%2Fusers?partitioned=true", null).status(201);
        assertTrue(s.get("/").status(200).json().path("features").toString().contains("\"partitioned\""));
    }

    @Test
    void documentIdsNeedAPartition() throws Exception {
        JsonNode ok = s.asAdmin("PUT", "/pdb/my-partition:doc", "{\"partitioned_doc\":true}").status(201).json();
        assertEquals("my-partition:doc", ok.path("id").asText());
        assertEquals("my-partition:doc", s.asAdmin("GET", "/pdb/my-partition:doc", null).status(200).json().path("_id").asText());
        // couch_doc:validate_docid on the whole id first, then couch_partition:validate_docid
        s.asAdmin("PUT", "/pdb/not-partitioned", "{}").error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("PUT", "/pdb/_bad:partitioned", "{}").error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("PUT", "/pdb/bad:", "{}").error(400, "illegal_docid", "Document id must not be empty");
        s.asAdmin("PUT", "/pdb/:nopart", "{}").error(400, "illegal_partition", "Partition must not be empty");
        s.asAdmin("PUT", "/pdb/p:_under", "{}").error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("PUT", "/pdb/p:a:b", "{}").status(201); // split at the first colon
        // design and local documents are global
        s.asAdmin("PUT", "/pdb/_design/global", "{}").status(201);
        s.asAdmin("PUT", "/pdb/_local/global", "{}").status(201);
        // a non-partitioned database keeps its ids as they are
        s.asAdmin("PUT", "/plain/no-colon", "{}").status(201);
        // routing a read needs the partition too (couch_partition:hash)
        s.asAdmin("GET", "/pdb/no-colon", null).error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("DELETE", "/pdb/no-colon?rev=1-abc", null).error(400, "illegal_docid", "Doc id must be of form partition:id");
    }

    @Test
    void postRefusesAGeneratedId() throws Exception {
        s.asAdmin("POST", "/pdb", "{\"_id\":\"my-partition-post:doc\",\"partitioned_doc\":true}").status(201);
        s.asAdmin("POST", "/pdb", "{\"_id\":\"not-partitioned-post\"}").error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("POST", "/pdb", "{\"no\":\"id\"}").error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("POST", "/plain", "{\"no\":\"id\"}").status(201);
    }

    @Test
    void bulkDocsRefusesTheWholeRequest() throws Exception {
        s.asAdmin("POST", "/pdb/_bulk_docs", "{\"docs\":[{\"_id\":\"bd1:1\"},{\"_id\":\"bd2:1\"}]}").status(201);
        s.asAdmin("GET", "/pdb/bd1:1", null).status(200);
        s.asAdmin("POST", "/pdb/_bulk_docs", "{\"docs\":[{\"_id\":\"foo1\"}]}").error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("POST", "/pdb/_bulk_docs", "{\"docs\":[{\"_id\":\"_foo:1\"}]}")
                .error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("POST", "/pdb/_bulk_docs", "{\"docs\":[{\"_id\":\"foo:\"}]}").error(400, "illegal_docid", "Document id must not be empty");
        s.asAdmin("POST", "/pdb/_bulk_docs", "{\"docs\":[{\"a\":1}]}").error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("POST", "/pdb/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"nopart\",\"_rev\":\"1-abc\"}]}")
                .error(400, "illegal_docid", "Doc id must be of form partition:id");
    }

    @Test
    void bulkGetAnswersEachId() throws Exception {
        s.asAdmin("PUT", "/pdb/bg:doc", "{\"partitioned_doc\":true}").status(201);
        JsonNode r = s.asAdmin("POST", "/pdb/_bulk_get", "{\"docs\":[{\"id\":\"bg:doc\"},{\"id\":\"my-partition-post\"}]}").status(200).json();
        assertEquals("bg:doc", r.path("results").path(0).path("docs").path(0).path("ok").path("_id").asText());
        assertEquals("{\"error\":\"illegal_docid\",\"id\":\"my-partition-post\",\"reason\":\"Doc id must be of form partition:id\",\"rev\":null}",
                sorted(r.path("results").path(1).path("docs").path(0).path("error")));
    }

    @Test
    void copyAndAttachmentsCheckTheId() throws Exception {
        s.asAdmin("PUT", "/pdb/cp:src", "{\"a\":1}").status(201);
        s.send("COPY", "/pdb/cp:src", null, "Authorization", HttpTestServer.ADMIN, "Destination", "nocolon")
                .error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.send("COPY", "/pdb/cp:src", null, "Authorization", HttpTestServer.ADMIN, "Destination", "cp:dst").status(201);
        s.send("COPY", "/pdb/nocolon", null, "Authorization", HttpTestServer.ADMIN, "Destination", "cp:dst2")
                .error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.send("PUT", "/pdb/nocolon/a.txt", "x", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain")
                .error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.send("PUT", "/pdb/att:doc/a.txt", "x", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain").status(201);
        s.asAdmin("GET", "/pdb/att:doc/a.txt", null).status(200);
        s.asAdmin("GET", "/pdb/nocolon/a.txt", null).error(400, "illegal_docid", "Doc id must be of form partition:id");
        s.asAdmin("DELETE", "/pdb/nocolon/a.txt?rev=1-abc", null).error(400, "illegal_docid", "Doc id must be of form partition:id");
    }

    @Test
    void purgeNeedsPartitionedIdsAndCountsDown() throws Exception {
        s.asAdmin("POST", "/pdb/_purge", "{\"no_partition\":[\"1-967a00dff5e02add41819138abb3284d\"]}")
                .error(400, "illegal_docid", "Doc id must be of form partition:id");
        String rev = s.asAdmin("POST", "/pdb", "{\"_id\":\"pg:bar\",\"value\":\"some value\"}").status(201).json().path("rev").asText();
        assertEquals(1, s.asAdmin("GET", "/pdb/_partition/pg", null).status(200).json().path("doc_count").asLong());
        s.asAdmin("POST", "/pdb/_purge", "{\"pg:bar\":[\"" + rev + "\"]}").status(201);
        s.asAdmin("GET", "/pdb/pg:bar", null).error(404, "not_found", "missing");
        JsonNode info = s.asAdmin("GET", "/pdb/_partition/pg", null).status(200).json();
        assertEquals(0, info.path("doc_count").asLong());
        assertEquals(0, info.path("sizes").path("external").asLong());
        assertEquals(0, info.path("sizes").path("active").asLong());
    }

    @Test
    void partitionInfoFollowsEveryWrite() throws Exception {
        // fabric_db_partition_info's member order; a partition never written is all zeros
        assertEquals("{\"db_name\":\"pdb\",\"sizes\":{\"active\":0,\"external\":0},\"partition\":\"none\",\"doc_count\":0,\"doc_del_count\":0}",
                s.asAdmin("GET", "/pdb/_partition/none", null).status(200).text().strip());
        String rev1 = s.asAdmin("PUT", "/pdb/sz:bar", "{\"val\":42}").status(201).json().path("rev").asText();
        JsonNode one = s.asAdmin("GET", "/pdb/_partition/sz", null).status(200).json();
        assertEquals(1, one.path("doc_count").asLong());
        assertTrue(one.path("sizes").path("external").asLong() > 0);
        assertTrue(one.path("sizes").path("active").asLong() > 0);
        s.asAdmin("PUT", "/pdb/sz:baz", "{\"val\":24}").status(201);
        JsonNode two = s.asAdmin("GET", "/pdb/_partition/sz", null).status(200).json();
        assertEquals(2, two.path("doc_count").asLong());
        assertTrue(two.path("sizes").path("external").asLong() > one.path("sizes").path("external").asLong());
        String rev2 = s.asAdmin("PUT", "/pdb/sz:bar?rev=" + rev1, "{\"val\":\"a much longer value than before\"}").status(201).json().path("rev").asText();
        JsonNode grown = s.asAdmin("GET", "/pdb/_partition/sz", null).status(200).json();
        assertTrue(grown.path("sizes").path("external").asLong() > two.path("sizes").path("external").asLong());
        s.asAdmin("DELETE", "/pdb/sz:bar?rev=" + rev2, null).status(200);
        JsonNode del = s.asAdmin("GET", "/pdb/_partition/sz", null).status(200).json();
        assertEquals(1, del.path("doc_count").asLong());
        assertEquals(1, del.path("doc_del_count").asLong());
        assertTrue(del.path("sizes").path("external").asLong() < grown.path("sizes").path("external").asLong());
        // the database's counters hold every partition's, and design documents in none
        JsonNode foo = s.asAdmin("GET", "/pdb/_partition/foo", null).status(200).json();
        assertEquals(50, foo.path("doc_count").asLong());
    }

    @Test
    void partitionRequestsAnswerCouchDbsErrors() throws Exception {
        s.asAdmin("GET", "/pdb/_partition", null).error(400, "bad_request", "invalid_partition_req");
        s.asAdmin("GET", "/plain/_partition/foo", null).error(400, "bad_request", "database is not partitioned");
        s.asAdmin("GET", "/plain/_partition/foo/_all_docs", null).error(400, "bad_request", "database is not partitioned");
        s.asAdmin("GET", "/pdb/_partition/_bar", null).error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("POST", "/pdb/_partition/_bar", "{}").error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("POST", "/pdb/_partition/foo", "{}").error(405, "method_not_allowed", "Only GET allowed");
        s.asAdmin("GET", "/pdb/_partition/_bar/_all_docs", null).error(400, "illegal_partition", "Partition must not start with an underscore");
        s.asAdmin("GET", "/pdb/_partition//_all_docs", null).status(400);
        s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?partition=bar", null)
                .error(400, "bad_request", "Conflicting value for `partition` in query string");
        s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?partition=foo", null).status(200);
        s.asAdmin("GET", "/pdb/_partition/foo/foo:2", null).error(404, "not_found", "missing");
        s.asAdmin("GET", "/pdb/_partition/foo/_changes", null).error(404, "not_found", "missing");
        s.get("/pdb/_partition/foo").error(401, "unauthorized", null);
        s.asAdmin("GET", "/nodb/_partition/foo", null).error(404, "not_found", "Database does not exist.");
        s.asAdmin("GET", "/plain/_all_docs?partition=foo", null).error(400, "query_parse_error", "`partition` parameter is not supported on this db");
    }

    @Test
    void allDocsKeepsToThePartition() throws Exception {
        JsonNode all = s.asAdmin("GET", "/pdb/_partition/foo/_all_docs", null).status(200).json();
        assertEquals(50, all.path("rows").size());
        for (JsonNode row : all.path("rows")) assertTrue(row.path("id").asText().startsWith("foo:"));
        assertEquals(List.of("foo:10", "foo:100", "foo:12", "foo:14", "foo:16"), ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?limit=5", null)));
        assertEquals(List.of("foo:98", "foo:96", "foo:94", "foo:92", "foo:90"),
                ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?descending=true&limit=5", null)));
        assertEquals(List.of("foo:18", "foo:2", "foo:20", "foo:22", "foo:24"),
                ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?skip=5&limit=5", null)));
        assertEquals(List.of("foo:22"), ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?key=%22foo:22%22", null)));
        assertEquals(5, ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?start_key=%22foo:12%22&end_key=%22foo:2%22", null)).size());
        // a range reaching past the partition is clamped to it, both ways
        assertEquals(50, ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?start_key=%22a%22&end_key=%22z%22", null)).size());
        assertEquals(50, ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?descending=true&start_key=%22z%22&end_key=%22a%22", null)).size());
        assertEquals(List.of(), ids(s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?start_key=%22goo%22", null)));
        assertEquals(List.of("bar:1", "bar:11"), ids(s.asAdmin("GET", "/pdb/_partition/bar/_all_docs?limit=2", null)));
        // POST, with keys: looked up as given (fabric_view_all_docs does not filter keys by partition)
        assertEquals(List.of("foo:2", "foo:4", "foo:6"),
                ids(s.asAdmin("POST", "/pdb/_partition/foo/_all_docs", "{\"keys\":[\"foo:2\",\"foo:4\",\"foo:6\"]}")));
        assertEquals(List.of("foo:10", "foo:100"), ids(s.asAdmin("POST", "/pdb/_partition/foo/_all_docs", "{\"limit\":2}")));
        JsonNode withDocs = s.asAdmin("GET", "/pdb/_partition/foo/_all_docs?include_docs=true&limit=1", null).status(200).json();
        assertEquals(10, withDocs.path("rows").path(0).path("doc").path("value").asInt());
        // the same partition through ?partition= on the database's own _all_docs
        assertEquals(50, ids(s.asAdmin("GET", "/pdb/_all_docs?partition=foo", null)).size());
        s.asAdmin("GET", "/pdb/_all_docs?partition=", null).error(400, "illegal_partition", "Partition must not be empty");
    }

    private static List<String> ids(HttpTestServer.Resp r) {
        List<String> out = new ArrayList<>();
        for (JsonNode row : r.status(200).json().path("rows")) out.add(row.path("id").asText());
        return out;
    }

    private static String sorted(JsonNode n) throws Exception {
        var m = new java.util.TreeMap<String, JsonNode>();
        n.properties().forEach(e -> m.put(e.getKey(), e.getValue()));
        return dev.chaise.storage.json.Json.MAPPER.writeValueAsString(m);
    }
}

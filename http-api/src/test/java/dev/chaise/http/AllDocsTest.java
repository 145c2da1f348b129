package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code _all_docs}, {@code _design_docs}, {@code _local_docs}. */
class AllDocsTest {
    static HttpTestServer s;
    static final Map<String, String> revs = new LinkedHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/a", null).status(201);
        for (String id : List.of("c", "a", "b", "d", "_design/v", "_design/u")) {
            revs.put(id, s.asAdmin("PUT", "/a/" + id, "{\"n\":\"" + id + "\"}").status(201).json().get("rev").asText());
        }
        String rd = revs.get("d");
        s.asAdmin("DELETE", "/a/d?rev=" + rd, null).status(200);
        revs.put("d", s.send("GET", "/a/d?open_revs=all", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json")
                .json().get(0).get("ok").get("_rev").asText());
        s.asAdmin("PUT", "/a/_local/l1", "{\"x\":1}").status(201);
        s.asAdmin("PUT", "/a/_local/l2", "{\"x\":2}").status(201);
        s.asAdmin("PUT", "/e", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static JsonNode get(String q) throws Exception {
        return s.asAdmin("GET", "/a/" + q, null).status(200).json();
    }

    static List<String> ids(JsonNode listing) {
        List<String> out = new ArrayList<>();
        listing.get("rows").forEach(r -> out.add(r.path("id").asText(r.path("key").asText())));
        return out;
    }

    static String row(String id) {
        return "{\"id\":\"" + id + "\",\"key\":\"" + id + "\",\"value\":{\"rev\":\"" + revs.get(id) + "\"}}";
    }

    @Test
    void exactBodyStreamedChunked() throws Exception {
        var r = s.asAdmin("GET", "/a/_all_docs", null).status(200);
        assertEquals("{\"total_rows\":5,\"rows\":[\r\n" + row("_design/u") + ",\r\n" + row("_design/v") + ",\r\n" + row("a") + ",\r\n"
                + row("b") + ",\r\n" + row("c") + "\r\n]}", r.text());
        assertEquals("chunked", r.header("Transfer-Encoding"));
        assertEquals("{\"total_rows\":0,\"rows\":[\r\n\r\n]}", s.asAdmin("GET", "/e/_all_docs", null).text());
        JsonNode seq = get("_all_docs?update_seq=true&limit=0");
        assertTrue(seq.get("update_seq").asText().matches("[0-9a-f]{26}"), seq.toString());
        assertEquals("[\"total_rows\",\"update_seq\",\"rows\"]", fieldNames(seq));
    }

    static String fieldNames(JsonNode n) {
        List<String> f = new ArrayList<>();
        n.fieldNames().forEachRemaining(x -> f.add("\"" + x + "\""));
        return f.toString().replace(", ", ",");
    }

    @Test
    void ranges() throws Exception {
        assertEquals(List.of("b", "c"), ids(get("_all_docs?startkey=%22b%22")));
        assertEquals(List.of("b", "c"), ids(get("_all_docs?start_key=%22b%22")));
        assertEquals(List.of("_design/u", "_design/v", "a"), ids(get("_all_docs?endkey=%22a%22")));
        assertEquals(List.of("_design/u", "_design/v"), ids(get("_all_docs?endkey=%22a%22&inclusive_end=false")));
        assertEquals(List.of("c", "b", "a"), ids(get("_all_docs?descending=true&endkey=%22a%22")));
        assertEquals(List.of("b", "a"), ids(get("_all_docs?descending=true&startkey=%22b%22&endkey=%22a%22")));
        assertEquals(List.of("b"), ids(get("_all_docs?descending=true&startkey=%22b%22&endkey=%22a%22&inclusive_end=false")));
        assertEquals(List.of("a", "b"), ids(get("_all_docs?skip=2&limit=2")));
        assertEquals(List.of(), ids(get("_all_docs?limit=0")));
        assertEquals(List.of(), ids(get("_all_docs?skip=99")));
        assertEquals(List.of("b"), ids(get("_all_docs?key=%22b%22")));
        assertEquals(List.of(), ids(get("_all_docs?key=%22d%22")), "deleted documents are not in ranges");
        assertEquals(List.of("b", "c"), ids(get("_all_docs?startkey_docid=b")), "startkey_docid stands in for startkey");
        assertEquals(List.of(), ids(get("_all_docs?startkey=%22c%22&endkey=%22a%22")), "a reversed range is empty, not an error");
        // non-string keys sort before every id
        assertEquals(5, ids(get("_all_docs?startkey=1")).size());
        assertEquals(List.of(), ids(get("_all_docs?endkey=%5B%5D")));
        assertEquals(5, ids(get("_all_docs?descending=true&endkey=null")).size());
        assertEquals(List.of(), ids(get("_all_docs?descending=true&startkey=%7B%7D")));
        assertEquals(5, get("_all_docs?limit=1").get("total_rows").asInt(), "total_rows counts every live document");
    }

    @Test
    void includeDocsAndConflicts() throws Exception {
        JsonNode r = get("_all_docs?include_docs=true&key=%22a%22");
        assertEquals("{\"id\":\"a\",\"key\":\"a\",\"value\":{\"rev\":\"" + revs.get("a") + "\"},\"doc\":{\"_id\":\"a\",\"_rev\":\"" + revs.get("a")
                + "\",\"n\":\"a\"}}", r.get("rows").get(0).toString());
        s.asAdmin("PUT", "/a/conf?new_edits=false", "{\"_rev\":\"1-11111111111111111111111111111111\"}").status(201);
        s.asAdmin("PUT", "/a/conf?new_edits=false", "{\"_rev\":\"1-22222222222222222222222222222222\"}").status(201);
        JsonNode c = get("_all_docs?include_docs=true&conflicts=true&key=%22conf%22").get("rows").get(0).get("doc");
        assertEquals("{\"_id\":\"conf\",\"_rev\":\"1-22222222222222222222222222222222\",\"_conflicts\":[\"1-11111111111111111111111111111111\"]}", c.toString());
        s.asAdmin("DELETE", "/a/conf?rev=1-22222222222222222222222222222222", null).status(200);
        s.asAdmin("DELETE", "/a/conf?rev=1-11111111111111111111111111111111", null).status(200);
    }

    @Test
    void keys() throws Exception {
        var post = s.asAdmin("POST", "/a/_all_docs", "{\"keys\":[\"b\",\"nope\",\"d\",\"a\",1,\"_local/l1\"]}").status(200);
        assertEquals("{\"total_rows\":5,\"rows\":[\r\n" + row("b") + ",\r\n{\"key\":\"nope\",\"error\":\"not_found\"},\r\n"
                + "{\"id\":\"d\",\"key\":\"d\",\"value\":{\"rev\":\"" + revs.get("d") + "\",\"deleted\":true}},\r\n" + row("a")
                + ",\r\n{\"key\":1,\"error\":\"not_found\"},\r\n{\"id\":\"_local/l1\",\"key\":\"_local/l1\",\"value\":{\"rev\":\"0-1\"}}\r\n]}", post.text());
        JsonNode docs = s.asAdmin("POST", "/a/_all_docs?include_docs=true", "{\"keys\":[\"d\",\"b\"]}").json();
        assertEquals("null", docs.get("rows").get(0).get("doc").toString(), "a deleted document's doc is null");
        assertEquals("b", docs.get("rows").get(1).get("doc").get("n").asText());
        assertEquals(List.of("d", "b"), ids(get("_all_docs?keys=%5B%22b%22,%22d%22%5D&descending=true")), "keys reverse with descending");
        assertEquals(List.of("d"), ids(get("_all_docs?keys=%5B%22a%22,%22d%22,%22b%22%5D&skip=1&limit=1")));
        // body parameters, with the query string winning
        assertEquals(List.of("b"), ids(s.asAdmin("POST", "/a/_all_docs", "{\"keys\":[\"b\",\"c\"],\"limit\":1}").json()));
        assertEquals(List.of("b", "c"), ids(s.asAdmin("POST", "/a/_all_docs?limit=5", "{\"keys\":[\"b\",\"c\"],\"limit\":1}").json()));
        assertEquals(List.of("b", "c"), ids(s.asAdmin("POST", "/a/_all_docs", "{\"startkey\":\"b\",\"endkey\":\"c\"}").json()), "POST without keys is a range");
        assertEquals(List.of(), ids(s.asAdmin("POST", "/a/_all_docs", "{\"keys\":[]}").json()));
    }

    @Test
    void parameterErrors() throws Exception {
        s.asAdmin("GET", "/a/_all_docs?limit=x", null).error(400, "query_parse_error", "Invalid value for integer: \"x\"");
        s.asAdmin("GET", "/a/_all_docs?limit=-1", null).error(400, "query_parse_error", "Invalid value for positive integer: \"-1\"");
        s.asAdmin("GET", "/a/_all_docs?skip=-1", null).error(400, "query_parse_error", "Invalid value for positive integer: \"-1\"");
        s.asAdmin("GET", "/a/_all_docs?descending=yes", null).error(400, "query_parse_error", "Invalid boolean parameter: \"yes\"");
        s.asAdmin("GET", "/a/_all_docs?keys=%22a%22", null).error(400, "bad_request", "`keys` parameter must be an array.");
        s.asAdmin("POST", "/a/_all_docs", "{\"keys\":\"a\"}").error(400, "bad_request", "`keys` body member must be an array.");
        s.asAdmin("POST", "/a/_all_docs", "{\"keys\":[\"a\"],\"limit\":\"2\"}").error(400, "query_parse_error", "Invalid value for integer: \"2\"");
        s.asAdmin("GET", "/a/_all_docs?keys=%5B%22a%22,%22b%22%5D&key=%22a%22", null)
                .error(400, "query_parse_error", "`keys` is incompatible with `key`, `start_key` and `end_key`");
        s.asAdmin("GET", "/a/_all_docs?startkey=a", null).error(400, "bad_request", "invalid UTF-8 JSON");
        s.asAdmin("GET", "/a/_all_docs?reduce=true", null).error(400, "query_parse_error", "Reduce is invalid for map-only views.");
        s.asAdmin("GET", "/a/_all_docs?group=true", null).error(400, "query_parse_error", "Invalid use of grouping on a map view.");
        s.asAdmin("GET", "/a/_all_docs?stale=later", null).error(400, "query_parse_error", "Invalid value for `stale`.");
        s.send("POST", "/a/_all_docs", "{}", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", null);
        s.asAdmin("PUT", "/a/_all_docs", "{}").error(405, "method_not_allowed", "Only GET,HEAD,POST allowed");
        s.get("/a/_all_docs").error(401, "unauthorized", null);
        get("_all_docs?stale=ok&update=lazy&stable=true&sorted=true&attachments=true&unknown=1"); // accepted
    }

    @Test
    void designDocs() throws Exception {
        JsonNode d = get("_design_docs");
        assertEquals(2, d.get("total_rows").asInt(), "total_rows counts design documents");
        assertEquals(List.of("_design/u", "_design/v"), ids(d));
        assertEquals(List.of("_design/v", "_design/u"), ids(get("_design_docs?descending=true")));
        assertEquals(List.of("_design/v"), ids(get("_design_docs?startkey=%22_design%2Fv%22")));
        assertEquals(List.of("_design/u"), ids(get("_design_docs?endkey=%22_design%2Fv%22&inclusive_end=false")));
        assertEquals(List.of(), ids(get("_design_docs?startkey=%22zzz%22")));
        // CouchDB clamps the range into the _design/ namespace rather than intersecting it away.
        assertEquals(List.of("_design/v", "_design/u"), ids(get("_design_docs?startkey=%22a%22&descending=true")));
        assertEquals(List.of("_design/v", "_design/u"), ids(get("_design_docs?startkey=%22z%22&descending=true")));
        JsonNode u = get("_design_docs?include_docs=true&limit=1").get("rows").get(0);
        assertEquals("u", u.get("doc").get("n").asText().substring(8));
        assertEquals(List.of("_design/v"), ids(s.asAdmin("POST", "/a/_design_docs", "{\"keys\":[\"_design/v\",\"a\"]}").json()), "keys outside the namespace are dropped");
    }

    @Test
    void localDocs() throws Exception {
        var r = s.asAdmin("GET", "/a/_local_docs", null).status(200);
        assertEquals("{\"total_rows\":null,\"rows\":[\r\n{\"id\":\"_local/l1\",\"key\":\"_local/l1\",\"value\":{\"rev\":\"0-1\"}},\r\n"
                + "{\"id\":\"_local/l2\",\"key\":\"_local/l2\",\"value\":{\"rev\":\"0-1\"}}\r\n]}", r.text());
        assertEquals(List.of("_local/l2", "_local/l1"), ids(get("_local_docs?descending=true")));
        assertEquals(List.of("_local/l2"), ids(get("_local_docs?startkey=%22_local%2Fl2%22")));
        assertEquals(List.of("_local/l1"), ids(get("_local_docs?limit=1")));
        assertEquals(2, get("_local_docs?include_docs=true").get("rows").get(1).get("doc").get("x").asInt());
        JsonNode keys = s.asAdmin("POST", "/a/_local_docs", "{\"keys\":[\"_local/l2\",\"_local/none\",\"a\"],\"include_docs\":true}").json();
        assertEquals("[{\"id\":\"_local/l2\",\"key\":\"_local/l2\",\"value\":{\"rev\":\"0-1\"},\"doc\":{\"_id\":\"_local/l2\",\"_rev\":\"0-1\",\"x\":2}},"
                + "{\"key\":\"_local/none\",\"error\":\"not_found\"}]", keys.get("rows").toString());
        assertEquals(List.of(), ids(s.asAdmin("POST", "/a/_local_docs?limit=0", "{\"keys\":[\"_local/l1\"],\"limit\":2}").json()));
    }
}

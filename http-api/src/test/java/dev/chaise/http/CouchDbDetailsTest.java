package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The details a CouchDB client notices (issue 20), each pinned to CouchDB 3.5's answer: status,
 * error and body, with the CouchDB source that decides it named beside the assertion.
 */
class CouchDbDetailsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/dt", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static HttpTestServer.Resp json(String method, String path, String body) throws Exception {
        return s.send(method, path, body, "Authorization", ADMIN, "Content-Type", "application/json", "Accept", "application/json");
    }

    private static List<String> revs(JsonNode openRevs) {
        List<String> out = new ArrayList<>();
        for (JsonNode r : openRevs) out.add(r.has("ok") ? r.get("ok").get("_rev").asText() : "missing:" + r.get("missing").asText());
        return out;
    }

    /** PouchDB's test.get.js tree: 1-a, then 2-aaa; 2-some, 3-bbb (deleted); 2-more, 3-even, 4-ccc. */
    private static void tree(String id) throws Exception {
        json("POST", "/dt/_bulk_docs", "{\"new_edits\":false,\"docs\":["
                + "{\"_id\":\"" + id + "\",\"_rev\":\"1-a\",\"v\":0},"
                + "{\"_id\":\"" + id + "\",\"_rev\":\"2-aaa\",\"v\":\"x\",\"_revisions\":{\"start\":2,\"ids\":[\"aaa\",\"a\"]}},"
                + "{\"_id\":\"" + id + "\",\"_rev\":\"3-bbb\",\"v\":\"y\",\"_deleted\":true,\"_revisions\":{\"start\":3,\"ids\":[\"bbb\",\"some\",\"a\"]}},"
                + "{\"_id\":\"" + id + "\",\"_rev\":\"4-ccc\",\"v\":\"z\",\"_revisions\":{\"start\":4,\"ids\":[\"ccc\",\"even\",\"more\",\"a\"]}}]}").status(201);
    }

    @Test
    void openRevsAllInFabricsOrder() throws Exception {
        tree("t1");
        // fabric_doc_open_revs:tree_format_replies sorts the #doc records: position, then revision id.
        // The winner (4-ccc) is not first; the deleted leaf keeps its place.
        JsonNode all = json("GET", "/dt/t1?open_revs=all", null).status(200).json();
        assertEquals(List.of("2-aaa", "3-bbb", "4-ccc"), revs(all));
        assertEquals("{\"_id\":\"t1\",\"_rev\":\"3-bbb\",\"v\":\"y\",\"_deleted\":true}", all.get(1).get("ok").toString());
        JsonNode withRevs = json("GET", "/dt/t1?open_revs=all&revs=true", null).status(200).json();
        assertEquals(List.of("2-aaa", "3-bbb", "4-ccc"), revs(withRevs));
        assertEquals("{\"start\":4,\"ids\":[\"ccc\",\"even\",\"more\",\"a\"]}", withRevs.get(2).get("ok").get("_revisions").toString());
        // Asked revisions come back each once, documents first (sorted), then the missing ones (sorted).
        JsonNode some = json("GET", "/dt/t1?open_revs=%5B%229-x%22,%224-ccc%22,%222-aaa%22,%224-ccc%22,%221-zz%22%5D", null).status(200).json();
        assertEquals(List.of("2-aaa", "4-ccc", "missing:1-zz", "missing:9-x"), revs(some));
    }

    @Test
    void openRevsLatestNeverTwice() throws Exception {
        tree("t2");
        // PouchDB 5857: two revisions of one branch with latest=true give its leaf once.
        assertEquals(List.of("4-ccc"), revs(json("GET", "/dt/t2?latest=true&open_revs=%5B%222-more%22%5D", null).json()));
        assertEquals(List.of("4-ccc"), revs(json("GET", "/dt/t2?latest=true&open_revs=%5B%222-more%22,%223-even%22,%224-ccc%22%5D", null).json()));
        // The root reaches every leaf, each once; a revision the tree lacks is missing.
        assertEquals(List.of("2-aaa", "3-bbb", "4-ccc", "missing:2-nope"),
                revs(json("GET", "/dt/t2?latest=true&open_revs=%5B%222-nope%22,%221-a%22,%222-some%22%5D", null).json()));
        // _bulk_get with latest: no leaf twice either.
        JsonNode bulk = json("POST", "/dt/_bulk_get?latest=true", "{\"docs\":[{\"id\":\"t2\",\"rev\":\"2-more\"},{\"id\":\"t2\",\"rev\":\"3-even\"}]}")
                .status(200).json();
        assertEquals(2, bulk.get("results").size());
        for (JsonNode r : bulk.get("results")) {
            assertEquals(1, r.get("docs").size(), bulk.toString());
            assertEquals("4-ccc", r.get("docs").get(0).get("ok").get("_rev").asText());
        }
    }

    @Test
    void allDocsQueries() throws Exception {
        s.asAdmin("PUT", "/dq", null).status(201);
        json("POST", "/dq/_bulk_docs", "{\"docs\":[{\"_id\":\"a\"},{\"_id\":\"b\"},{\"_id\":\"c\"},{\"_id\":\"_design/x\"},{\"_id\":\"_design/y\"}]}").status(201);
        json("PUT", "/dq/_local/l1", "{}").status(201);
        json("PUT", "/dq/_local/l2", "{}").status(201);
        // chttpd_db:multi_all_docs_view: {"results": [one _all_docs answer per query, in order]}; the
        // query string is each query's base (here include_docs), its members override it.
        JsonNode r = json("POST", "/dq/_all_docs/queries?include_docs=true",
                "{\"queries\":[{\"keys\":[\"b\",\"zz\"]},{\"limit\":1,\"skip\":1,\"include_docs\":false},{\"startkey\":\"c\",\"descending\":true}]}")
                .status(200).json();
        assertEquals(3, r.get("results").size());
        JsonNode q0 = r.get("results").get(0);
        assertEquals(5, q0.get("total_rows").asInt());
        assertEquals("b", q0.get("rows").get(0).get("doc").get("_id").asText());
        assertEquals("{\"key\":\"zz\",\"error\":\"not_found\"}", q0.get("rows").get(1).toString());
        JsonNode q1 = r.get("results").get(1).get("rows");
        assertEquals(1, q1.size());
        assertEquals("_design/y", q1.get(0).get("id").asText()); // design docs sort first, '_' < 'a'
        assertEquals(false, q1.get(0).has("doc"));
        JsonNode q2 = r.get("results").get(2).get("rows");
        assertEquals(List.of("c", "b", "a", "_design/y", "_design/x"), ids(q2));
        // The same beside _design_docs and _local_docs.
        JsonNode d = json("POST", "/dq/_design_docs/queries", "{\"queries\":[{},{\"descending\":true,\"limit\":1}]}").status(200).json();
        assertEquals(List.of("_design/x", "_design/y"), ids(d.get("results").get(0).get("rows")));
        assertEquals(2, d.get("results").get(0).get("total_rows").asInt());
        assertEquals(List.of("_design/y"), ids(d.get("results").get(1).get("rows")));
        JsonNode l = json("POST", "/dq/_local_docs/queries", "{\"queries\":[{\"keys\":[\"_local/l2\"]},{}]}").status(200).json();
        assertEquals(List.of("_local/l2"), ids(l.get("results").get(0).get("rows")));
        assertEquals(List.of("_local/l1", "_local/l2"), ids(l.get("results").get(1).get("rows")));
        assertEquals(true, l.get("results").get(1).get("total_rows").isNull());
        // CouchDB's errors: no queries, queries not an array, a GET.
        json("POST", "/dq/_all_docs/queries", "{}").error(400, "bad_request", "POST body must include `queries` parameter.");
        json("POST", "/dq/_all_docs/queries", "{\"queries\":{}}").error(400, "bad_request", "`queries` member must be an array.");
        json("GET", "/dq/_all_docs/queries", null).error(405, "method_not_allowed", "Only POST allowed");
        s.send("POST", "/dq/_all_docs/queries", "{\"queries\":[]}", "Content-Type", "application/json").error(401, "unauthorized", null);
    }

    @Test
    void changesPendingWithLookupFilters() throws Exception {
        s.asAdmin("PUT", "/dp", null).status(201);
        json("POST", "/dp/_bulk_docs", "{\"docs\":[{\"_id\":\"a\"},{\"_id\":\"b\"},{\"_id\":\"c\"},{\"_id\":\"d\"},{\"_id\":\"e\"},{\"_id\":\"_design/x\"}]}").status(201);
        // couch_changes:send_lookup_changes (fabric_rpc:changes): pending starts as every change after
        // since and loses one per row sent; the documents the lookup skips stay pending.
        JsonNode get = json("GET", "/dp/_changes?filter=_doc_ids&doc_ids=%5B%22a%22,%22b%22%5D", null).status(200).json();
        assertEquals(2, get.get("results").size());
        assertEquals(4, get.get("pending").asInt());
        JsonNode post = json("POST", "/dp/_changes?filter=_doc_ids", "{\"doc_ids\":[\"a\",\"b\",\"nope\"]}").status(200).json();
        assertEquals(2, post.get("results").size());
        assertEquals(4, post.get("pending").asInt());
        JsonNode design = json("GET", "/dp/_changes?filter=_design", null).status(200).json();
        assertEquals(1, design.get("results").size());
        assertEquals(5, design.get("pending").asInt());
        JsonNode limited = json("GET", "/dp/_changes?filter=_doc_ids&doc_ids=%5B%22a%22,%22b%22%5D&limit=1", null).status(200).json();
        assertEquals(1, limited.get("results").size());
        assertEquals(5, limited.get("pending").asInt());
        String last = json("GET", "/dp/_changes", null).json().get("last_seq").asText();
        assertEquals(0, json("GET", "/dp/_changes", null).json().get("pending").asInt());
        assertEquals(0, json("GET", "/dp/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D&since=" + last, null).json().get("pending").asInt());
        // A filter that scans the feed (here _selector) counts only what lies past the limit, as before.
        JsonNode sel = json("POST", "/dp/_changes?filter=_selector&limit=1", "{\"selector\":{\"_id\":{\"$gt\":\"c\"}}}").status(200).json();
        assertEquals(1, sel.get("results").size());
        assertEquals(2, sel.get("pending").asInt());
    }

    private static List<String> ids(JsonNode rows) {
        List<String> out = new ArrayList<>();
        for (JsonNode row : rows) out.add(row.get("id").asText());
        return out;
    }
}

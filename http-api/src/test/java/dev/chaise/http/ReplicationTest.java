package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code _revs_diff}, {@code _missing_revs} and {@code _bulk_get} as CouchDB 3 answers them. */
class ReplicationTest {
    static final String A = "a".repeat(32);
    static final String B = "b".repeat(32);
    static final String C = "c".repeat(32);
    static final String D = "d".repeat(32);
    static HttpTestServer s;

    /**
     * Document {@code t}: 1-A, then 2-B and 2-C (the winner: the higher hash); a deleted {@code gone} at 2-D;
     * {@code live} at 1-A.
     */
    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/r", null).status(201);
        s.asAdmin("POST", "/r/_bulk_docs", "{\"new_edits\":false,\"docs\":["
                + "{\"_id\":\"t\",\"_rev\":\"2-" + B + "\",\"v\":\"b\",\"_revisions\":{\"start\":2,\"ids\":[\"" + B + "\",\"" + A + "\"]}},"
                + "{\"_id\":\"t\",\"_rev\":\"2-" + C + "\",\"v\":\"c\",\"_revisions\":{\"start\":2,\"ids\":[\"" + C + "\",\"" + A + "\"]}},"
                + "{\"_id\":\"gone\",\"_rev\":\"2-" + D + "\",\"_deleted\":true,\"_revisions\":{\"start\":2,\"ids\":[\"" + D + "\",\"" + A + "\"]}},"
                + "{\"_id\":\"live\",\"_rev\":\"1-" + A + "\",\"n\":1}]}").status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp post(String path, String body) throws Exception {
        return s.asAdmin("POST", path, body);
    }

    @Test
    void revsDiffNamesOnlyIdsWithMissingRevs() throws Exception {
        JsonNode r = post("/r/_revs_diff", "{\"t\":[\"2-" + B + "\",\"3-" + D + "\",\"1-" + A + "\",\"1-" + D + "\"],"
                + "\"live\":[\"1-" + A + "\"],\"new\":[\"2-" + B + "\",\"1-" + A + "\"]}").status(200).json();
        // live has everything: not listed. possible_ancestors: leaves below the highest missing position.
        assertEquals("{\"t\":{\"missing\":[\"1-" + D + "\",\"3-" + D + "\"],\"possible_ancestors\":[\"2-" + C + "\",\"2-" + B + "\"]},"
                + "\"new\":{\"missing\":[\"1-" + A + "\",\"2-" + B + "\"]}}", r.toString());
        // A missing rev no higher than every leaf has no possible ancestor: the member is left out.
        assertEquals("{\"t\":{\"missing\":[\"1-" + C + "\"]}}", post("/r/_revs_diff", "{\"t\":[\"1-" + C + "\"]}").json().toString());
        // Deleted leaves count as known, and as possible ancestors.
        assertEquals("{\"gone\":{\"missing\":[\"3-" + A + "\"],\"possible_ancestors\":[\"2-" + D + "\"]}}",
                post("/r/_revs_diff", "{\"gone\":[\"3-" + A + "\",\"2-" + D + "\"]}").json().toString());
        assertEquals("{}", post("/r/_revs_diff", "{}").json().toString());
    }

    @Test
    void missingRevs() throws Exception {
        JsonNode r = post("/r/_missing_revs", "{\"t\":[\"2-" + B + "\",\"3-" + D + "\"],\"live\":[\"1-" + A + "\"]}").status(200).json();
        assertEquals("{\"missing_revs\":{\"t\":[\"3-" + D + "\"]}}", r.toString());
    }

    @Test
    void revsDiffErrors() throws Exception {
        post("/r/_revs_diff", "{\"t\":[\"bad\"]}").error(400, "bad_request", "Invalid rev format");
        post("/r/_revs_diff", "{\"t\":\"2-" + B + "\"}").error(400, "bad_request", "Invalid rev format");
        post("/r/_missing_revs", "[]").error(400, "bad_request", "Request body must be a JSON object");
        post("/r/_revs_diff", "{").error(400, "bad_request", null);
        s.send("POST", "/r/_revs_diff", "{}", "Authorization", ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", null);
        s.asAdmin("GET", "/r/_revs_diff", null).error(405, "method_not_allowed", null);
        s.send("POST", "/r/_revs_diff", "{}", "Authorization", EVE, "Content-Type", "application/json").error(403, "forbidden", null);
        post("/nope/_revs_diff", "{}").error(404, "not_found", null);
    }

    @Test
    void revsDiffAcrossManyTransactions() throws Exception {
        StringBuilder sb = new StringBuilder("{");
        for (int i = 0; i < 450; i++) sb.append(i == 0 ? "" : ",").append("\"n").append(i).append("\":[\"1-").append(A).append("\"]");
        sb.append(",\"live\":[\"1-").append(A).append("\"]}");
        JsonNode r = post("/r/_revs_diff", sb.toString()).status(200).json();
        assertEquals(450, r.size());
        assertTrue(r.has("n449") && !r.has("live"));
    }

    @Test
    void bulkGetRevisionsAndErrorsInRequestOrder() throws Exception {
        JsonNode r = post("/r/_bulk_get?revs=true", "{\"docs\":[{\"id\":\"t\",\"rev\":\"2-" + C + "\"},{\"id\":\"t\"},"
                + "{\"id\":\"nope\"},{\"id\":\"t\",\"rev\":\"9-" + A + "\"},{\"id\":\"live\",\"rev\":\"bad\"},{\"rev\":\"1-" + A + "\"},"
                + "{\"id\":\"_bad\"},{\"id\":\"gone\"},5,{\"id\":\"t\",\"atts_since\":\"x\"},{\"id\":\"t\",\"rev\":\"1-" + A + "\"}]}").status(200).json();
        JsonNode res = r.get("results");
        assertEquals(11, res.size());
        assertEquals("{\"id\":\"t\",\"docs\":[{\"ok\":{\"_id\":\"t\",\"_rev\":\"2-" + C + "\",\"v\":\"c\",\"_revisions\":{\"start\":2,\"ids\":[\""
                + C + "\",\"" + A + "\"]}}}]}", res.get(0).toString());
        // no rev: every leaf, in the revision tree's order (fabric_open_revs: siblings by revision id), not winner first
        assertEquals(2, res.get(1).get("docs").size());
        assertEquals("2-" + B, res.get(1).get("docs").get(0).get("ok").get("_rev").asText());
        assertEquals("2-" + C, res.get(1).get("docs").get(1).get("ok").get("_rev").asText());
        assertEquals("{\"id\":\"nope\",\"docs\":[{\"error\":{\"id\":\"nope\",\"rev\":\"undefined\",\"error\":\"not_found\",\"reason\":\"missing\"}}]}",
                res.get(2).toString());
        assertEquals("{\"id\":\"t\",\"docs\":[{\"error\":{\"id\":\"t\",\"rev\":\"9-" + A + "\",\"error\":\"not_found\",\"reason\":\"missing\"}}]}",
                res.get(3).toString());
        assertEquals("{\"id\":\"live\",\"docs\":[{\"error\":{\"id\":\"live\",\"rev\":\"bad\",\"error\":\"bad_request\",\"reason\":\"Invalid rev format\"}}]}",
                res.get(4).toString());
        assertEquals("{\"id\":null,\"docs\":[{\"error\":{\"id\":null,\"rev\":null,\"error\":\"bad_request\",\"reason\":\"document id missed\"}}]}",
                res.get(5).toString());
        assertEquals("{\"id\":\"_bad\",\"docs\":[{\"error\":{\"id\":\"_bad\",\"rev\":null,\"error\":\"illegal_docid\","
                + "\"reason\":\"Only reserved document ids may start with underscore.\"}}]}", res.get(6).toString());
        assertEquals("{\"ok\":{\"_id\":\"gone\",\"_rev\":\"2-" + D + "\",\"_deleted\":true,\"_revisions\":{\"start\":2,\"ids\":[\"" + D + "\",\"" + A + "\"]}}}",
                res.get(7).get("docs").get(0).toString(), "a deleted leaf is a document too");
        assertEquals("{\"id\":null,\"docs\":[{\"error\":{\"id\":null,\"rev\":null,\"error\":\"bad_request\",\"reason\":\"document must be a JSON object\"}}]}",
                res.get(8).toString());
        assertEquals("{\"id\":\"t\",\"rev\":\"x\",\"error\":\"bad_request\",\"reason\":\"att_since value must be array of revs.\"}",
                res.get(9).get("docs").get(0).get("error").toString());
        // an inner revision has no body left
        assertEquals("not_found", res.get(10).get("docs").get(0).get("error").get("error").asText());
    }

    @Test
    void bulkGetLatestFollowsToEveryLeaf() throws Exception {
        JsonNode res = post("/r/_bulk_get?latest=true", "{\"docs\":[{\"id\":\"t\",\"rev\":\"1-" + A + "\"},{\"id\":\"live\",\"rev\":\"1-" + A + "\"}]}")
                .status(200).json().get("results");
        assertEquals(2, res.get(0).get("docs").size(), "1-A branched into two leaves");
        assertEquals("{\"ok\":{\"_id\":\"live\",\"_rev\":\"1-" + A + "\",\"n\":1}}", res.get(1).get("docs").get(0).toString(), "no _revisions without revs=true");
    }

    @Test
    void revisionsWinOverRevAsInCouchDb() throws Exception {
        // PouchDB can send a leaf's _rev with a _revisions naming another: CouchDB takes _revisions.
        post("/r/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"w\",\"_rev\":\"3-" + C + "\",\"_revisions\":{\"start\":2,\"ids\":[\""
                + C + "\",\"" + A + "\"]}}]}").status(201);
        assertEquals("2-" + C, s.asAdmin("GET", "/r/w", null).json().get("_rev").asText());
    }

    @Test
    void replicationFieldsAreKeptInTheBody() throws Exception {
        String doc = "{\"_replication_id\":\"x\",\"_replication_state\":\"triggered\",\"_replication_state_time\":1,"
                + "\"_replication_state_reason\":\"r\",\"_replication_stats\":{},\"_access\":[\"alice\"]}";
        s.asAdmin("PUT", "/r/repdoc", doc).status(201);
        JsonNode got = s.asAdmin("GET", "/r/repdoc", null).json();
        for (String f : new String[] {"_replication_id", "_replication_state", "_replication_state_time", "_replication_state_reason", "_replication_stats", "_access"}) {
            assertEquals(Json.MAPPER.readTree(doc).get(f), got.get(f), f);
        }
        post("/r/_bulk_docs", "{\"docs\":[{\"_id\":\"x\",\"_replication_bogus\":1}]}").error(400, "doc_validation", "Bad special document member: _replication_bogus");
    }

    @Test
    void bulkGetRequestErrors() throws Exception {
        post("/r/_bulk_get", "{}").error(400, "bad_request", "Missing JSON list of 'docs'.");
        post("/r/_bulk_get", "{\"docs\":5}").error(400, "bad_request", "Missing JSON list of 'docs'.");
        post("/r/_bulk_get?rev=1-" + A, "{\"docs\":[]}").error(400, "bad_request", "\"rev\" query parameter is not acceptable");
        post("/r/_bulk_get?open_revs=all", "{\"docs\":[]}").error(400, "bad_request", "\"open_revs\" query parameter is not acceptable");
        assertEquals("{\"results\":[]}", post("/r/_bulk_get", "{\"docs\":[]}").status(200).json().toString());
        s.send("POST", "/r/_bulk_get", "{\"docs\":[]}", "Authorization", ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", null);
        s.asAdmin("GET", "/r/_bulk_get", null).error(405, "method_not_allowed", null);
    }

    @Test
    void bulkGetAnswersMultipartOnlyWhenJsonIsNotAccepted() throws Exception {
        String body = "{\"docs\":[{\"id\":\"live\"},{\"id\":\"nope\",\"rev\":\"1-" + A + "\"}]}";
        var json = s.send("POST", "/r/_bulk_get", body, "Authorization", ADMIN, "Content-Type", "application/json",
                "Accept", "application/json, multipart/mixed");
        assertTrue(json.header("Content-Type").startsWith("application/json"));
        var mp = s.send("POST", "/r/_bulk_get", body, "Authorization", ADMIN, "Content-Type", "application/json", "Accept", "multipart/mixed").status(200);
        String ct = mp.header("Content-Type");
        assertTrue(ct.startsWith("multipart/mixed; boundary=\""), ct);
        String boundary = ct.substring(ct.indexOf('"') + 1, ct.lastIndexOf('"'));
        assertEquals("\r\n--" + boundary + "\r\nContent-Type: application/json\r\n\r\n{\"_id\":\"live\",\"_rev\":\"1-" + A + "\",\"n\":1}"
                + "\r\n--" + boundary + "\r\nContent-Type: application/json; error=\"true\"\r\n\r\n"
                + "{\"id\":\"nope\",\"rev\":\"1-" + A + "\",\"error\":\"not_found\",\"reason\":\"missing\"}"
                + "\r\n--" + boundary + "--\r\n", mp.text());
    }
}

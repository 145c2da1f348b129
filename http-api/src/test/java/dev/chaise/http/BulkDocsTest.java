package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class BulkDocsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/b", null).status(201);
        s.asAdmin("PUT", "/b/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp bulk(String body) throws Exception {
        return s.asAdmin("POST", "/b/_bulk_docs", body);
    }

    @Test
    void createUpdateDelete() throws Exception {
        JsonNode r = bulk("{\"docs\":[{\"_id\":\"a\",\"n\":1},{\"_id\":\"b\",\"n\":2},{\"n\":3}]}").status(201).json();
        assertEquals(3, r.size());
        String ra = r.get(0).get("rev").asText();
        String rb = r.get(1).get("rev").asText();
        assertEquals("{\"ok\":true,\"id\":\"a\",\"rev\":\"" + ra + "\"}", r.get(0).toString());
        assertTrue(r.get(2).get("id").asText().matches("[0-9a-f]{32}"), "a missing id is generated");

        JsonNode u = bulk("{\"docs\":[{\"_id\":\"a\",\"_rev\":\"" + ra + "\",\"n\":10},{\"_id\":\"b\",\"n\":20},"
                + "{\"_id\":\"c\"},{\"_id\":\"c\"}]}").status(201).json();
        assertTrue(u.get(0).get("rev").asText().startsWith("2-"));
        assertEquals("{\"id\":\"b\",\"error\":\"conflict\",\"reason\":\"Document update conflict.\"}", u.get(1).toString());
        assertTrue(u.get(2).get("ok").asBoolean());
        assertEquals("{\"id\":\"c\",\"error\":\"conflict\",\"reason\":\"Document update conflict.\"}", u.get(3).toString(), "a duplicate id conflicts");

        JsonNode d = bulk("{\"docs\":[{\"_id\":\"b\",\"_rev\":\"" + rb + "\",\"_deleted\":true}]}").status(201).json();
        assertTrue(d.get(0).get("rev").asText().startsWith("2-"));
        s.asAdmin("GET", "/b/b", null).error(404, "not_found", "deleted");
    }

    @Test
    void replicatedWritesReportOnlyFailures() throws Exception {
        var r = bulk("{\"new_edits\":false,\"docs\":[{\"_id\":\"r\",\"_rev\":\"2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\",\"_revisions\":{\"start\":2,"
                + "\"ids\":[\"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\",\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]}},{\"_id\":\"r\",\"_rev\":\"1-cccccccccccccccccccccccccccccccc\"}]}");
        assertEquals("[]\n", r.status(201).text());
        JsonNode doc = s.asAdmin("GET", "/b/r?conflicts=true", null).json();
        assertEquals("2-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", doc.get("_rev").asText());
        assertEquals("[\"1-cccccccccccccccccccccccccccccccc\"]", doc.get("_conflicts").toString());
        // the same again changes nothing and still reports nothing
        assertEquals("[]\n", bulk("{\"new_edits\":false,\"docs\":[{\"_id\":\"r\",\"_rev\":\"1-cccccccccccccccccccccccccccccccc\"}]}").status(201).text());
        bulk("{\"new_edits\":false,\"docs\":[{\"_id\":\"r\"}]}")
                .error(400, "bad_request", "When `new_edits: false`, the document needs `_rev` or `_revisions` specified");
        // A bare "1-" is revision 1 with an empty id, as CouchDB parses it (PouchDB issue 7829).
        assertEquals("[]\n", bulk("{\"new_edits\":false,\"docs\":[{\"_id\":\"bare\",\"_rev\":\"1-\",\"n\":1}]}").status(201).text());
        JsonNode bare = s.asAdmin("GET", "/b/bare?revs=true", null).status(200).json();
        assertEquals("1-", bare.get("_rev").asText());
        assertEquals("{\"start\":1,\"ids\":[\"\"]}", bare.get("_revisions").toString());
    }

    @Test
    void requestErrors() throws Exception {
        bulk("{\"doc\":[]}").error(400, "bad_request", "POST body must include `docs` parameter.");
        bulk("{\"docs\":\"foo\"}").error(400, "bad_request", "`docs` parameter must be an array.");
        bulk("{\"docs\":[],\"new_edits\":0}").error(400, "bad_request", "`new_edits` parameter must be a boolean.");
        bulk("[]").error(400, "bad_request", "Request body must be a JSON object");
        bulk("{\"docs\":[{\"_id\":\"fine\"},{\"_id\":\"_invalid\"}]}").error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("GET", "/b/fine", null).error(404, "not_found", "missing"); // nothing written
        bulk("{\"docs\":[{\"_id\":\"x\",\"_bad\":1}]}").error(400, "doc_validation", "Bad special document member: _bad");
        bulk("{\"docs\":[{\"_id\":\"x\",\"_rev\":\"nope\"}]}").error(400, "bad_request", "Invalid rev format");
        bulk("{\"docs\":[1]}").error(400, "bad_request", "Document must be a JSON object");
        s.send("POST", "/b/_bulk_docs", "{\"docs\":[]}", "Authorization", ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", null);
        assertEquals("[]\n", bulk("{\"docs\":[]}").status(201).text());
        s.asAdmin("GET", "/b/_bulk_docs", null).error(405, "method_not_allowed", "Only POST allowed");
    }

    /**
     * A request big enough to be written as parallel parts (storage's BatchWriter, the caller
     * writing the last): every row in the order sent, as chttpd_db's update_doc_result_to_json
     * writes it, byte for byte (ids escaped as JSON), and every document stored.
     */
    @Test
    void bigBatchAnswersEveryRowInOrder() throws Exception {
        s.asAdmin("PUT", "/big", null).status(201);
        s.asAdmin("PUT", "/big/d0300", "{}").status(201);
        StringBuilder body = new StringBuilder("{\"docs\":[");
        String[] ids = new String[1000];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = i == 7 ? "q\"uote\u00e9" : String.format("d%04d", i);
            if (i > 0) body.append(',');
            body.append("{\"_id\":").append(Json.write(ids[i])).append(",\"n\":").append(i).append('}');
        }
        HttpTestServer.Resp r = s.asAdmin("POST", "/big/_bulk_docs", body.append("]}").toString()).status(201);
        JsonNode rows = r.json();
        StringBuilder expected = new StringBuilder("[");
        for (int i = 0; i < ids.length; i++) {
            if (i > 0) expected.append(',');
            String id = Json.write(ids[i]);
            if (i == 300) {
                expected.append("{\"id\":").append(id).append(",\"error\":\"conflict\",\"reason\":\"Document update conflict.\"}");
            } else {
                String rev = rows.get(i).path("rev").asText();
                assertTrue(rev.startsWith("1-"), rows.get(i).toString());
                expected.append("{\"ok\":true,\"id\":").append(id).append(",\"rev\":\"").append(rev).append("\"}");
            }
        }
        assertEquals(expected.append("]\n").toString(), r.text());
        assertEquals(1000, s.asAdmin("GET", "/big", null).json().get("doc_count").asInt());
        assertEquals(7, s.asAdmin("GET", "/big/" + java.net.URLEncoder.encode(ids[7], java.nio.charset.StandardCharsets.UTF_8).replace("+", "%20"), null)
                .status(200).json().get("n").asInt());
    }

    @Test
    void allOrNothing() throws Exception {
        String r1 = bulk("{\"docs\":[{\"_id\":\"t1\"}]}").json().get(0).get("rev").asText();
        JsonNode ok = bulk("{\"all_or_nothing\":true,\"docs\":[{\"_id\":\"t1\",\"_rev\":\"" + r1 + "\",\"x\":1},{\"_id\":\"t2\"}]}").status(201).json();
        assertEquals(2, ok.size());
        String r2 = ok.get(0).get("rev").asText();
        assertTrue(r2.startsWith("2-"));
        // one conflict: nothing is written, and 417 lists the failures with the revision they were sent with
        var failed = bulk("{\"all_or_nothing\":true,\"docs\":[{\"_id\":\"t3\"},{\"_id\":\"t1\",\"_rev\":\"" + r1 + "\"}]}").status(417);
        assertEquals("[{\"id\":\"t1\",\"rev\":\"" + r1 + "\",\"error\":\"conflict\",\"reason\":\"Document update conflict.\"}]\n", failed.text());
        s.asAdmin("GET", "/b/t3", null).error(404, "not_found", "missing");
        assertEquals(r2, s.asAdmin("GET", "/b/t1", null).json().get("_rev").asText());
    }

    @Test
    void designAndLocalDocuments() throws Exception {
        var r = s.send("POST", "/b/_bulk_docs", "{\"docs\":[{\"_id\":\"_design/x\"},{\"_id\":\"byb\"},{\"_id\":\"_local/l\",\"v\":1}]}",
                "Authorization", BOB, "Content-Type", "application/json").status(201).json();
        // couch_db:check_is_admin for a design document: forbidden for a signed-in user, per document.
        assertEquals("{\"id\":\"_design/x\",\"error\":\"forbidden\",\"reason\":\"You are not a db or server admin.\"}", r.get(0).toString());
        assertTrue(r.get(1).get("ok").asBoolean());
        assertEquals("{\"ok\":true,\"id\":\"_local/l\",\"rev\":\"0-1\"}", r.get(2).toString());
        assertEquals(1, s.asAdmin("GET", "/b/_local/l", null).json().get("v").asInt());
        JsonNode a = bulk("{\"docs\":[{\"_id\":\"_design/x\"},{\"_id\":\"_local/l\",\"_rev\":\"0-1\",\"v\":2}]}").status(201).json();
        assertTrue(a.get(0).get("ok").asBoolean());
        assertEquals("0-2", a.get(1).get("rev").asText());
        bulk("{\"docs\":[{\"_id\":\"_local/l\",\"_rev\":\"1-a\"}]}").error(400, "bad_request", "Invalid rev format");
    }
}

package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _purge}, {@code _purged_infos} and {@code _purged_infos_limit} as CouchDB 3.5 serves them
 * (chttpd_db, couch_db_updater:purge_docs; its test/elixir purge_test.exs).
 */
class PurgeTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static HttpTestServer.Resp admin(String method, String path, String body) throws Exception {
        return s.send(method, path, body, "Authorization", ADMIN, "Content-Type", "application/json", "Accept", "application/json");
    }

    private static String rev(String db, String id) throws Exception {
        return admin("GET", "/" + db + "/" + id, null).status(200).json().get("_rev").asText();
    }

    @Test
    void purgeDocumentsAndTheirViewRows() throws Exception {
        admin("PUT", "/p1", null).status(201);
        admin("PUT", "/p1/_design/test", "{\"views\":{\"all_docs_twice\":{\"map\":\"function(doc) { emit(doc.integer, null); emit(doc.integer, null) }\"},"
                + "\"single_doc\":{\"map\":\"function(doc) { if (doc._id == \\\"1\\\") { emit(1, null) }}\"}}}").status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 1; i <= 11; i++) docs.append(i > 1 ? "," : "").append("{\"_id\":\"").append(i).append("\",\"integer\":").append(i).append('}');
        admin("POST", "/p1/_bulk_docs", docs.append("]}").toString()).status(201);
        assertEquals(22, admin("GET", "/p1/_design/test/_view/all_docs_twice", null).json().get("total_rows").asInt());
        assertEquals(1, admin("GET", "/p1/_design/test/_view/single_doc", null).json().get("total_rows").asInt());
        JsonNode before = admin("GET", "/p1", null).json();
        assertEquals("0", before.get("purge_seq").asText());

        String r1 = rev("p1", "1");
        String r2 = rev("p1", "2");
        JsonNode res = admin("POST", "/p1/_purge", "{\"1\":[\"" + r1 + "\"],\"2\":[\"" + r2 + "\"]}").status(201).json();
        assertEquals("{\"purge_seq\":null,\"purged\":{\"1\":[\"" + r1 + "\"],\"2\":[\"" + r2 + "\"]}}", res.toString());
        admin("GET", "/p1/1", null).error(404, "not_found", "missing");
        admin("GET", "/p1/2", null).error(404, "not_found", "missing");
        JsonNode after = admin("GET", "/p1", null).json();
        assertNotEquals("0", after.get("purge_seq").asText());
        assertEquals(10, after.get("doc_count").asInt()); // 9 documents and the design document
        assertEquals(0, after.get("doc_del_count").asInt());
        // The views no longer hold them; nor do _all_docs and _changes.
        JsonNode twice = admin("GET", "/p1/_design/test/_view/all_docs_twice", null).json();
        assertEquals(18, twice.get("total_rows").asInt());
        assertEquals(3, twice.get("rows").get(0).get("key").asInt());
        assertEquals(0, admin("GET", "/p1/_design/test/_view/single_doc", null).json().get("total_rows").asInt());
        String all = admin("GET", "/p1/_all_docs", null).text();
        assertFalse(all.contains("\"id\":\"1\"") || all.contains("\"id\":\"2\""), all);
        String changes = admin("GET", "/p1/_changes", null).text();
        assertFalse(changes.contains("\"id\":\"1\"") || changes.contains("\"id\":\"2\""), changes);
        // A purged document can be written again from scratch.
        assertTrue(admin("PUT", "/p1/1", "{\"integer\":1}").status(201).json().get("rev").asText().startsWith("1-"));

        // Twice in a row, without the views being queried between: a later build sees neither.
        admin("POST", "/p1/_purge", "{\"3\":[\"" + rev("p1", "3") + "\"]}").status(201);
        admin("POST", "/p1/_purge", "{\"4\":[\"" + rev("p1", "4") + "\"]}").status(201);
        JsonNode rows = admin("GET", "/p1/_design/test/_view/all_docs_twice", null).json();
        assertEquals(16, rows.get("total_rows").asInt());
        // _purged_infos lists what was asked, one record per document and purge.
        JsonNode infos = admin("GET", "/p1/_purged_infos", null).status(200).json();
        assertEquals("{\"id\":\"1\",\"revs\":[\"" + r1 + "\"]}", infos.get("purged_infos").get(0).toString());
        assertEquals(4, infos.get("purged_infos").size());
    }

    @Test
    void purgeOneConflictingLeaf() throws Exception {
        // COUCHDB-1065: a document with two leaves; purging one leaves the other, then none.
        admin("PUT", "/p2", null).status(201);
        String a = admin("PUT", "/p2/test", "{\"a\":1}").status(201).json().get("rev").asText();
        String b = "1-ffffffffffffffffffffffffffffffff";
        admin("PUT", "/p2/test?new_edits=false", "{\"_rev\":\"" + b + "\",\"a\":2}").status(201);
        admin("GET", "/p2/test?rev=" + a, null).status(200);
        String seqBefore = admin("GET", "/p2/_changes", null).json().get("last_seq").asText();
        JsonNode res = admin("POST", "/p2/_purge", "{\"test\":[\"" + b + "\"]}").status(201).json();
        assertEquals("[\"" + b + "\"]", res.get("purged").get("test").toString());
        admin("GET", "/p2/test?rev=" + b, null).error(404, "not_found", "missing");
        JsonNode doc = admin("GET", "/p2/test?conflicts=true", null).status(200).json();
        assertEquals(a, doc.get("_rev").asText());
        assertFalse(doc.has("_conflicts"));
        // The document moves to the end of the changes feed, with its new winner.
        JsonNode ch = admin("GET", "/p2/_changes?since=" + seqBefore, null).json();
        assertEquals(1, ch.get("results").size());
        assertEquals(a, ch.get("results").get(0).get("changes").get(0).get("rev").asText());
        // Purging what is not a leaf, or not there, purges nothing (and is still recorded).
        assertEquals("{\"test\":[],\"nope\":[]}", admin("POST", "/p2/_purge", "{\"test\":[\"" + b + "\"],\"nope\":[\"1-abc\"]}")
                .status(201).json().get("purged").toString());
        admin("POST", "/p2/_purge", "{\"test\":[\"" + a + "\",\"" + b + "\"]}").status(201);
        admin("GET", "/p2/test", null).error(404, "not_found", "missing");
        JsonNode info = admin("GET", "/p2", null).json();
        assertEquals(0, info.get("doc_count").asInt());
        assertEquals(0, info.get("doc_del_count").asInt());
        assertEquals(4, admin("GET", "/p2/_purged_infos", null).json().get("purged_infos").size());
    }

    @Test
    void purgeADeletedDocumentAndItsAttachments() throws Exception {
        admin("PUT", "/p3", null).status(201);
        String r1 = s.send("PUT", "/p3/d/a.txt", "hello", "Authorization", ADMIN, "Content-Type", "text/plain").status(201).json().get("rev").asText();
        String r2 = admin("DELETE", "/p3/d?rev=" + r1, null).status(200).json().get("rev").asText();
        assertEquals(1, admin("GET", "/p3", null).json().get("doc_del_count").asInt());
        admin("POST", "/p3/_purge", "{\"d\":[\"" + r2 + "\"]}").status(201);
        JsonNode info = admin("GET", "/p3", null).json();
        assertEquals(0, info.get("doc_del_count").asInt());
        assertEquals(0, info.get("sizes").get("external").asInt());
        // Written again under the same id, it starts over: no trace of the attachment or the tombstone.
        assertTrue(admin("PUT", "/p3/d", "{}").status(201).json().get("rev").asText().startsWith("1-"));
        admin("GET", "/p3/d/a.txt", null).error(404, "not_found", "Document is missing attachment");
    }

    @Test
    void indexesShowTheNewWinnerAfterPurgingTheOld() throws Exception {
        // One interactive index (indexed in the purge's own transaction) and one built in the background.
        admin("PUT", "/p5", null).status(201);
        admin("PUT", "/p5/_design/i", "{\"options\":{\"interactive\":true},\"views\":{\"v\":{\"map\":\"function(doc){ emit(doc.v, null); }\"}}}").status(201);
        admin("PUT", "/p5/_design/b", "{\"views\":{\"v\":{\"map\":\"function(doc){ emit(doc.v, null); }\"}}}").status(201);
        String a = admin("PUT", "/p5/x", "{\"v\":\"first\"}").status(201).json().get("rev").asText();
        String w = "1-ffffffffffffffffffffffffffffffff";
        admin("PUT", "/p5/x?new_edits=false", "{\"_rev\":\"" + w + "\",\"v\":\"winner\"}").status(201);
        for (String ddoc : new String[] {"i", "b"}) {
            assertEquals("winner", admin("GET", "/p5/_design/" + ddoc + "/_view/v", null).json().at("/rows/0/key").asText());
        }
        admin("POST", "/p5/_purge", "{\"x\":[\"" + w + "\"]}").status(201);
        for (String ddoc : new String[] {"i", "b"}) {
            JsonNode rows = admin("GET", "/p5/_design/" + ddoc + "/_view/v", null).json().get("rows");
            assertEquals(1, rows.size(), ddoc + ": " + rows);
            assertEquals("first", rows.get(0).get("key").asText(), ddoc);
        }
        assertEquals(a, rev("p5", "x"));
    }

    @Test
    void accessAndErrors() throws Exception {
        admin("PUT", "/p4", null).status(201);
        admin("PUT", "/p4/_security", "{\"members\":{\"names\":[\"bob\"]},\"admins\":{\"names\":[\"bob\"]}}").status(200);
        // chttpd_auth_request: _purge and PUT _purged_infos_limit are for server admins, 401 to anyone else.
        s.send("POST", "/p4/_purge", "{}", "Authorization", BOB, "Content-Type", "application/json").error(401, "unauthorized", "You are not a server admin.");
        s.send("POST", "/p4/_purge", "{}", "Content-Type", "application/json").error(401, "unauthorized", "You are not a server admin.");
        s.send("PUT", "/p4/_purged_infos_limit", "5", "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
        // Reading them is for members.
        assertEquals("{\"purged_infos\":[]}\n", s.send("GET", "/p4/_purged_infos", null, "Authorization", BOB).status(200).text());
        assertEquals("1000\n", s.send("GET", "/p4/_purged_infos_limit", null, "Authorization", BOB).status(200).text());
        s.get("/p4/_purged_infos").error(401, "unauthorized", "You are not authorized to access this db.");
        s.send("GET", "/p4/_purged_infos", null, "Authorization", HttpTestServer.EVE).error(403, "forbidden", "You are not allowed to access this db.");
        assertEquals("{\"ok\":true}\n", admin("PUT", "/p4/_purged_infos_limit", "2").status(200).text());
        assertEquals("2\n", admin("GET", "/p4/_purged_infos_limit", null).text());
        admin("PUT", "/p4/_purged_infos_limit", "0").error(400, "bad_request", "`purged_infos_limit` must be positive integer");
        admin("PUT", "/p4/_purged_infos_limit", "\"x\"").error(400, "bad_request", "`purged_infos_limit` must be positive integer");
        // The limit keeps the newest records.
        for (String id : new String[] {"a", "b", "c"}) admin("POST", "/p4/_purge", "{\"" + id + "\":[\"1-abc\"]}").status(201);
        JsonNode infos = admin("GET", "/p4/_purged_infos", null).json().get("purged_infos");
        assertEquals(2, infos.size());
        assertEquals("b", infos.get(0).get("id").asText());
        assertEquals("c", infos.get(1).get("id").asText());
        // Bodies CouchDB refuses.
        admin("POST", "/p4/_purge", "{\"a\":[\"bad\"]}").error(400, "bad_request", "Invalid rev format");
        admin("POST", "/p4/_purge", "{\"a\":\"1-abc\"}").error(400, "bad_request", "Invalid rev format");
        admin("POST", "/p4/_purge", "[]").error(400, "bad_request", null);
        s.send("POST", "/p4/_purge", "{}", "Authorization", ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", null);
        StringBuilder many = new StringBuilder("{");
        for (int i = 0; i < 101; i++) many.append(i > 0 ? "," : "").append("\"d").append(i).append("\":[]");
        admin("POST", "/p4/_purge", many.append('}').toString()).error(400, "bad_request", "Exceeded maximum number of documents.");
        admin("GET", "/p4/_purge", null).error(405, "method_not_allowed", "Only POST allowed");
        admin("POST", "/nodb/_purge", "{}").error(404, "not_found", "Database does not exist.");
    }
}

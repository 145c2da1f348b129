package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Single documents: {@code GET/HEAD/PUT/DELETE/COPY}, {@code POST /{db}}, design and local documents. */
class DocumentsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/d", null).status(201);
        // bob is a member, not an admin, of /d
        s.asAdmin("PUT", "/d/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static String rev(HttpTestServer.Resp r) {
        return r.json().get("rev").asText();
    }

    @Test
    void putGetHeadAndEtags() throws Exception {
        var put = s.asAdmin("PUT", "/d/one", "{\"b\":[1,2],\"a\":\"x\"}").status(201);
        String rev = rev(put);
        assertTrue(rev.matches("1-[0-9a-f]{32}"), rev);
        assertEquals("{\"ok\":true,\"id\":\"one\",\"rev\":\"" + rev + "\"}\n", put.text());
        assertEquals("\"" + rev + "\"", put.header("ETag"));
        assertTrue(put.header("Location").matches("http://127\\.0\\.0\\.1:\\d+/d/one"), put.header("Location"));

        var get = s.asAdmin("GET", "/d/one", null).status(200);
        assertEquals("{\"_id\":\"one\",\"_rev\":\"" + rev + "\",\"a\":\"x\",\"b\":[1,2]}\n", get.text());
        assertEquals("\"" + rev + "\"", get.header("ETag"));
        assertEquals("application/json", get.header("Content-Type"));

        var head = s.send("HEAD", "/d/one", null, "Authorization", ADMIN).status(200);
        assertEquals("", head.text());
        assertEquals("\"" + rev + "\"", head.header("ETag"));

        var notModified = s.send("GET", "/d/one", null, "Authorization", ADMIN, "If-None-Match", "\"" + rev + "\"").status(304);
        assertEquals("", notModified.text());
        assertEquals("\"" + rev + "\"", notModified.header("ETag"));
        s.send("GET", "/d/one", null, "Authorization", ADMIN, "If-None-Match", "\"1-other\"").status(200);

        // Meta members mean no ETag, as CouchDB
        var meta = s.asAdmin("GET", "/d/one?local_seq=true", null).status(200);
        assertNull(meta.header("ETag"));
        assertTrue(meta.json().get("_local_seq").asText().matches("[0-9a-f]{26}"));
        // unknown or non-true option values are ignored, as CouchDB's doc query parser does
        s.send("GET", "/d/one?revs=maybe&attachments=true&att_encoding_info=true&r=1", null, "Authorization", ADMIN, "Accept", "application/json").status(200);
    }

    @Test
    void revisionsAndErrors() throws Exception {
        String r1 = rev(s.asAdmin("PUT", "/d/two", "{\"v\":1}").status(201));
        s.asAdmin("PUT", "/d/two", "{\"v\":2}").error(409, "conflict", "Document update conflict.");
        s.asAdmin("PUT", "/d/two?rev=" + r1, "{\"_rev\":\"1-abc\",\"v\":2}")
                .error(400, "bad_request", "Document rev from request body and query string have different values");
        s.send("PUT", "/d/two", "{\"v\":2}", "Authorization", ADMIN, "If-Match", "\"1-abc\"", "Content-Type", "application/json")
                .error(409, "conflict", "Document update conflict.");
        s.send("PUT", "/d/two?rev=" + r1, "{\"v\":2}", "Authorization", ADMIN, "If-Match", "\"1-abc\"")
                .error(400, "bad_request", "Document rev and etag have different values");
        // If-Match names the revision; no JSON Content-Type is needed on PUT, as CouchDB
        String r2 = rev(s.send("PUT", "/d/two", "{\"v\":2}", "Authorization", ADMIN, "If-Match", "\"" + r1 + "\"").status(201));
        assertTrue(r2.startsWith("2-"));

        JsonNode revs = s.asAdmin("GET", "/d/two?revs=true&revs_info=true", null).json();
        assertEquals("{\"start\":2,\"ids\":[\"" + r2.substring(2) + "\",\"" + r1.substring(2) + "\"]}", revs.get("_revisions").toString());
        assertEquals("[{\"rev\":\"" + r2 + "\",\"status\":\"available\"},{\"rev\":\"" + r1 + "\",\"status\":\"missing\"}]", revs.get("_revs_info").toString());
        s.asAdmin("GET", "/d/two?rev=" + r1, null).error(404, "not_found", "missing"); // only leaves keep bodies
        s.asAdmin("GET", "/d/two?rev=bogus", null).error(400, "bad_request", "Invalid rev format");
        // latest=true opens the winner, as CouchDB does
        assertEquals(r2, s.asAdmin("GET", "/d/two?rev=" + r1 + "&latest=true", null).json().get("_rev").asText());

        s.asAdmin("DELETE", "/d/two", null).error(409, "conflict", "Document update conflict.");
        s.asAdmin("DELETE", "/d/two?rev=" + r1, null).error(409, "conflict", "Document update conflict.");
        var del = s.asAdmin("DELETE", "/d/two?rev=" + r2, null).status(200);
        String r3 = rev(del);
        assertEquals("{\"ok\":true,\"id\":\"two\",\"rev\":\"" + r3 + "\"}\n", del.text());
        assertEquals("\"" + r3 + "\"", del.header("ETag"));
        s.asAdmin("GET", "/d/two", null).error(404, "not_found", "deleted");
        s.asAdmin("DELETE", "/d/two?rev=" + r3, null).error(404, "not_found", "deleted");
        s.asAdmin("DELETE", "/d/never?rev=1-a", null).error(404, "not_found", "missing");
        assertEquals("{\"_id\":\"two\",\"_rev\":\"" + r3 + "\",\"_deleted\":true}\n", s.asAdmin("GET", "/d/two?rev=" + r3, null).text());
        // recreate over the tombstone without a rev
        assertTrue(rev(s.asAdmin("PUT", "/d/two", "{\"v\":4}").status(201)).startsWith("4-"));
        // a PUT that deletes answers 200
        String r4 = s.asAdmin("GET", "/d/two", null).json().get("_rev").asText();
        s.asAdmin("PUT", "/d/two?rev=" + r4, "{\"_deleted\":true}").status(200);
    }

    @Test
    void badInput() throws Exception {
        s.asAdmin("PUT", "/d/_bad", "{}").error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("GET", "/d/_bad", null).error(404, "not_found", "missing");
        s.asAdmin("PUT", "/d/x", "{\"a\":").error(400, "bad_request", "invalid UTF-8 JSON");
        s.asAdmin("PUT", "/d/x", "[1]").error(400, "bad_request", "Document must be a JSON object");
        s.asAdmin("PUT", "/d/x", "{\"_foo\":1}").error(400, "doc_validation", "Bad special document member: _foo");
        s.asAdmin("POST", "/d", "{\"_id\":1}").error(400, "illegal_docid", "Document id must be a string");
        s.asAdmin("POST", "/d", "{\"_id\":\"_invalid\"}").error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.send("POST", "/d", "{}", "Authorization", ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", "Content-Type must be application/json");
        s.asAdmin("PUT", "/d/x", "{\"_attachments\":[]}").error(400, "doc_validation", "Bad special document member: _attachments");
        s.asAdmin("PUT", "/d/x", "{\"_attachments\":{}}").status(201);
        s.get("/d/x").error(401, "unauthorized", "You are not authorized to access this db.");
        s.send("GET", "/d/x", null, "Authorization", HttpTestServer.EVE).error(403, "forbidden", "You are not allowed to access this db.");
        s.asAdmin("GET", "/nodb/x", null).error(404, "not_found", "Database does not exist.");
        s.asAdmin("PATCH", "/d/x", "{}").error(405, "method_not_allowed", "Only COPY,DELETE,GET,HEAD,POST,PUT allowed"); // db_doc_req names POST too (a form upload)
    }

    @Test
    void postBatchAndNewEdits() throws Exception {
        var post = s.asAdmin("POST", "/d", "{\"z\":1}").status(201);
        String id = post.json().get("id").asText();
        assertTrue(id.matches("[0-9a-f]{32}"), id);
        assertEquals("{\"ok\":true,\"id\":\"" + id + "\",\"rev\":\"" + rev(post) + "\"}\n", post.text());
        assertTrue(post.header("Location").endsWith("/d/" + id));

        assertEquals("{\"ok\":true,\"id\":\"batched\"}\n", s.asAdmin("PUT", "/d/batched?batch=ok", "{\"b\":1}").status(202).text());
        assertEquals(1, s.asAdmin("GET", "/d/batched", null).status(200).json().get("b").asInt());
        // a batch write that fails is still accepted, as CouchDB answers before writing
        s.asAdmin("PUT", "/d/batched?batch=ok", "{\"b\":2}").status(202);
        assertEquals("{\"ok\":true,\"id\":\"pb\"}\n", s.asAdmin("POST", "/d?batch=ok", "{\"_id\":\"pb\"}").status(202).text());

        var ne = s.asAdmin("PUT", "/d/repl?new_edits=false", "{\"_rev\":\"3-0123456789abcdef0123456789abcdef\",\"_revisions\":{\"start\":3,"
                + "\"ids\":[\"0123456789abcdef0123456789abcdef\",\"bb\",\"aa\"]},\"r\":1}").status(201);
        assertEquals("{\"ok\":true,\"id\":\"repl\",\"rev\":\"3-0123456789abcdef0123456789abcdef\"}\n", ne.text());
        assertEquals("{\"start\":3,\"ids\":[\"0123456789abcdef0123456789abcdef\",\"bb\",\"aa\"]}",
                s.asAdmin("GET", "/d/repl?revs=true", null).json().get("_revisions").toString());
        s.asAdmin("PUT", "/d/repl2?new_edits=false", "{}")
                .error(400, "bad_request", "When `new_edits: false`, the document needs `_rev` or `_revisions` specified");
    }

    @Test
    void conflictsAndOpenRevs() throws Exception {
        String r1 = rev(s.asAdmin("PUT", "/d/c", "{\"v\":1}").status(201));
        String other = "1-ffffffffffffffffffffffffffffffff";
        String gone = "1-00000000000000000000000000000001";
        s.asAdmin("PUT", "/d/c?new_edits=false", "{\"_rev\":\"" + other + "\",\"v\":2}").status(201);
        s.asAdmin("PUT", "/d/c?new_edits=false", "{\"_rev\":\"" + gone + "\",\"_deleted\":true}").status(200); // a deletion is 200, as in CouchDB

        JsonNode c = s.asAdmin("GET", "/d/c?conflicts=true&deleted_conflicts=true", null).json();
        assertEquals("{\"_id\":\"c\",\"_rev\":\"" + other + "\",\"v\":2,\"_conflicts\":[\"" + r1 + "\"],\"_deleted_conflicts\":[\"" + gone + "\"]}", c.toString());
        JsonNode meta = s.asAdmin("GET", "/d/c?meta=true", null).json();
        assertTrue(meta.has("_revs_info") && meta.has("_conflicts") && meta.has("_deleted_conflicts") && meta.has("_local_seq"), meta.toString());

        var all = s.send("GET", "/d/c?open_revs=all", null, "Authorization", ADMIN, "Accept", "application/json").status(200);
        // fabric_doc_open_revs sorts the leaves: by position, then revision id (not winner first)
        assertEquals("[{\"ok\":{\"_id\":\"c\",\"_rev\":\"" + gone + "\",\"_deleted\":true}},{\"ok\":{\"_id\":\"c\",\"_rev\":\"" + r1 + "\",\"v\":1}},"
                + "{\"ok\":{\"_id\":\"c\",\"_rev\":\"" + other + "\",\"v\":2}}]\n", all.text());
        var some = s.send("GET", "/d/c?revs=true&open_revs=%5B%22" + r1 + "%22,%222-abc%22%5D", null, "Authorization", ADMIN, "Accept", "application/json");
        assertEquals("[{\"ok\":{\"_id\":\"c\",\"_rev\":\"" + r1 + "\",\"v\":1,\"_revisions\":{\"start\":1,\"ids\":[\"" + r1.substring(2) + "\"]}}},"
                + "{\"missing\":\"2-abc\"}]\n", some.status(200).text());
        s.send("GET", "/d/nothing?open_revs=all", null, "Authorization", ADMIN, "Accept", "application/json").error(404, "not_found", "missing");
        assertEquals("[{\"missing\":\"1-abc\"}]\n",
                s.send("GET", "/d/nothing?open_revs=%5B%221-abc%22%5D", null, "Authorization", ADMIN, "Accept", "application/json").text());

        // latest: the leaf that descends from the asked revision
        String r2 = rev(s.asAdmin("PUT", "/d/c?rev=" + r1, "{\"v\":3}").status(201));
        var latest = s.send("GET", "/d/c?latest=true&open_revs=%5B%22" + r1 + "%22%5D", null, "Authorization", ADMIN, "Accept", "application/json");
        assertEquals(r2, latest.json().get(0).get("ok").get("_rev").asText());

        // Without Accept: application/json, CouchDB's multipart/mixed, one JSON part per revision
        var mp = s.send("GET", "/d/c?open_revs=%5B%22" + other + "%22,%222-abc%22%5D", null, "Authorization", ADMIN).status(200);
        String ct = mp.header("Content-Type");
        assertTrue(ct.matches("multipart/mixed; boundary=\"[0-9a-f]{32}\""), ct);
        String b = ct.substring(ct.indexOf('"') + 1, ct.length() - 1);
        assertEquals("--" + b + "\r\nContent-Type: application/json\r\n\r\n{\"_id\":\"c\",\"_rev\":\"" + other + "\",\"v\":2}\r\n--" + b
                + "\r\nContent-Type: application/json; error=\"true\"\r\n\r\n{\"missing\":\"2-abc\"}\r\n--" + b + "--", mp.text());
    }

    @Test
    void designDocumentsNeedAnAdminToWrite() throws Exception {
        var put = s.asAdmin("PUT", "/d/_design/app", "{\"views\":{}}").status(201);
        assertTrue(put.header("Location").endsWith("/d/_design/app"), put.header("Location"));
        assertEquals("_design/app", put.json().get("id").asText());
        assertEquals("_design/app", s.send("GET", "/d/_design/app", null, "Authorization", BOB).status(200).json().get("_id").asText());
        assertEquals("_design/app", s.send("GET", "/d/_design%2Fapp", null, "Authorization", BOB).status(200).json().get("_id").asText());
        // couch_db:check_is_admin: 403 to a signed-in member ("you may not").
        s.send("PUT", "/d/_design/bob", "{}", "Authorization", BOB).error(403, "forbidden", "You are not a db or server admin.");
        s.send("POST", "/d", "{\"_id\":\"_design/bob\"}", "Authorization", BOB, "Content-Type", "application/json")
                .error(403, "forbidden", "You are not a db or server admin.");
        s.send("DELETE", "/d/_design/app?rev=" + rev(put), null, "Authorization", BOB).error(403, "forbidden", "You are not a db or server admin.");
        s.send("COPY", "/d/_design/app", null, "Authorization", BOB, "Destination", "_design/copy").error(403, "forbidden", null);
        // members write ordinary documents
        s.send("PUT", "/d/bobs", "{}", "Authorization", BOB).status(201);
        s.asAdmin("DELETE", "/d/_design/app?rev=" + rev(put), null).status(200);
    }

    @Test
    void copy() throws Exception {
        String src = rev(s.asAdmin("PUT", "/d/src", "{\"k\":\"v\"}").status(201));
        var c = s.send("COPY", "/d/src", null, "Authorization", ADMIN, "Destination", "dst").status(201);
        String dst = rev(c);
        assertEquals("{\"ok\":true,\"id\":\"dst\",\"rev\":\"" + dst + "\"}\n", c.text());
        assertTrue(c.header("Location").endsWith("/d/dst"));
        assertEquals("\"" + dst + "\"", c.header("ETag"));
        assertEquals("{\"_id\":\"dst\",\"_rev\":\"" + dst + "\",\"k\":\"v\"}\n", s.asAdmin("GET", "/d/dst", null).text());

        s.send("COPY", "/d/src", null, "Authorization", ADMIN, "Destination", "dst").error(409, "conflict", "Document update conflict.");
        String dst2 = rev(s.send("COPY", "/d/src", null, "Authorization", ADMIN, "Destination", "dst?rev=" + dst).status(201));
        assertTrue(dst2.startsWith("2-"));
        s.send("COPY", "/d/src", null, "Authorization", ADMIN).error(400, "bad_request", "Destination header is mandatory for COPY.");
        s.send("COPY", "/d/src", null, "Authorization", ADMIN, "Destination", "http://elsewhere/d/x").error(400, "bad_request", "Destination URL must be relative.");
        s.send("COPY", "/d/nope", null, "Authorization", ADMIN, "Destination", "x").error(404, "not_found", "missing");
        s.send("COPY", "/d/src?rev=1-abc", null, "Authorization", ADMIN, "Destination", "x").error(404, "not_found", "missing");
        s.send("COPY", "/d/src?rev=" + src, null, "Authorization", ADMIN, "Destination", "with%20space").status(201);
        assertEquals("v", s.asAdmin("GET", "/d/with%20space", null).json().get("k").asText());
        s.send("COPY", "/d/src", null, "Authorization", ADMIN, "Destination", "_bad").error(400, "illegal_docid", null);
        // into and out of _local
        assertEquals("0-1", rev(s.send("COPY", "/d/src", null, "Authorization", ADMIN, "Destination", "_local/cp").status(201)));
        s.send("COPY", "/d/_local/cp", null, "Authorization", ADMIN, "Destination", "fromlocal").status(201);
        assertEquals("v", s.asAdmin("GET", "/d/fromlocal", null).json().get("k").asText());
    }

    @Test
    void localDocuments() throws Exception {
        var put = s.asAdmin("PUT", "/d/_local/cp", "{\"_id\":\"ignored\",\"seq\":1}").status(201);
        assertEquals("{\"ok\":true,\"id\":\"_local/cp\",\"rev\":\"0-1\"}\n", put.text());
        assertEquals("{\"_id\":\"_local/cp\",\"_rev\":\"0-1\",\"seq\":1}\n", s.asAdmin("GET", "/d/_local/cp", null).status(200).text());
        // CouchDB 3 checks no revision on local documents (couch_db_updater:increment_local_doc_revs):
        // the last write wins, and its revision is the one it names plus one, 0-1 when it names none.
        assertEquals("0-2", rev(s.asAdmin("PUT", "/d/_local/cp", "{\"_rev\":\"0-1\",\"seq\":2}").status(201)));
        assertEquals("0-2", rev(s.asAdmin("PUT", "/d/_local/cp", "{\"_rev\":\"0-1\",\"seq\":3}").status(201)));
        assertEquals("0-8", rev(s.asAdmin("PUT", "/d/_local/cp?rev=0-7", "{\"seq\":3}").status(201)));
        assertEquals("0-1", rev(s.asAdmin("PUT", "/d/_local/cp", "{\"seq\":4}").status(201)));
        s.asAdmin("PUT", "/d/_local/cp", "{\"_rev\":\"1-abc\"}").error(400, "bad_request", "Invalid rev format");
        // couch_doc:transfer_fields reads _revisions after _rev: {start: 0, ids: ["N"]} is 0-N (PouchDB's test.local_docs.js).
        assertEquals("0-2", rev(s.asAdmin("PUT", "/d/_local/rv", "{\"_rev\":\"0-1\",\"_revisions\":{\"start\":0,\"ids\":[\"1\"]}}").status(201)));
        assertEquals("{\"_id\":\"_local/rv\",\"_rev\":\"0-2\"}\n", s.asAdmin("GET", "/d/_local/rv", null).text());
        s.asAdmin("PUT", "/d/_local/rv", "{\"_revisions\":{\"start\":\"x\",\"ids\":[\"1\"]}}").error(400, "doc_validation", "_revisions.start isn't an integer.");
        s.asAdmin("PUT", "/d/_local/cp", "{\"_foo\":1}").error(400, "doc_validation", "Bad special document member: _foo");
        s.asAdmin("GET", "/d/_local/none", null).error(404, "not_found", "missing");
        s.asAdmin("GET", "/d/_local", null).error(400, "bad_request", "Invalid _local document id.");
        s.asAdmin("PUT", "/d/_local/cp/att", "{}").error(400, "bad_request", "_local documents do not accept attachments.");
        s.send("HEAD", "/d/_local/cp", null, "Authorization", ADMIN).status(200);

        var del = s.asAdmin("DELETE", "/d/_local/cp", null).status(200);
        assertEquals("{\"ok\":true,\"id\":\"_local/cp\",\"rev\":\"0-0\"}\n", del.text());
        s.asAdmin("GET", "/d/_local/cp", null).error(404, "not_found", "missing");
        s.asAdmin("DELETE", "/d/_local/cp", null).error(404, "not_found", "missing");
        // After a delete the next write starts again at 0-1, as GET and _local_docs show.
        assertEquals("0-1", rev(s.asAdmin("PUT", "/d/_local/cp", "{\"seq\":5}").status(201)));
        assertEquals("{\"_id\":\"_local/cp\",\"_rev\":\"0-1\",\"seq\":5}\n", s.asAdmin("GET", "/d/_local/cp", null).status(200).text());
        assertTrue(s.asAdmin("GET", "/d/_local_docs?key=%22_local/cp%22", null).text().contains("{\"id\":\"_local/cp\",\"key\":\"_local/cp\",\"value\":{\"rev\":\"0-1\"}}"));
        // A deletion through the body, even of a document that is not there, answers 0-0.
        assertEquals("0-0", rev(s.asAdmin("PUT", "/d/_local/cp", "{\"_rev\":\"0-1\",\"_deleted\":true}").status(200)));
        assertEquals("0-0", rev(s.asAdmin("PUT", "/d/_local/never", "{\"_deleted\":true}").status(200)));
        assertEquals("0-0", s.asAdmin("POST", "/d/_bulk_docs", "{\"docs\":[{\"_id\":\"_local/never\",\"_deleted\":true}]}").status(201).json().get(0).get("rev").asText());
        assertEquals("0-1", rev(s.asAdmin("PUT", "/d/_local/cp", "{\"seq\":6}").status(201)));
        assertEquals("0-1", rev(s.asAdmin("POST", "/d", "{\"_id\":\"_local/posted\"}").status(201)));
        // local documents are in neither _all_docs nor _changes
        assertTrue(!s.asAdmin("GET", "/d/_all_docs", null).text().contains("_local/"));
        assertTrue(!s.asAdmin("GET", "/d/_changes", null).text().contains("_local/"));
    }
}

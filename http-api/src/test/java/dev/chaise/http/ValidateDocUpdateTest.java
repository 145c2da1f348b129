package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * validate_doc_update over HTTP, with real JavaScript: CouchDB's verdicts and statuses, what the
 * function is given (a probe function throws it back as its reason), which writes it sees.
 */
class ValidateDocUpdateTest {
    static HttpTestServer s;

    /** Throws everything it was given back, when the document asks for it. */
    static final String PROBE = "function (newDoc, oldDoc, userCtx, secObj) {"
            + " if (newDoc.probe) throw {forbidden: JSON.stringify({newDoc: newDoc, oldDoc: oldDoc, userCtx: userCtx, secObj: secObj, self: this._id})}; }";

    /** CouchDB's own test function (security_validation_test), in its parenthesized form. */
    static final String AUTHOR = "(function (newDoc, oldDoc, userCtx, secObj) {"
            + " if (secObj.admin_override && userCtx.roles.indexOf('_admin') != -1) return true;"
            + " if (!newDoc._deleted && !newDoc.author) throw {forbidden: 'Documents must have an author field'};"
            + " if (oldDoc && oldDoc.author != userCtx.name) throw {unauthorized: 'You are ' + userCtx.name + ', not the author ' + oldDoc.author};"
            + " })";

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() throws Exception {
        s.close();
    }

    static void createDb(String db) throws Exception {
        s.asAdmin("PUT", "/" + db, null).status(201);
        s.asAdmin("PUT", "/" + db + "/_security", "{\"members\":{\"names\":[\"bob\",\"eve\"]},\"admin_override\":false}").status(200);
    }

    static void ddoc(String db, String id, String fn) throws Exception {
        s.asAdmin("PUT", "/" + db + "/_design/" + id, Json.MAPPER.writeValueAsString(Json.NODES.objectNode().put("validate_doc_update", fn))).status(201);
    }

    static HttpTestServer.Resp as(String auth, String method, String path, String body) throws Exception {
        return s.send(method, path, body, "Authorization", auth, "Content-Type", "application/json");
    }

    /** What the probe saw, from its 403. */
    static JsonNode probed(HttpTestServer.Resp r) throws Exception {
        r.error(403, "forbidden", null);
        return Json.MAPPER.readTree(r.json().get("reason").textValue());
    }

    @Test
    void authorsAndAdminsAsInCouchDbsSecurityTest() throws Exception {
        createDb("va");
        ddoc("va", "test", AUTHOR);
        as(HttpTestServer.BOB, "PUT", "/va/d", "{\"foo\":1}").error(403, "forbidden", "Documents must have an author field");
        s.get("/va/d", "Authorization", HttpTestServer.ADMIN).error(404, "not_found", "missing");
        String rev = as(HttpTestServer.BOB, "PUT", "/va/d", "{\"foo\":1,\"author\":\"bob\"}").status(201).json().get("rev").textValue();

        as(HttpTestServer.EVE, "PUT", "/va/d?rev=" + rev, "{\"foo\":2,\"author\":\"bob\"}").error(401, "unauthorized", "You are eve, not the author bob");
        as(HttpTestServer.EVE, "DELETE", "/va/d?rev=" + rev, null).error(401, "unauthorized", "You are eve, not the author bob");
        // An admin is a user like any other to the function, until the security object says otherwise.
        s.asAdmin("PUT", "/va/d?rev=" + rev, "{\"foo\":3,\"author\":\"bob\"}").error(401, "unauthorized", "You are admin, not the author bob");
        assertEquals(rev, s.get("/va/d", "Authorization", HttpTestServer.ADMIN).json().get("_rev").textValue(), "a rejected write writes nothing");

        s.asAdmin("PUT", "/va/_security", "{\"members\":{\"names\":[\"bob\",\"eve\"]},\"admin_override\":true}").status(200);
        rev = s.asAdmin("PUT", "/va/d?rev=" + rev, "{\"foo\":4,\"author\":\"eve\"}").status(201).json().get("rev").textValue();
        as(HttpTestServer.EVE, "DELETE", "/va/d?rev=" + rev, null).status(200);

        JsonNode rows = as(HttpTestServer.BOB, "POST", "/va/_bulk_docs", "{\"docs\":[{\"_id\":\"bahbah\",\"author\":\"bob\"},{\"_id\":\"fahfah\"}]}").status(201).json();
        assertTrue(rows.get(0).path("ok").asBoolean(), rows.toString());
        assertEquals("{\"id\":\"fahfah\",\"error\":\"forbidden\",\"reason\":\"Documents must have an author field\"}", rows.get(1).toString());
        s.get("/va/fahfah", "Authorization", HttpTestServer.ADMIN).error(404, "not_found", "missing");
    }

    @Test
    void theFunctionIsGivenWhatCouchDbGivesIt() throws Exception {
        createDb("vp");
        ddoc("vp", "probe", PROBE);
        JsonNode p = probed(as(HttpTestServer.BOB, "PUT", "/vp/n", "{\"probe\":1}"));
        assertEquals("{\"_id\":\"n\",\"probe\":1}", p.get("newDoc").toString());
        assertTrue(p.get("oldDoc").isNull(), p.toString());
        assertEquals("{\"db\":\"vp\",\"name\":\"bob\",\"roles\":[\"reader\"]}", p.get("userCtx").toString());
        assertEquals("{\"members\":{\"names\":[\"bob\",\"eve\"]},\"admin_override\":false}", p.get("secObj").toString());
        assertEquals("_design/probe", p.get("self").asText(), "the design document is `this`");

        String rev = s.asAdmin("PUT", "/vp/n", "{\"v\":1}").status(201).json().get("rev").textValue();
        p = probed(s.asAdmin("PUT", "/vp/n?rev=" + rev, "{\"probe\":2}"));
        // As CouchDB: _rev is the edited revision; the new one is made after validation.
        assertEquals("{\"_id\":\"n\",\"_rev\":\"" + rev + "\",\"_revisions\":{\"start\":1,\"ids\":[\"" + rev.substring(2) + "\"]},\"probe\":2}",
                p.get("newDoc").toString());
        assertEquals("{\"_id\":\"n\",\"_rev\":\"" + rev + "\",\"_revisions\":{\"start\":1,\"ids\":[\"" + rev.substring(2) + "\"]},\"v\":1}",
                p.get("oldDoc").toString());
        assertEquals("{\"db\":\"vp\",\"name\":\"admin\",\"roles\":[\"_admin\"]}", p.get("userCtx").toString());

        // A new inline attachment reaches the function as a stub with its digest and length.
        p = probed(s.asAdmin("PUT", "/vp/n?rev=" + rev, "{\"probe\":3,\"_attachments\":{\"a.txt\":{\"content_type\":\"text/plain\",\"data\":\"aGVsbG8=\"}}}"));
        JsonNode att = p.get("newDoc").get("_attachments").get("a.txt");
        assertEquals("text/plain", att.get("content_type").asText());
        assertEquals(5, att.get("length").asInt());
        assertTrue(att.get("stub").asBoolean() && att.get("digest").asText().startsWith("md5-") && !att.has("data"), att.toString());

        // A deletion through DELETE: no body, _deleted.
        ddoc("vp", "zdel", "function (n, o) { if (n._deleted && o && o.v === 1) throw {forbidden: 'deleting v1: ' + JSON.stringify(n)}; }");
        s.asAdmin("DELETE", "/vp/n?rev=" + rev, null).error(403, "forbidden",
                "deleting v1: {\"_id\":\"n\",\"_rev\":\"" + rev + "\",\"_revisions\":{\"start\":1,\"ids\":[\"" + rev.substring(2) + "\"]},\"_deleted\":true}");
    }

    @Test
    void replicatedWritesSeeTheNewRevisionAndTheLeafItReplaces() throws Exception {
        createDb("vr");
        ddoc("vr", "probe", PROBE);
        s.asAdmin("POST", "/vr/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"r\",\"_rev\":\"1-aaaa\",\"v\":1}]}").status(201);
        JsonNode rows = s.asAdmin("POST", "/vr/_bulk_docs",
                "{\"new_edits\":false,\"docs\":[{\"_id\":\"r\",\"_rev\":\"3-cccc\",\"_revisions\":{\"start\":3,\"ids\":[\"cccc\",\"bbbb\",\"aaaa\"]},\"probe\":1}]}")
                .status(201).json();
        assertEquals(1, rows.size(), rows.toString());
        assertEquals("forbidden", rows.get(0).get("error").asText());
        assertEquals("3-cccc", rows.get(0).get("rev").asText());
        JsonNode p = Json.MAPPER.readTree(rows.get(0).get("reason").textValue());
        assertEquals("{\"_id\":\"r\",\"_rev\":\"3-cccc\",\"_revisions\":{\"start\":3,\"ids\":[\"cccc\",\"bbbb\",\"aaaa\"]},\"probe\":1}", p.get("newDoc").toString());
        assertEquals("1-aaaa", p.get("oldDoc").get("_rev").asText(), "the nearest ancestor that is a leaf here");
        assertEquals(1, p.get("oldDoc").get("v").asInt());

        // A conflicting branch replaces nothing here.
        rows = s.asAdmin("POST", "/vr/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"r\",\"_rev\":\"1-dddd\",\"probe\":1}]}").status(201).json();
        assertTrue(Json.MAPPER.readTree(rows.get(0).get("reason").textValue()).get("oldDoc").isNull(), rows.toString());

        // A revision the database has is not checked again: it is a success, as in CouchDB.
        assertEquals("[]", s.asAdmin("POST", "/vr/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"r\",\"_rev\":\"1-aaaa\",\"probe\":1}]}").json().toString());
        assertEquals(1, s.get("/vr/r", "Authorization", HttpTestServer.ADMIN).json().get("v").asInt());
    }

    @Test
    void designAndLocalDocumentsAreNotChecked() throws Exception {
        createDb("vd");
        ddoc("vd", "no", "function () { throw {forbidden: 'nothing passes'}; }");
        s.asAdmin("PUT", "/vd/plain", "{}").error(403, "forbidden", "nothing passes");
        s.asAdmin("PUT", "/vd/_design/other", "{}").status(201);
        as(HttpTestServer.BOB, "PUT", "/vd/_design/bobs", "{}").error(403, "forbidden", null); // admins only, as before
        as(HttpTestServer.BOB, "PUT", "/vd/_local/x", "{}").status(201);
        s.asAdmin("PUT", "/vd/plain/att.txt", "hello").error(403, "forbidden", "nothing passes");
    }

    @Test
    void aFailingFunctionIs500UnknownErrorAndWritesNothing() throws Exception {
        createDb("vf");
        ddoc("vf", "f", "function (n) { if (n.crash) null.x; if (n.odd) throw {nope: 'odd verdict'}; if (n.str) throw 'a string'; }");
        s.asAdmin("PUT", "/vf/a", "{\"crash\":1}").error(500, "unknown_error", null);
        assertTrue(s.asAdmin("PUT", "/vf/a", "{\"crash\":1}").json().get("reason").asText().contains("TypeError"));
        s.asAdmin("PUT", "/vf/a", "{\"odd\":1}").error(500, "unknown_error", "odd verdict");
        s.asAdmin("PUT", "/vf/a", "{\"str\":1}").error(500, "unknown_error", "a string");
        s.get("/vf/a", "Authorization", HttpTestServer.ADMIN).error(404, "not_found", "missing");
        // Saved unchecked, as CouchDB saves it; a write that runs it gets couch_query_servers' {compilation_error, Msg}: 500.
        s.asAdmin("PUT", "/vf/_design/bad", "{\"validate_doc_update\":\"function (n) {\"}").status(201);
        s.asAdmin("PUT", "/vf/a", "{}").error(500, "compilation_error", null);
        s.asAdmin("PUT", "/vf/_design/bad", "{\"validate_doc_update\":\"function (n) {\"}").error(409, "conflict", null);
    }

    @Test
    void aRunawayFunctionFailsTheRequestInsteadOfRetryingIt() throws Exception {
        createDb("vt");
        ddoc("vt", "slow", "function (n) { if (n.spin) { while (true) {} } if (n.wait) { var t = Date.now(); while (Date.now() - t < n.wait) {} } }");
        HttpTestServer.Resp r = s.asAdmin("PUT", "/vt/a", "{\"spin\":true}").error(500, "os_process_error", null);
        assertTrue(r.json().get("reason").asText().contains("_design/slow"), r.text());
        // The function's time, all documents of the transaction together, is bounded too.
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < 5; i++) docs.append(i == 0 ? "" : ",").append("{\"_id\":\"w").append(i).append("\",\"wait\":700}");
        s.asAdmin("POST", "/vt/_bulk_docs", docs.append("]}").toString()).error(500, "os_process_error", null);
        s.get("/vt/a", "Authorization", HttpTestServer.ADMIN).error(404, "not_found", null);
        s.get("/vt/w0", "Authorization", HttpTestServer.ADMIN).error(404, "not_found", null);
        s.asAdmin("PUT", "/vt/b", "{\"wait\":1}").status(201); // the engine still serves
    }

    @Test
    void everyFunctionMustPassInDesignDocumentOrderAndFollowsItsEdits() throws Exception {
        createDb("vo");
        ddoc("vo", "b", "function () { throw {forbidden: 'b says no'}; }");
        ddoc("vo", "a", "function () { throw {forbidden: 'a says no'}; }");
        s.asAdmin("PUT", "/vo/x", "{}").error(403, "forbidden", "a says no");
        String aRev = s.get("/vo/_design/a", "Authorization", HttpTestServer.ADMIN).json().get("_rev").textValue();
        s.asAdmin("PUT", "/vo/_design/a?rev=" + aRev, "{\"validate_doc_update\":\"function () {}\"}").status(201);
        s.asAdmin("PUT", "/vo/x", "{}").error(403, "forbidden", "b says no");
        String bRev = s.get("/vo/_design/b", "Authorization", HttpTestServer.ADMIN).json().get("_rev").textValue();
        s.asAdmin("DELETE", "/vo/_design/b?rev=" + bRev, null).status(200);
        s.asAdmin("PUT", "/vo/x", "{}").status(201);
        assertFalse(s.asAdmin("GET", "/vo/x", null).json().has("error"));
    }
}

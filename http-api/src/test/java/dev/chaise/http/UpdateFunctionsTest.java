package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _update} functions, pinned to CouchDB 3.5.0's answers: its update_documents_test.exs
 * behaviour by behaviour, and the rules chttpd_show and render.js decide (the new document written
 * through the door, the X-Couch-* headers, the response object, the errors).
 */
class UpdateFunctionsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/up", null).status(201);
        ObjectNode updates = Json.NODES.objectNode()
                .put("hello", "function(doc, req) { if (!doc) { if (req.id) return [{_id: req.id, reqs: [req]}, '<p>New World</p>'];"
                        + " return [null, '<p>Empty World</p>']; } doc.world = 'hello'; doc.edited_by = req.userCtx; return [doc, '<p>hello doc</p>']; }")
                .put("in-place", "function(doc, req) { doc[req.query.field] = req.query.value; return [doc, 'set ' + req.query.field + ' to ' + req.query.value]; }")
                .put("form-update", "function(doc, req) { for (var f in req.form) doc[f] = req.form[f]; return [doc, 'updated doc from form']; }")
                .put("bump-counter", "function(doc, req) { if (!doc.counter) doc.counter = 0; doc.counter += 1; return [doc, '<h1>bumped it!</h1>']; }")
                .put("error", "function(doc, req) { superFail.badCrash; }")
                .put("get-uuid", "function(doc, req) { return [null, req.uuid]; }")
                .put("code-n-bump", "function(doc, req) { if (!doc.counter) doc.counter = 0; doc.counter += 1; return [doc, {code: 302, body: '<h1>bumped it!</h1>'}]; }")
                .put("resp-code", "function(doc, req) { return [null, {code: 302}]; }")
                .put("resp-code-and-json", "function(doc, req) { return [{_id: req.uuid}, {code: 302, json: {ok: true}}]; }")
                .put("binary", "function(doc, req) { return [doc, {headers: {'Content-Type': 'application/octet-stream'}, base64: 'aGVsbG8gd29ybGQh'}]; }")
                .put("empty", "function(doc, req) { return [{}, 'oops']; }")
                .put("thrown", "function(doc, req) { throw {error: 'forbidden', reason: 'not you'}; }")
                .put("thrown-array", "function(doc, req) { throw ['error', 'not_found', 'no such thing']; }")
                .put("no-response", "function(doc, req) { return [null]; }")
                .put("bad-member", "function(doc, req) { return [null, {bogus: 1}]; }")
                .put("echo", "function(doc, req) { return [null, {json: {req: req, self: this._id}}]; }")
                .put("uses-lib", "function(doc, req) { return [null, require('lib/greet').hello(req.query.who)]; }")
                .put("forever", "function(doc, req) { while (true) {} }");
        ObjectNode ddoc = Json.NODES.objectNode().put("language", "javascript");
        ddoc.set("updates", updates);
        ddoc.putObject("lib").put("greet", "exports.hello = function (who) { return 'hello ' + who; };");
        s.asAdmin("PUT", "/up/_design/update", Json.write(ddoc)).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp as(String method, String path, String body, String... headers) throws Exception {
        String[] h = new String[headers.length + 2];
        h[0] = "Authorization";
        h[1] = ADMIN;
        System.arraycopy(headers, 0, h, 2, headers.length);
        return s.send(method, path, body, h);
    }

    static String newDoc(String body) throws Exception {
        return s.asAdmin("POST", "/up", body).status(201).json().path("id").asText();
    }

    @Test
    void updatesADocumentAndSaysSo() throws Exception {
        String id = newDoc("{\"word\":\"plankton\",\"name\":\"Rusty\"}");
        HttpTestServer.Resp r = as("PUT", "/up/_design/update/_update/hello/" + id, null).status(201);
        assertEquals("<p>hello doc</p>", r.text());
        assertTrue(r.header("Content-Type").contains("charset=utf-8"), r.header("Content-Type"));
        assertEquals("sandbox", r.header("Content-Security-Policy")); // chttpd_external: a body that is not JSON
        assertEquals(id, r.header("X-Couch-Id"));
        JsonNode doc = s.asAdmin("GET", "/up/" + id, null).status(200).json();
        assertEquals("hello", doc.path("world").asText());
        assertEquals(r.header("X-Couch-Update-NewRev"), doc.path("_rev").asText());
        assertEquals("admin", doc.path("edited_by").path("name").asText());
        // No document id: the function gets null and may write nothing.
        r = as("PUT", "/up/_design/update/_update/hello", null).status(200);
        assertEquals("<p>Empty World</p>", r.text());
        assertNull(r.header("X-Couch-Update-NewRev"));
    }

    @Test
    void createsTheDocumentItNames() throws Exception {
        s.asAdmin("GET", "/up/nonExistingDoc", null).status(404);
        HttpTestServer.Resp r = as("PUT", "/up/_design/update/_update/hello/nonExistingDoc", null).status(201);
        assertEquals("<p>New World</p>", r.text());
        JsonNode doc = s.asAdmin("GET", "/up/nonExistingDoc", null).status(200).json();
        assertEquals("nonExistingDoc", doc.path("reqs").path(0).path("id").asText());
    }

    @Test
    void getIsNotAllowed() throws Exception {
        // render.js: "Update functions do not allow GET".
        as("GET", "/up/_design/update/_update/hello", null).error(405, "method_not_allowed", "Update functions do not allow GET");
    }

    @Test
    void queryAndFormReachTheFunction() throws Exception {
        String id = newDoc("{}");
        assertEquals("set title to test", as("PUT", "/up/_design/update/_update/in-place/" + id + "?field=title&value=test", null).status(201).text());
        assertEquals("test", s.asAdmin("GET", "/up/" + id, null).json().path("title").asText());
        as("PUT", "/up/_design/update/_update/form-update/" + id, "formfoo=bar&formbar=foo+bar%21",
                "Content-Type", "application/x-www-form-urlencoded").status(201);
        JsonNode doc = s.asAdmin("GET", "/up/" + id, null).json();
        assertEquals("bar", doc.path("formfoo").asText());
        assertEquals("foo bar!", doc.path("formbar").asText());
    }

    @Test
    void bumpsACounterRevisionByRevision() throws Exception {
        String id = newDoc("{}");
        as("PUT", "/up/_design/update/_update/bump-counter/" + id, null, "X-Couch-Full-Commit", "true").status(201);
        String rev = as("PUT", "/up/_design/update/_update/bump-counter/" + id, null).status(201).header("X-Couch-Update-NewRev");
        JsonNode doc = s.asAdmin("GET", "/up/" + id, null).json();
        assertEquals(2, doc.path("counter").asInt());
        assertEquals(rev, doc.path("_rev").asText());
    }

    @Test
    void uuidsAndSlashesInIds() throws Exception {
        assertEquals(32, as("PUT", "/up/_design/update/_update/get-uuid/", null).status(200).text().length());
        // COUCHDB-1229: the rest of the path is the document id, slashes and all.
        s.asAdmin("PUT", "/up/with%2Fslash", "{\"counter\":1}").status(201);
        HttpTestServer.Resp r = as("PUT", "/up/_design/update/_update/bump-counter/with/slash", null).status(201);
        assertEquals("with%2Fslash", r.header("X-Couch-Id")); // couch_util:url_encode
        assertEquals(2, s.asAdmin("GET", "/up/with%2Fslash", null).json().path("counter").asInt());
    }

    @Test
    void theResponseObjectDecides() throws Exception {
        // COUCHDB-648: the function's code wins over 201.
        String id = newDoc("{}");
        HttpTestServer.Resp r = as("PUT", "/up/_design/update/_update/code-n-bump/" + id, null).status(302);
        assertEquals("<h1>bumped it!</h1>", r.text());
        assertEquals(1, s.asAdmin("GET", "/up/" + id, null).json().path("counter").asInt());
        r = as("PUT", "/up/_design/update/_update/resp-code/", null).status(302);
        assertEquals("application/json", r.header("Content-Type")); // no body: chttpd_external's default type
        r = as("PUT", "/up/_design/update/_update/resp-code-and-json/", null).status(302);
        assertEquals(true, r.json().path("ok").asBoolean());
        s.asAdmin("GET", "/up/" + r.header("X-Couch-Id"), null).status(200);
        assertNull(r.header("Content-Security-Policy")); // JSON goes out as JSON
        // base64: the bytes, with the function's Content-Type.
        r = as("PUT", "/up/_design/update/_update/binary/" + id, "rubbish").status(201);
        assertEquals("hello world!", r.text());
        assertEquals("application/octet-stream", r.header("Content-Type"));
    }

    @Test
    void aDocumentWithoutIdIsRefused() throws Exception {
        as("PUT", "/up/_design/update/_update/empty/foo", null).error(400, "illegal_docid", "Document id must not be empty");
    }

    @Test
    void failuresAreCouchDbs() throws Exception {
        as("PUT", "/up/_design/update/_update/nope", null).error(404, "not_found", "missing json key: nope");
        as("PUT", "/up/_design/missing/_update/hello", null).error(404, "not_found", "missing");
        // chttpd_show: no function name is an invalid path.
        as("POST", "/up/_design/update/_update/", null).error(404, "update_error", "Invalid path.");
        HttpTestServer.Resp r = as("PUT", "/up/_design/update/_update/error", null).error(500, "render_error", null);
        assertTrue(r.json().path("reason").asText().contains("ReferenceError"), r.text());
        as("PUT", "/up/_design/update/_update/thrown", null).error(403, "forbidden", "not you");
        as("PUT", "/up/_design/update/_update/thrown-array", null).error(404, "not_found", "no such thing");
        as("PUT", "/up/_design/update/_update/no-response", null).error(500, "render_error", "undefined response from update function");
        as("PUT", "/up/_design/update/_update/bad-member", null).error(500, "external_response_error", null);
        as("PUT", "/up/_design/update/_update/forever", null).error(500, "os_process_error", "OS process timed out.");
    }

    @Test
    void theRequestObjectIsCouchDbs() throws Exception {
        JsonNode req = as("POST", "/up/_design/update/_update/echo/some%20doc?startkey=%5B1%5D&x=y", "{\"a\":1}",
                "Content-Type", "application/json", "X-Foo", "bar").status(200).json();
        assertEquals("_design/update", req.path("self").asText()); // the design document is `this`
        req = req.path("req");
        assertEquals("up", req.path("info").path("db_name").asText());
        assertEquals("some doc", req.path("id").asText());
        assertEquals("POST", req.path("method").asText());
        assertEquals("[\"up\",\"_design\",\"update\",\"_update\",\"echo\",\"some doc\"]", req.path("path").toString());
        assertEquals(req.path("path"), req.path("requested_path"));
        assertEquals("/up/_design/update/_update/echo/some%20doc?startkey=%5B1%5D&x=y", req.path("raw_path").asText());
        assertEquals("[1]", req.path("query").path("startkey").toString()); // JSON-decoded, as json_query_keys does
        assertEquals("y", req.path("query").path("x").asText());
        assertEquals("bar", req.path("headers").path("X-Foo").asText());
        assertTrue(req.path("headers").path("Authorization").isMissingNode(), "credentials are scrubbed");
        assertEquals("{\"a\":1}", req.path("body").asText());
        assertEquals("127.0.0.1", req.path("peer").asText());
        assertEquals("{}", req.path("cookie").toString());
        assertEquals("admin", req.path("userCtx").path("name").asText());
        assertEquals("up", req.path("userCtx").path("db").asText());
        assertTrue(req.path("secObj").isObject());
        assertEquals(32, req.path("uuid").asText().length());
        // An empty body (Content-Length: 0) is the empty string; no body at all is "undefined" (ShowFunctionsTest).
        assertEquals("", as("PUT", "/up/_design/update/_update/echo", null).json().path("req").path("body").asText());
    }

    @Test
    void requireLoadsModulesOfTheDesignDocument() throws Exception {
        assertEquals("hello world", as("PUT", "/up/_design/update/_update/uses-lib?who=world", null).status(200).text());
    }

    @Test
    void theWriteGoesThroughTheDoor() throws Exception {
        s.asAdmin("PUT", "/upv", null).status(201);
        s.asAdmin("PUT", "/upv/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
        s.asAdmin("PUT", "/upv/_design/v", "{\"validate_doc_update\":\"function(n, o, u) { if (n.bad) throw {forbidden: 'no bad docs'}; }\","
                + "\"updates\":{\"mk\":\"function(doc, req) { return [{_id: req.query.id, bad: req.query.bad === 'yes'}, 'made']; }\","
                + "\"ddoc\":\"function(doc, req) { return [{_id: '_design/evil'}, 'made']; }\"}}").status(201);
        // validate_doc_update applies to what an update writes.
        s.send("POST", "/upv/_design/v/_update/mk?id=a&bad=yes", null, "Authorization", BOB).error(403, "forbidden", "no bad docs");
        s.send("POST", "/upv/_design/v/_update/mk?id=a&bad=no", null, "Authorization", BOB).status(201);
        // A member is no admin: no design document through an update either.
        s.send("POST", "/upv/_design/v/_update/ddoc", null, "Authorization", BOB).error(403, "forbidden", null);
        s.asAdmin("GET", "/upv/_design/evil", null).status(404);
        // Non-members are refused before anything runs.
        s.send("POST", "/upv/_design/v/_update/mk?id=b", null).error(401, "unauthorized", null);
        s.send("POST", "/upv/_design/v/_update/mk?id=b", null, "Authorization", EVE).error(403, "forbidden", null);
        s.asAdmin("GET", "/upv/b", null).status(404);
        // A conflict is the write's: the function's document names an old revision.
        String rev = s.asAdmin("GET", "/upv/a", null).json().path("_rev").asText();
        s.asAdmin("PUT", "/upv/a?rev=" + rev, "{}").status(201);
        s.asAdmin("PUT", "/upv/_design/v2", "{\"updates\":{\"stale\":\"function(doc, req) { doc._rev = req.query.rev; return [doc, 'x']; }\"}}").status(201);
        s.asAdmin("PUT", "/upv/_design/v2/_update/stale/a?rev=" + rev, null).error(409, "conflict", "Document update conflict.");
    }
}

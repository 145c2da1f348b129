package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _show} functions, pinned to CouchDB 3.5.0's answers: its show_documents_test.exs
 * behaviour by behaviour, with the rules of chttpd_show (ETags, the document given or null) and
 * render.js (the list API in shows, {@code provides} and {@code registerType}).
 */
class ShowFunctionsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/sh", null).status(201);
        ObjectNode shows = Json.NODES.objectNode()
                .put("hello", "function(doc, req) { if (doc) return 'Hello World'; return req.id ? 'New World' : 'Empty World'; }")
                .put("just-name", "function(doc, req) { if (doc) return {body: 'Just ' + doc.name}; return {body: 'No such doc', code: 404}; }")
                .put("json", "function(doc, req) { return {json: doc}; }")
                .put("req-info", "function(doc, req) { return {json: req}; }")
                .put("show-deleted", "function(doc, req) { return doc ? doc._id : 'No doc ' + req.id; }")
                .put("render-error", "function(doc, req) { return noSuchVariable; }")
                .put("empty", "function(doc, req) { return ''; }")
                .put("fail", "function(doc, req) { return doc._id; }")
                .put("no-set-etag", "function(doc, req) { return {headers: {'Etag': 'skipped'}, body: 'something'}; }")
                .put("list-api", "function(doc, req) { start({'X-Couch-Test-Header': 'Yeah'}); send('Hey'); }")
                .put("list-api-provides", "function(doc, req) { provides('text', function() { send('foo, '); send('bar, '); send('baz!'); }); }")
                .put("list-api-provides-and-return", "function(doc, req) { provides('text', function() { send('4, '); send('5, '); send('6, '); return '7!'; });"
                        + " send('1, '); send('2, '); return '3, '; }")
                .put("list-api-mix", "function(doc, req) { start({'X-Couch-Test-Header': 'Yeah'}); send('Hey '); return 'Dude'; }")
                .put("list-api-mix-with-header", "function(doc, req) { start({'X-Couch-Test-Header': 'Yeah'}); send('Hey ');"
                        + " return {headers: {'X-Couch-Test-Header-Awesome': 'Oh Yeah!'}, body: 'Dude'}; }")
                .put("accept-switch", "function(doc, req) { if (req.headers['Accept'].match(/image/)) return {base64: 'iVBORw0KGgo=',"
                        + " headers: {'Content-Type': 'image/png', 'Vary': 'Accept'}}; return {body: 'accepting text requests', headers: {'Content-Type': 'text/html', 'Vary': 'Accept'}}; }")
                .put("provides", "function(doc, req) { registerType('foo', 'application/foo', 'application/x-foo');"
                        + " provides('html', function() { return 'Ha ha, you said \"' + doc.word + '\".'; }); provides('foo', function() { return 'foofoo'; }); }")
                .put("withSlash", "function(doc, req) { return {json: doc}; }")
                .put("secObj", "function(doc, req) { return {json: req.secObj}; }")
                .put("compile-error", "function(doc, req) { return ; ) }")
                .put("modules", "function(doc, req) { var a = require('lib/a'); return a.v + ' ' + (require('lib/a') === a) + ' ' + a.helper(); }")
                .put("bad-require", "function(doc, req) { return require('lib/nothing'); }");
        ObjectNode ddoc = Json.NODES.objectNode().put("language", "javascript");
        ddoc.set("shows", shows);
        ddoc.putObject("lib").put("a", "var b = require('./b'); exports.v = b.v + 1; exports.helper = function () { return require('../helpers/h').name; };")
                .put("b", "exports.v = 41;");
        ddoc.putObject("helpers").put("h", "exports.name = 'helped';");
        s.asAdmin("PUT", "/sh/_design/template", Json.write(ddoc)).status(201);
        s.asAdmin("PUT", "/sh/test-doc-id", "{\"word\":\"plankton\",\"name\":\"Rusty\"}").status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp get(String path, String... headers) throws Exception {
        String[] h = new String[headers.length + 2];
        h[0] = "Authorization";
        h[1] = ADMIN;
        System.arraycopy(headers, 0, h, 2, headers.length);
        return s.send("GET", path, null, h);
    }

    @Test
    void showsADocumentOrNone() throws Exception {
        HttpTestServer.Resp r = get("/sh/_design/template/_show/hello/test-doc-id").status(200);
        assertEquals("Hello World", r.text());
        assertTrue(r.header("Content-Type").contains("charset=utf-8"));
        assertEquals("Empty World", get("/sh/_design/template/_show/hello").text());
        assertEquals("", get("/sh/_design/template/_show/empty").status(200).text());
        assertEquals("Just Rusty", get("/sh/_design/template/_show/just-name/test-doc-id").text());
        // A missing document is null to the function, which decides the answer...
        r = get("/sh/_design/template/_show/just-name/missingdoc").status(404);
        assertEquals("No such doc", r.text());
        assertEquals("New World", get("/sh/_design/template/_show/hello/nonExistingDoc").text());
        // ...unless it fails on it: then the document was not found (render.js).
        get("/sh/_design/template/_show/fail/nonExistingDoc").error(404, "not_found", "document not found");
    }

    @Test
    void errors() throws Exception {
        get("/sh/_design/template/_show/").error(404, "show_error", "Invalid path.");
        get("/sh/_design/missingddoc/_show/just-name/test-doc-id").error(404, "not_found", "missing");
        get("/sh/_design/template/_show/nope").error(404, "not_found", "missing json key: nope");
        HttpTestServer.Resp r = get("/sh/_design/template/_show/render-error/test-doc-id").error(500, "render_error", null);
        assertTrue(r.json().path("reason").asText().contains("ReferenceError"), r.text());
        get("/sh/_design/template/_show/compile-error").error(500, "compilation_error", null);
    }

    @Test
    void theRequestObject() throws Exception {
        JsonNode req = get("/sh/_design/template/_show/req-info/test-doc-id?foo=bar", "Accept", "text/html;text/plain;*/*", "X-Foo", "bar")
                .status(200).json();
        assertEquals("bar", req.path("headers").path("X-Foo").asText());
        assertEquals("{\"foo\":\"bar\"}", req.path("query").toString());
        assertEquals("GET", req.path("method").asText());
        assertEquals("test-doc-id", req.path("path").path(5).asText());
        assertEquals("sh", req.path("info").path("db_name").asText());
        assertEquals("", req.path("body").asText()); // this client sends Content-Length: 0
        // No body at all: "undefined", as CouchDB's JSON encoder writes the atom.
        try (RawHttp c = new RawHttp(s.http.port())) {
            RawHttp.Resp raw = c.send("GET /sh/_design/template/_show/req-info HTTP/1.1\r\nHost: x\r\nAuthorization: " + ADMIN + "\r\n\r\n").read();
            assertEquals(200, raw.status());
            assertEquals("undefined", Json.MAPPER.readTree(raw.body()).path("body").asText());
        }
    }

    @Test
    void etags() throws Exception {
        String rev = s.asAdmin("PUT", "/sh/test-doc-id2", "{\"name\":\"Rusty\"}").status(201).json().path("rev").asText();
        HttpTestServer.Resp r = get("/sh/_design/template/_show/just-name/test-doc-id2");
        String etag = r.header("ETag");
        assertEquals("Accept", r.header("Vary"));
        get("/sh/_design/template/_show/just-name/test-doc-id2", "If-None-Match", etag).status(304);
        s.asAdmin("PUT", "/sh/test-doc-id2?rev=" + rev, "{\"name\":\"Crusty\"}").status(201);
        assertEquals("Just Crusty", get("/sh/_design/template/_show/just-name/test-doc-id2", "If-None-Match", etag).status(200).text());
        // The function cannot set the ETag.
        assertNotEquals("skipped", get("/sh/_design/template/_show/no-set-etag/test-doc-id").header("ETag"));
        // Another Accept is another ETag.
        String html = get("/sh/_design/template/_show/accept-switch/test-doc-id", "Accept", "text/html;text/plain;*/*").header("ETag");
        HttpTestServer.Resp png = get("/sh/_design/template/_show/accept-switch/test-doc-id", "Accept", "image/png;*/*");
        assertEquals("image/png", png.header("Content-Type"));
        assertNotEquals(html, png.header("ETag"));
    }

    @Test
    void providesAndRegisterType() throws Exception {
        HttpTestServer.Resp r = get("/sh/_design/template/_show/provides/test-doc-id", "Accept", "text/html,application/atom+xml; q=0.9");
        assertEquals("text/html; charset=utf-8", r.header("Content-Type"));
        assertEquals("Ha ha, you said \"plankton\".", r.text());
        r = get("/sh/_design/template/_show/provides/test-doc-id", "Accept", "application/x-foo");
        assertEquals("application/x-foo", r.header("Content-Type"));
        assertEquals("foofoo", r.text());
        get("/sh/_design/template/_show/provides/test-doc-id", "Accept", "text/monkeys").error(406, "not_acceptable", null);
        // No Accept: the first provider.
        assertEquals("Ha ha, you said \"plankton\".", s.send("GET", "/sh/_design/template/_show/provides/test-doc-id", null, "Authorization", ADMIN).text());
    }

    @Test
    void theListApiInShows() throws Exception {
        HttpTestServer.Resp r = get("/sh/_design/template/_show/list-api/foo");
        assertEquals("Hey", r.text());
        assertEquals("Yeah", r.header("X-Couch-Test-Header"));
        assertEquals("foo, bar, baz!", get("/sh/_design/template/_show/list-api-provides/foo?format=text").text());
        // chunks, then the return value, then the provider's chunks, then its return value
        assertEquals("1, 2, 3, 4, 5, 6, 7!", get("/sh/_design/template/_show/list-api-provides-and-return/foo?format=text").text());
        r = get("/sh/_design/template/_show/list-api-mix/foo");
        assertEquals("Hey Dude", r.text());
        assertEquals("Yeah", r.header("X-Couch-Test-Header"));
        r = get("/sh/_design/template/_show/list-api-mix-with-header/foo");
        assertEquals("Hey Dude", r.text());
        assertEquals("Yeah", r.header("X-Couch-Test-Header"));
        assertEquals("Oh Yeah!", r.header("X-Couch-Test-Header-Awesome"));
    }

    @Test
    void requireLoadsModulesOnce() throws Exception {
        // Paths from the design document's root, relative ones from the requiring module; each module runs once.
        assertEquals("42 true helped", get("/sh/_design/template/_show/modules").status(200).text());
        get("/sh/_design/template/_show/bad-require").error(500, "invalid_require_path", "require('lib/nothing'): module not found");
    }

    @Test
    void idsWithSlashesAndDeletedDocuments() throws Exception {
        s.asAdmin("PUT", "/sh/a%2Fb%2Fc", "{\"a\":1}").status(201);
        assertEquals("a/b/c", get("/sh/_design/template/_show/withSlash/a/b/c").status(200).json().path("_id").asText());
        String rev = s.asAdmin("PUT", "/sh/testdoc", "{\"foo\":1}").status(201).json().path("rev").asText();
        assertEquals("testdoc", get("/sh/_design/template/_show/show-deleted/testdoc").text());
        s.asAdmin("DELETE", "/sh/testdoc?rev=" + rev, null).status(200);
        assertEquals("No doc testdoc", get("/sh/_design/template/_show/show-deleted/testdoc").text());
    }

    @Test
    void membersOnlyAndTheSecurityObject() throws Exception {
        s.asAdmin("PUT", "/shs", null).status(201);
        s.asAdmin("PUT", "/shs/_security", "{\"members\":{\"names\":[\"bob\"]},\"foo\":true}").status(200);
        s.asAdmin("PUT", "/shs/_design/d", "{\"shows\":{\"sec\":\"function(doc, req) { return {json: req.secObj}; }\"}}").status(201);
        assertTrue(s.send("GET", "/shs/_design/d/_show/sec", null, "Authorization", BOB).status(200).json().path("foo").asBoolean());
        s.send("GET", "/shs/_design/d/_show/sec", null).error(401, "unauthorized", null);
        s.send("GET", "/shs/_design/d/_show/sec", null, "Authorization", EVE).error(403, "forbidden", null);
    }
}

package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * CouchDB's Elixir suite (issue 26) in views, attachments, JSONP and the query languages: each
 * behaviour pinned to CouchDB 3.5.0's status, error and body, so it holds without the slow suite.
 */
class CouchDbSuiteViewsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/sv", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static void config(String section, String key, String value) throws Exception {
        if (value == null) s.send("DELETE", "/_node/_local/_config/" + section + "/" + key, null, "Authorization", ADMIN);
        else s.send("PUT", "/_node/_local/_config/" + section + "/" + key, "\"" + value + "\"", "Authorization", ADMIN).status(200);
    }

    @Test
    void jsonpFramesJsonAsCouchHttpdDoes() throws Exception {
        // jsonp_test.exs; couch_httpd's initialize_jsonp, start_jsonp, end_jsonp, validate_callback.
        s.asAdmin("PUT", "/sv/j0", "{\"a\":0}").status(201);
        s.asAdmin("PUT", "/sv/_design/jsonp", "{\"views\":{\"v\":{\"map\":\"function(doc){if(doc.a===0) emit(null, doc.a);}\"}}}").status(201);
        // Off by default: plain JSON.
        HttpTestServer.Resp off = s.get("/sv/j0?callback=cb", "Authorization", ADMIN).status(200);
        assertEquals("application/json", off.header("Content-Type"));
        config("chttpd", "allow_jsonp", "true");
        try {
            HttpTestServer.Resp r = s.get("/sv/j0?callback=cb", "Authorization", ADMIN).status(200);
            assertEquals("application/javascript", r.header("Content-Type"));
            assertTrue(r.text().matches("/\\* CouchDB \\*/cb\\(\\{\"_id\":\"j0\",\"_rev\":\"1-[0-9a-f]+\",\"a\":0\\}\\);\n"), r.text());
            // Errors are framed too (send_error goes through send_json).
            HttpTestServer.Resp missing = s.get("/sv/nope?callback=a.b_c[0]", "Authorization", ADMIN).status(404);
            assertEquals("/* CouchDB */a.b_c[0]({\"error\":\"not_found\",\"reason\":\"missing\"});\n", missing.text());
            // A name outside [A-Za-z0-9._[]] is refused, unframed.
            s.get("/sv/j0?callback=cb%22", "Authorization", ADMIN).error(400, "bad_request", "invalid_callback");
            assertEquals("application/json", s.get("/sv/j0?callback=cb'", "Authorization", ADMIN).header("Content-Type"));
            // Chunked answers: the frame around the chunks, the newline after it.
            HttpTestServer.Resp v = s.get("/sv/_design/jsonp/_view/v?callback=cb", "Authorization", ADMIN).status(200);
            assertEquals("application/javascript", v.header("Content-Type"));
            assertTrue(v.text().startsWith("/* CouchDB */cb({\"total_rows\":1,"), v.text());
            assertTrue(v.text().endsWith("]});\n"), v.text());
            HttpTestServer.Resp c = s.get("/sv/_changes?callback=cb", "Authorization", ADMIN).status(200);
            assertTrue(c.text().startsWith("/* CouchDB */cb({\"results\":["), c.text());
            assertTrue(c.text().endsWith(");\n"), c.text());
            // An empty callback is no callback.
            assertEquals("application/json", s.get("/sv/j0?callback=", "Authorization", ADMIN).header("Content-Type"));
        } finally {
            config("chttpd", "allow_jsonp", null);
        }
    }
}

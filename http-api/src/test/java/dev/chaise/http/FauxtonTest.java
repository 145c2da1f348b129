package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * /_utils as CouchDB's chttpd serves it. The files here are a test fixture on the test classpath
 * (src/test/resources/fauxton); src-it checks the real release inside the jar.
 */
class FauxtonTest {
    static HttpTestServer s;
    static final String CSP = "child-src 'self' data: blob:; default-src 'self'; img-src 'self' data:; font-src 'self'; "
            + "script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline';";

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void utilsRedirectsToItsDirectory() throws Exception {
        var r = s.get("/_utils").status(301);
        assertEquals(s.base + "/_utils/", r.header("Location"));
    }

    @Test
    void filesCarryCouchDbsHeadersAndTheirType() throws Exception {
        var index = s.get("/_utils/").status(200);
        assertEquals("text/html; charset=utf-8", index.header("Content-Type"));
        assertEquals("private, must-revalidate", index.header("Cache-Control"));
        assertEquals(CSP, index.header("Content-Security-Policy"));
        assertEquals("<!doctype html><title>test fixture</title>\n", index.text());
        assertEquals(index.text(), s.get("/_utils/index.html").status(200).text());
        var js = s.get("/_utils/dashboard.assets/js/app.js").status(200);
        assertEquals("application/javascript", js.header("Content-Type"));
        assertEquals("private, must-revalidate", js.header("Cache-Control"));
        var head = s.send("HEAD", "/_utils/dashboard.assets/js/app.js", null).status(200);
        assertEquals("", head.text());
        // Revalidation: unchanged since the Last-Modified it was given.
        s.get("/_utils/index.html", "If-Modified-Since", index.header("Last-Modified")).status(304);
    }

    @Test
    void otherMethodsAre405AndMissingFiles404() throws Exception {
        for (String m : new String[] {"POST", "PUT", "DELETE"}) {
            assertEquals("GET,HEAD", s.send(m, "/_utils/", "x", "Authorization", ADMIN).error(405, "method_not_allowed", null).header("Allow"));
            assertEquals("GET,HEAD", s.send(m, "/_utils", "x", "Authorization", ADMIN).error(405, "method_not_allowed", null).header("Allow"));
        }
        s.get("/_utils/nope.js").error(404, "not_found", null);
        s.get("/_utils/../_all_dbs").error(404, "not_found", null); // never a file outside the release
        s.get("/_utils/dashboard.assets/..%2F..%2Findex.html").error(404, "not_found", null);
    }

    @Test
    void cspAndFauxtonAreSwitchable() throws Exception {
        s.asAdmin("PUT", "/_node/_local/_config/csp/utils_header_value", "\"default-src 'none'\"").status(200);
        assertEquals("default-src 'none'", s.get("/_utils/").status(200).header("Content-Security-Policy"));
        s.asAdmin("PUT", "/_node/_local/_config/csp/utils_enable", "\"false\"").status(200);
        assertNull(s.get("/_utils/").status(200).header("Content-Security-Policy"));
        s.asAdmin("DELETE", "/_node/_local/_config/csp/utils_enable", null).status(200);
        s.asAdmin("DELETE", "/_node/_local/_config/csp/utils_header_value", null).status(200);

        s.asAdmin("PUT", "/_node/_local/_config/chaise/fauxton", "\"false\"").status(200);
        s.get("/_utils/").error(404, "not_found", "Fauxton is turned off ([chaise] fauxton = false)");
        s.get("/_utils").error(404, "not_found", null);
        s.asAdmin("DELETE", "/_node/_local/_config/chaise/fauxton", null).status(200);
        s.get("/_utils/").status(200);
    }
}

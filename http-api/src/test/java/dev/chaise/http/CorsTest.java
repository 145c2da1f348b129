package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class CorsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @BeforeEach
    void reset() {
        s.config.delete("chttpd", "enable_cors", false);
        s.config.delete("cors", "origins", false);
        s.config.delete("cors", "credentials", false);
    }

    private static void enable(String origins) throws Exception {
        s.send("PUT", "/_node/_local/_config/chttpd/enable_cors", "\"true\"", "Authorization", ADMIN).status(200);
        s.send("PUT", "/_node/_local/_config/cors/origins", "\"" + origins + "\"", "Authorization", ADMIN).status(200);
    }

    @Test
    void offByDefault() throws Exception {
        assertNull(s.get("/", "Origin", "http://a.example").header("Access-Control-Allow-Origin"));
        s.send("OPTIONS", "/", null, "Origin", "http://a.example", "Access-Control-Request-Method", "GET")
                .error(405, "method_not_allowed", "Only GET,HEAD allowed");
    }

    @Test
    void acceptedOriginIsEchoedAndCouchHeadersExposed() throws Exception {
        enable("http://a.example, http://b.example");
        var r = s.get("/", "Origin", "http://a.example").status(200);
        assertEquals("http://a.example", r.header("Access-Control-Allow-Origin"));
        String exposed = r.header("Access-Control-Expose-Headers");
        assertTrue(exposed.contains("content-type") && exposed.contains("x-couch-request-id") && exposed.contains("etag"), exposed);
        assertNull(r.header("Access-Control-Allow-Credentials"));
        assertNull(s.get("/", "Origin", "http://evil.example").header("Access-Control-Allow-Origin"));
        // errors carry them too, so the browser lets the page read the error
        assertEquals("http://b.example", s.get("/nope", "Origin", "http://b.example").status(404).header("Access-Control-Allow-Origin"));
    }

    @Test
    void preflight() throws Exception {
        enable("*");
        var r = s.send("OPTIONS", "/db/doc", null, "Origin", "http://app.example", "Access-Control-Request-Method", "PUT",
                "Access-Control-Request-Headers", "Content-Type, Authorization").status(204);
        assertEquals("", r.text());
        assertEquals("http://app.example", r.header("Access-Control-Allow-Origin"));
        assertEquals("600", r.header("Access-Control-Max-Age"));
        assertTrue(r.header("Access-Control-Allow-Methods").contains("PUT"));
        assertEquals("Content-Type, Authorization", r.header("Access-Control-Allow-Headers"));
        // An unsupported request header: not a preflight CouchDB answers.
        s.send("OPTIONS", "/", null, "Origin", "http://app.example", "Access-Control-Request-Method", "GET",
                "Access-Control-Request-Headers", "X-Weird").status(405);
    }

    @Test
    void credentials() throws Exception {
        enable("http://a.example");
        s.send("PUT", "/_node/_local/_config/cors/credentials", "\"true\"", "Authorization", ADMIN).status(200);
        assertEquals("true", s.get("/", "Origin", "http://a.example").header("Access-Control-Allow-Credentials"));
    }
}

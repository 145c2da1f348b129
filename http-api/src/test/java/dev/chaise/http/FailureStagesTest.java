package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * No failure, at any stage of a request, leaves the client waiting: each stage (before the
 * handler, in the handler before and after its write commits, while the response's headers are
 * built, while a streamed body is written) is made to fail on purpose, and every request gets an
 * answer, or, once a streamed body has begun, a connection closed before the body's last chunk.
 */
class FailureStagesTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer(c -> c, http -> {
            Router r = http.router();
            r.add("GET", "/_fail/in-handler", req -> {
                throw new IllegalStateException("injected");
            });
            r.add("GET", "/_fail/stack", req -> {
                throw new StackOverflowError();
            });
            r.add("GET", "/_fail/oom", req -> {
                throw new OutOfMemoryError("injected");
            });
            r.add("PUT", "/_fail/after-commit/{id}", req -> {
                http.storage().open("db").updateUnchecked(List.of(DocUpdate.edit(req.param("id"), null, false, Json.NODES.objectNode().put("a", 1))), true);
                throw new IllegalStateException("injected after the commit");
            });
            r.add("GET", "/_fail/header-value", req -> Response.ok().withHeader("X-Name", req.query("v")));
            r.add("GET", "/_fail/header-name", req -> Response.ok().withHeader("Bad Name", "x"));
            r.add("GET", "/_fail/stream-header", req -> Response.jsonStream(200, out -> out.write("[]")).withHeader("Bad Name", "x"));
            r.add("GET", "/_fail/stream-early", req -> Response.jsonStream(200, out -> {
                out.write("[");
                throw new IllegalStateException("injected before the first flush");
            }));
            r.add("GET", "/_fail/stream-late", req -> Response.jsonStream(200, out -> {
                out.write("[1");
                out.flush();
                throw new IllegalStateException("injected after the first flush");
            }));
            r.add("GET", "/_fail/stream-error", req -> Response.jsonStream(200, out -> {
                out.write("[1");
                out.flush();
                throw new StackOverflowError();
            }));
        });
        s.asAdmin("PUT", "/db", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static int port() {
        return s.http.port();
    }

    static RawHttp.Resp get(String target) throws IOException {
        try (RawHttp c = new RawHttp(port())) {
            return c.send("GET " + target + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\n\r\n").read();
        }
    }

    @Test
    void beforeTheHandler() throws Exception {
        assertEquals(400, get("/%C3%28").status()); // not UTF-8: no database can have the name
        assertEquals(400, get("/db/%C3%28").status()); // an id that is not UTF-8: illegal_docid, before the database is looked for
        assertEquals(400, get("/a%zz").status());
        assertEquals(404, get("/db/nothing/here/at/all").status());
    }

    @Test
    void inTheHandler() throws Exception {
        RawHttp.Resp r = get("/_fail/in-handler");
        assertEquals(500, r.status());
        assertTrue(r.body().contains("\"unknown_error\""), r.body());
        // An Error is answered too: the thread that ran the handler must not die silently.
        assertEquals(500, get("/_fail/stack").status());
        assertEquals(500, get("/_fail/oom").status());
        assertEquals(200, get("/_up").status());
    }

    @Test
    void inTheHandlerAfterItsWriteCommitted() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("PUT /_fail/after-commit/written HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n").read();
            assertEquals(500, r.status());
        }
        s.asAdmin("GET", "/db/written", null).status(200);
    }

    @Test
    void whileBuildingHeaders() throws Exception {
        // Control characters and characters past Latin-1 (U+010A would reach the wire as a bare LF) are percent-encoded.
        for (String v : List.of("%00", "a%0D%0AX-Injected:%20yes", "%C4%8A", "%7F", "tab%09ok")) {
            try (RawHttp c = new RawHttp(port())) {
                RawHttp.Resp r = c.send("GET /_fail/header-value?v=" + v + " HTTP/1.1\r\nHost: x\r\n\r\nGET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertEquals(200, r.status(), v);
                assertEquals(null, r.header("X-Injected"));
                String sent = r.header("X-Name");
                assertNotNull(sent, v);
                assertTrue(sent.chars().allMatch(ch -> ch == '\t' || ch >= 0x20 && ch < 0x7f), v + " -> " + sent);
                assertEquals(200, c.read().status(), "the connection still frames the next answer");
            }
        }
        assertEquals("%00", get("/_fail/header-value?v=%00").header("X-Name"));
        assertEquals("%C4%8A", get("/_fail/header-value?v=%C4%8A").header("X-Name"));
        // A header that cannot be written at all: the answer is an error, not silence.
        assertEquals(500, get("/_fail/header-name").status());
        assertEquals(500, get("/_fail/stream-header").status());
    }

    @Test
    void whileStreaming() throws Exception {
        assertEquals(500, get("/_fail/stream-early").status());
        for (String path : List.of("/_fail/stream-late", "/_fail/stream-error")) {
            try (RawHttp c = new RawHttp(port())) {
                c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
                assertEquals("HTTP/1.1 200 OK", c.line());
                // The body began: the only honest ending left is a connection closed before the last chunk.
                assertThrows(Exception.class, () -> {
                    while (true) {
                        String l = c.line();
                        if (l == null) throw new IOException("closed");
                        if (l.equals("0")) break;
                    }
                }, path + ": the chunked body must not look complete");
            }
        }
    }

    @Test
    void attachmentNamesWithControlCharactersAreAnsweredAndLocated() throws Exception {
        for (int ch = 0; ch < 0x20; ch++) {
            String enc = String.format("%%%02X", ch);
            try (RawHttp c = new RawHttp(port())) {
                RawHttp.Resp r = c.send("PUT /db/ctl" + ch + "/" + enc + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                        + "\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello").read();
                assertEquals(201, r.status(), enc + ": " + r.body());
                assertEquals("http://x/db/ctl" + ch + "/" + enc, r.header("Location"));
            }
            assertEquals("hello", s.send("GET", "/db/ctl" + ch + "/" + enc, null, "Authorization", HttpTestServer.ADMIN).status(200).text());
        }
        // Names that need encoding otherwise, and a '/' inside a name, as CouchDB writes them.
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("PUT /db/loc/a%20b/c%C3%A9 HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                    + "\r\nContent-Length: 1\r\n\r\nx").read();
            assertEquals(201, r.status(), r.body());
            assertEquals("http://x/db/loc/a%20b%2Fc%C3%A9", r.header("Location"));
        }
    }

    @Test
    void attachmentNamesAreValidatedAsCouchDbDoes() throws Exception {
        s.send("PUT", "/db/v1/_att", "x", "Authorization", HttpTestServer.ADMIN)
                .error(400, "bad_request", "Attachment name '_att' starts with prohibited character '_'");
        s.send("PUT", "/db/_design/d/_att", "x", "Authorization", HttpTestServer.ADMIN)
                .error(400, "bad_request", "Attachment name '_att' starts with prohibited character '_'");
        // In a document body: a lone surrogate is not UTF-8.
        s.asAdmin("PUT", "/db/v2", "{\"_attachments\":{\"\\ud800x\":{\"data\":\"aGk=\"}}}")
                .error(400, "bad_request", "Attachment name is not UTF-8 encoded");
        s.asAdmin("PUT", "/db/v3", "{\"_attachments\":{\"_x\":{\"data\":\"aGk=\"}}}")
                .error(400, "bad_request", "Attachment name '_x' starts with prohibited character '_'");
    }
}

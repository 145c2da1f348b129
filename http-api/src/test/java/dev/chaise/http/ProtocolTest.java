package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The HTTP plumbing: keep-alive, pipelining, limits, Expect, HEAD, chunked streaming with back-pressure, disconnects. */
class ProtocolTest {
    static HttpTestServer s;
    static final AtomicLong produced = new AtomicLong();
    static volatile CountDownLatch producerStopped = new CountDownLatch(1);

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer(c -> c.withMaxRequestSize(1024).withIdleTimeoutSeconds(2), http -> {
            Router r = http.router();
            r.add("GET", "/_test/lines", req -> Response.jsonStream(200, out -> {
                int n = Integer.parseInt(req.query("n", "3"));
                out.write("[");
                for (int i = 0; i < n; i++) {
                    out.write((i == 0 ? "" : ",") + i);
                    out.flush();
                }
                out.write("]\n");
            }));
            // Writes until the client goes away, counting what it produced.
            r.add("GET", "/_test/forever", req -> Response.jsonStream(200, out -> {
                byte[] chunk = new byte[16 * 1024];
                java.util.Arrays.fill(chunk, (byte) 'x');
                try {
                    while (true) {
                        out.write(chunk);
                        produced.addAndGet(chunk.length);
                    }
                } finally {
                    producerStopped.countDown();
                }
            }));
            r.add("GET", "/_test/fails-early", req -> Response.jsonStream(200, out -> {
                out.write("[");
                throw HttpError.badRequest("nope");
            }));
            r.add("GET", "/_test/bug", req -> {
                throw new IllegalStateException("a bug");
            });
        });
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static int port() {
        return s.http.port();
    }

    @Test
    void keepAliveServesSeveralRequestsOnOneConnection() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            for (int i = 0; i < 3; i++) {
                RawHttp.Resp r = c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertEquals(200, r.status());
                assertEquals("{\"status\":\"ok\",\"seeds\":{}}\n", r.body());
                assertEquals("keep-alive", r.header("Connection"));
            }
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            StringBuilder all = new StringBuilder();
            for (int i = 0; i < 5; i++) all.append("GET /_up HTTP/1.1\r\nHost: x\r\nX-Couch-Request-ID: r").append(i).append("\r\n\r\n");
            all.append("HEAD /_up HTTP/1.1\r\nHost: x\r\nX-Couch-Request-ID: head\r\n\r\n");
            all.append("GET /_test/lines?n=2 HTTP/1.1\r\nHost: x\r\nX-Couch-Request-ID: last\r\n\r\n");
            c.send(all.toString());
            for (int i = 0; i < 5; i++) assertEquals("r" + i, c.read().header("X-Couch-Request-ID"));
            RawHttp.Resp head = c.read(true);
            assertEquals("head", head.header("X-Couch-Request-ID"));
            assertEquals("27", head.header("Content-Length"));
            RawHttp.Resp last = c.read();
            assertEquals("last", last.header("X-Couch-Request-ID"));
            assertEquals("[0,1]\n", last.body());
        }
    }

    @Test
    void http10ClosesAfterTheResponse() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("GET /_up HTTP/1.0\r\n\r\n").read();
            assertEquals(200, r.status());
            assertEquals("close", r.header("Connection"));
            assertTrue(c.closedByServer());
        }
    }

    @Test
    void streamedResponsesAreChunked() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("GET /_test/lines?n=1000 HTTP/1.1\r\nHost: x\r\n\r\n").read();
            assertEquals(200, r.status());
            assertEquals("chunked", r.header("Transfer-Encoding"));
            assertEquals("application/json", r.header("Content-Type"));
            assertNull(r.header("Content-Length"));
            StringBuilder want = new StringBuilder("[");
            for (int i = 0; i < 1000; i++) want.append(i == 0 ? "" : ",").append(i);
            assertEquals(want + "]\n", r.body());
            // and the connection is still usable
            assertEquals(200, c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read().status());
        }
    }

    @Test
    void headOfAStreamedResponseHasNoBody() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("HEAD /_test/lines HTTP/1.1\r\nHost: x\r\n\r\nGET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read(true);
            assertEquals(200, r.status());
            assertEquals("{\"status\":\"ok\",\"seeds\":{}}\n", c.read().body());
        }
    }

    @Test
    void failureBeforeTheFirstFlushIsAProperError() throws Exception {
        s.get("/_test/fails-early").error(400, "bad_request", "nope");
    }

    @Test
    void bugsAre500UnknownError() throws Exception {
        s.get("/_test/bug").error(500, "unknown_error", "IllegalStateException: a bug");
    }

    @Test
    void slowClientSlowsTheProducerAndDisconnectStopsIt() throws Exception {
        produced.set(0);
        producerStopped = new CountDownLatch(1);
        try (RawHttp c = new RawHttp(port())) {
            c.socket.setReceiveBufferSize(64 * 1024);
            c.send("GET /_test/forever HTTP/1.1\r\nHost: x\r\n\r\n");
            // Not reading: the producer is held at the channel's high-water mark plus socket buffers.
            // It must come to rest (two samples 500 ms apart agree) within 10 s, however slow the machine.
            long a = -1;
            long b = produced.get();
            for (long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10); a != b && System.nanoTime() < until; ) {
                Thread.sleep(500);
                a = b;
                b = produced.get();
            }
            assertEquals(a, b, "producer kept going while the client read nothing");
            assertTrue(b < 32L << 20, "produced " + b);
            // What is buffered (the server's send buffer grows to tcp_wmem's maximum, 4 MB here) drains first,
            // so read until the producer moves, or 10 s pass.
            InputStream in = c.in;
            byte[] buf = new byte[64 * 1024];
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (produced.get() <= b && System.nanoTime() < deadline) {
                if (in.read(buf) < 0) break;
            }
            assertTrue(produced.get() > b, "reading lets the producer continue");
        }
        assertTrue(producerStopped.await(10, TimeUnit.SECONDS), "producer did not stop after the client left");
    }

    @Test
    void oversizedBodiesAre413() throws Exception {
        String big = "x".repeat(2000);
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("PUT /db/_security HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n" + big).read();
            assertEquals(413, r.status());
            assertEquals("{\"error\":\"too_large\",\"reason\":\"the request entity is too large\"}\n", r.body());
            assertTrue(c.closedByServer());
        }
        // A chunked body has no length to refuse up front: it streams, and is 413 when the handler reads past the limit.
        s.asAdmin("PUT", "/chunky", null).status(201);
        try (RawHttp c = new RawHttp(port())) {
            String chunked = "PUT /chunky/_security HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "3e8\r\n" + "y".repeat(1000) + "\r\n" + "3e8\r\n" + "y".repeat(1000) + "\r\n0\r\n\r\n";
            RawHttp.Resp r = c.send(chunked).read();
            assertEquals(413, r.status());
            assertEquals("{\"error\":\"too_large\",\"reason\":\"the request entity is too large\"}\n", r.body());
        }
        // A chunked body within the limit is read whole, and the connection stays usable.
        try (RawHttp c = new RawHttp(port())) {
            String body = "{\"admins\":{\"names\":[\"a\"]}}";
            String chunked = "PUT /chunky/_security HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(10) + "\r\n" + body.substring(0, 10) + "\r\n" + Integer.toHexString(body.length() - 10) + "\r\n" + body.substring(10) + "\r\n0\r\n\r\n";
            RawHttp.Resp r = c.send(chunked).read();
            assertEquals(200, r.status(), r.body());
            assertEquals(200, c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read().status());
        }
        assertEquals("a", s.asAdmin("GET", "/chunky/_security", null).json().path("admins").path("names").path(0).asText());
        // Through java.net.http as well.
        s.send("PUT", "/db/_security", big, "Authorization", HttpTestServer.ADMIN).error(413, "too_large", "the request entity is too large");
    }

    @Test
    void expectContinue() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("PUT /db HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n").read();
            assertEquals(413, r.status());
            assertTrue(r.body().contains("\"too_large\""), r.body());
        }
        try (RawHttp c = new RawHttp(port())) {
            assertEquals(100, c.send("POST /_session HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n").read().status());
            RawHttp.Resp r = c.send("{}").read();
            assertEquals(400, r.status());
            assertTrue(r.body().contains("request body must contain a username"), r.body());
        }
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("PUT /db HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\nContent-Length: 1\r\n\r\nx").read();
            assertEquals(417, r.status());
            assertTrue(r.body().contains("\"expectation_failed\""), r.body());
        }
    }

    @Test
    void malformedRequests() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n").read();
            assertEquals(400, r.status());
            assertEquals("{\"error\":\"bad_request\",\"reason\":\"invalid_url_encoding\"}\n", r.body());
        }
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("GET /" + "a".repeat(9000) + " HTTP/1.1\r\nHost: x\r\n\r\n").read();
            assertEquals(414, r.status());
            assertTrue(r.body().contains("\"too_long\""), r.body());
        }
        try (RawHttp c = new RawHttp(port())) {
            assertEquals(400, c.send("this is not http\r\n\r\n").read().status());
            assertTrue(c.closedByServer());
        }
    }

    @Test
    void idleConnectionsAreClosed() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            assertEquals(200, c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read().status());
            long t0 = System.nanoTime();
            assertTrue(c.closedByServer());
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(waited >= 1000 && waited < 9000, "closed after " + waited + " ms");
        }
    }

    @Test
    void methodOverride() throws Exception {
        var r = s.send("POST", "/_up", "", "X-HTTP-Method-Override", "GET").status(200);
        assertEquals("ok", r.json().get("status").asText());
        // Only POST may be overridden.
        s.send("PUT", "/_up", "", "X-HTTP-Method-Override", "GET").error(405, "method_not_allowed", "Only GET,HEAD allowed");
    }
}

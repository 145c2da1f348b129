package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a connection gets when the client is large, slow or one too many: a status even when the
 * handler answers before reading a big body, {@code 100 Continue} in its turn, a close for a
 * request head that never ends, and a defined answer past {@code max_connections}.
 */
class ConnectionHardeningTest {
    static final int MAX_CONNECTIONS = 6;
    static HttpTestServer s;
    static int baseline;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer(c -> c.withMaxRequestSize(6L << 20).withRequestHeadTimeoutSeconds(1).withMaxConnections(MAX_CONNECTIONS), http -> {
            http.router().add("GET", "/_test/slow", req -> {
                Thread.sleep(400);
                return Response.ok();
            });
        });
        s.asAdmin("PUT", "/db", null).status(201);
        baseline = s.http.openConnections(); // the test server's own client keeps its connection
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /**
     * Each test starts on a server holding none of the earlier tests' connections: a client's close
     * reaches the server's count a moment later, and a connection made in that moment past
     * {@link #MAX_CONNECTIONS} is refused with a 503 and a close, which a client still sending its
     * body sees as a broken pipe.
     */
    @BeforeEach
    void earlierConnectionsAreGone() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (s.http.openConnections() > baseline && System.nanoTime() < deadline) Thread.sleep(10);
        assertTrue(s.http.openConnections() <= baseline, "connections left open by an earlier test: " + s.http.openConnections());
    }

    static int port() {
        return s.http.port();
    }

    /**
     * Sends a head and a body of {@code size} bytes from another thread, as a client that writes
     * its whole request before it reads, then reads the answer.
     */
    static RawHttp.Resp sendWhole(String head, int size) throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                try {
                    OutputStream out = c.out;
                    out.write(head.getBytes(StandardCharsets.UTF_8));
                    byte[] chunk = new byte[64 * 1024];
                    java.util.Arrays.fill(chunk, (byte) 'a');
                    for (int left = size; left > 0; left -= chunk.length) out.write(chunk, 0, Math.min(left, chunk.length));
                    out.flush();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            writer.get(20, TimeUnit.SECONDS); // a reset would fail the writing client here
            return c.read();
        }
    }

    @Test
    void earlyAnswersReachAClientStillSendingItsBody() throws Exception {
        int mb8 = 8 << 20;
        // 501 without reading: the body is refused at 6 MB by the limit, after the answer was sent.
        for (String path : List.of("/db/_purge", "/_uuids", "/db/_index", "/_replicate")) {
            RawHttp.Resp r = sendWhole("POST " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                    + "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + Integer.toHexString(mb8) + "\r\n", mb8);
            assertTrue(r.status() >= 400 && r.status() < 600 && r.status() != 500, path + " -> " + r.status() + " " + r.body());
        }
        // Declared over the limit: 413 with CouchDB's body.
        RawHttp.Resp r = sendWhole("POST /db/_purge HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                + "\r\nContent-Type: application/json\r\nContent-Length: " + mb8 + "\r\n\r\n", mb8);
        assertEquals(413, r.status());
        assertEquals("{\"error\":\"too_large\",\"reason\":\"the request entity is too large\"}\n", r.body());
        // 5 MB attachments to a missing database and without credentials: answered before the body is read.
        int mb5 = 5 << 20;
        r = sendWhole("PUT /missing/doc/att HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + mb5 + "\r\n\r\n", mb5);
        assertEquals(404, r.status(), r.body());
        r = sendWhole("PUT /db/doc/att HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: " + mb5 + "\r\n\r\n", mb5);
        assertEquals(401, r.status(), r.body());
        // And one that is read and stored.
        r = sendWhole("PUT /db/doc5/att HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                + "\r\nContent-Type: application/octet-stream\r\nContent-Length: " + mb5 + "\r\n\r\n", mb5);
        assertEquals(201, r.status(), r.body());
    }

    @Test
    void continueIsSentInTurnNotBeforeAnEarlierAnswer() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            c.send("GET /_test/slow HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "POST /_session HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n");
            RawHttp.Resp first = c.read();
            assertEquals(200, first.status(), "the slow request's answer comes first");
            assertEquals(100, c.read().status());
            RawHttp.Resp second = c.send("{}").read();
            assertEquals(400, second.status(), second.body());
        }
    }

    @Test
    void continueIsNotSentToARequestAnsweredWithoutItsBody() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            RawHttp.Resp r = c.send("PUT /db/doc/att HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 100000\r\n\r\n").read();
            assertEquals(401, r.status(), "a final answer, no 100: the client need not send the body");
            assertEquals("close", r.header("Connection"));
        }
    }

    @Test
    void aRequestHeadThatNeverEndsIsClosed() throws Exception {
        try (RawHttp c = new RawHttp(port())) {
            long t0 = System.nanoTime();
            c.send("GET / HTTP/1.1\r\n");
            boolean closed = false;
            for (int i = 0; i < 40 && !closed; i++) {
                try {
                    c.send("X");
                    Thread.sleep(250);
                } catch (IOException e) {
                    closed = true;
                }
                c.socket.setSoTimeout(1);
                try {
                    closed |= c.in.read() == -1;
                } catch (SocketTimeoutException e) {
                    // still open
                } catch (IOException e) {
                    closed = true;
                }
            }
            long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            assertTrue(closed, "a head trickling for 10 s was not closed");
            assertTrue(ms >= 900, "closed after " + ms + " ms, before the head timeout");
        }
        // A kept-alive connection with nothing on the wire is governed by the idle timeout, not the head timeout.
        try (RawHttp c = new RawHttp(port())) {
            assertEquals(200, c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read().status());
            Thread.sleep(2500);
            assertEquals(200, c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read().status());
        }
    }

    @Test
    void connectionsPastTheLimitGetA503() throws Exception {
        List<RawHttp> held = new ArrayList<>();
        try {
            // Fill the server up (other tests' connections may still be closing: take what is left).
            RawHttp refused = null;
            for (int i = 0; i < MAX_CONNECTIONS + 1 && refused == null; i++) {
                RawHttp c = new RawHttp(port());
                c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n");
                RawHttp.Resp r = c.read();
                if (r.status() == 503) {
                    refused = c;
                    assertEquals("{\"error\":\"service_unavailable\",\"reason\":\"too many connections\"}\n", r.body());
                    assertEquals("close", r.header("Connection"));
                    assertTrue(c.closedByServer());
                } else {
                    assertEquals(200, r.status());
                    held.add(c);
                }
            }
            assertTrue(refused != null, "connection " + (MAX_CONNECTIONS + 1) + " was served");
            refused.close();
            assertTrue(held.size() <= MAX_CONNECTIONS);
            // One goes away: a new one is served.
            held.removeFirst().close();
            boolean served = false;
            for (int i = 0; i < 50 && !served; i++) {
                try (RawHttp c = new RawHttp(port())) {
                    served = c.send("GET /_up HTTP/1.1\r\nHost: x\r\n\r\n").read().status() == 200;
                }
                if (!served) Thread.sleep(100);
            }
            assertTrue(served);
        } finally {
            for (RawHttp c : held) c.close();
        }
        assertFalse(held.isEmpty());
    }
}

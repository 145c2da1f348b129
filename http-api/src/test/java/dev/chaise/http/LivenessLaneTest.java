package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /} and {@code /_up} answer while every carrier of the virtual threads is busy: virtual
 * threads are not time-sliced, so requests that keep the carriers computing hold every other
 * request back, and a health check must not be one of them.
 */
class LivenessLaneTest {
    @Test
    void healthChecksAnswerWhileTheCarriersAreBusy() throws Exception {
        int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        CountDownLatch spinning = new CountDownLatch(carriers);
        var release = new java.util.concurrent.atomic.AtomicBoolean();
        try (HttpTestServer s = new HttpTestServer(c -> c, http -> http.router().add("GET", "/_spin", req -> {
            spinning.countDown();
            long x = 0;
            while (!release.get()) x++; // computes, never parks: keeps its carrier
            return Response.json(200, dev.chaise.storage.json.Json.NODES.objectNode().put("spun", x > 0));
        }))) {
            s.asAdmin("PUT", "/db", null).status(201);
            List<RawHttp> spinners = new ArrayList<>();
            try {
                for (int i = 0; i < carriers; i++) {
                    spinners.add(new RawHttp(s.http.port()).send("GET /_spin HTTP/1.1\r\nHost: x\r\n\r\n"));
                }
                assertTrue(spinning.await(10, TimeUnit.SECONDS), "the spinning requests hold every carrier");

                try (RawHttp other = new RawHttp(s.http.port())) { // the premise: a request on the carriers waits
                    other.socket.setSoTimeout(1_000);
                    other.send("GET /db HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\n\r\n");
                    assertThrows(SocketTimeoutException.class, other::read);
                }
                for (String probe : List.of("GET / ", "GET /_up ", "HEAD / ", "GET /?x=1 ")) {
                    try (RawHttp c = new RawHttp(s.http.port())) {
                        c.socket.setSoTimeout(5_000);
                        c.send(probe + "HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\n\r\n");
                        assertEquals(200, c.read(probe.startsWith("HEAD")).status(), probe);
                    }
                }
            } finally {
                release.set(true);
                for (RawHttp r : spinners) {
                    assertEquals(200, r.read().status());
                    r.close();
                }
            }
        }
    }
}

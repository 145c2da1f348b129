package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.http.handlers.Access;
import dev.chaise.http.handlers.DocumentHandlers;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.SecurityObject;
import dev.chaise.storage.Storage;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * With {@code [chttpd] loop_reads = true}, bounded reads of a store whose reads never wait are
 * answered on the connection's event loop ({@link HttpPipeline#servesOnLoop}, issue 27); everything
 * else on a virtual thread, as before.
 * Which is which is seen from outside: with every carrier of the virtual threads kept busy, a
 * request answered on the loop still answers, one on a virtual thread waits.
 */
class LoopServingTest {
    private static final String SECURITY = "{\"members\":{\"names\":[\"bob\"]},\"admins\":{}}";
    private static final String ACCESS_SECURITY = "{\"members\":{\"roles\":[\"_admin\",\"_users\"]},\"admins\":{\"roles\":[\"_admin\"]}}";

    /** Routes that keep every carrier computing until released: nothing on a virtual thread runs meanwhile. */
    private static final class Carriers {
        final int count = Integer.getInteger("jdk.virtualThreadScheduler.parallelism", Runtime.getRuntime().availableProcessors());
        final CountDownLatch spinning = new CountDownLatch(count);
        final AtomicBoolean release = new AtomicBoolean();

        void route(dev.chaise.http.wiring.ChaiseHttp http) {
            http.router().add("GET", "/_spin", req -> {
                spinning.countDown();
                long x = 0;
                while (!release.get()) x++; // computes, never parks: keeps its carrier
                return Response.json(200, dev.chaise.storage.json.Json.NODES.objectNode().put("spun", x > 0));
            });
        }
    }

    private static void seed(HttpTestServer s) throws Exception {
        s.config.set("per_doc_access", "enable", "true", false);
        s.config.set("chttpd", "loop_reads", "true", false);
        s.asAdmin("PUT", "/db", null).status(201);
        s.asAdmin("PUT", "/db/_security", SECURITY).status(200);
        s.asAdmin("PUT", "/db/doc", "{\"a\":1}").status(201);
        s.asAdmin("PUT", "/db/_design/x", "{\"views\":{}}").status(201);
        s.asAdmin("PUT", "/acc?access=true", null).status(201);
        s.asAdmin("PUT", "/acc/_security", ACCESS_SECURITY).status(200);
        s.asAdmin("PUT", "/acc/eves", "{\"_access\":[\"eve\"],\"b\":2}").status(201);
    }

    private static String get(String target, String auth) {
        return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + (auth == null ? "" : "Authorization: " + auth + "\r\n") + "\r\n";
    }

    @Test
    void documentReadsAnswerOnTheLoopWhileTheCarriersAreBusy() throws Exception {
        Carriers carriers = new Carriers();
        try (HttpTestServer s = new HttpTestServer(c -> c, carriers::route)) {
            seed(s);
            s.send("GET", "/db/doc", null, "Authorization", HttpTestServer.BOB).status(200); // bob's password now known: no PBKDF2 below
            List<RawHttp> spinners = new ArrayList<>();
            List<RawHttp> waiting = new ArrayList<>();
            try {
                for (int i = 0; i < carriers.count; i++) spinners.add(new RawHttp(s.http.port()).send(get("/_spin", null)));
                assertTrue(carriers.spinning.await(10, TimeUnit.SECONDS), "the spinning requests hold every carrier");

                // On the loop: a document GET or HEAD, whatever it answers (200, 404, 401, 403), on one kept-alive connection.
                try (RawHttp c = new RawHttp(s.http.port())) {
                    c.socket.setSoTimeout(5_000);
                    assertEquals(200, c.send(get("/db/doc", HttpTestServer.ADMIN)).read().status());
                    assertEquals(200, c.send(get("/db/doc", HttpTestServer.BOB)).read().status());
                    assertEquals(200, c.send(get("/db/_design/x?revs=true", HttpTestServer.ADMIN)).read().status());
                    assertEquals(200, c.send("HEAD /db/doc HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\n\r\n")
                            .read(true).status());
                    assertEquals(404, c.send(get("/db/missing", HttpTestServer.ADMIN)).read().status());
                    assertEquals(404, c.send(get("/nodb/doc", HttpTestServer.ADMIN)).read().status());
                    assertEquals(401, c.send(get("/db/doc", null)).read().status());
                    assertEquals(403, c.send(get("/acc/eves", HttpTestServer.BOB)).read().status()); // _access: not bob's
                }
                // On a virtual thread: not a bounded read, or a first password check (PBKDF2 on its own pool), or switched off.
                for (String request : List.of(get("/db", HttpTestServer.ADMIN), get("/db/doc?attachments=true", HttpTestServer.ADMIN),
                        get("/db/doc?open_revs=all", HttpTestServer.ADMIN), get("/db/_all_docs", HttpTestServer.ADMIN),
                        get("/db/doc", HttpTestServer.EVE), "PUT /db/doc2 HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN
                                + "\r\nContent-Length: 2\r\n\r\n{}")) {
                    RawHttp c = new RawHttp(s.http.port());
                    waiting.add(c);
                    c.socket.setSoTimeout(1_000);
                    c.send(request);
                    assertThrows(SocketTimeoutException.class, c::read, request);
                }
                s.config.set("chttpd", "loop_reads", "false", false);
                try (RawHttp c = new RawHttp(s.http.port())) {
                    c.socket.setSoTimeout(1_000);
                    c.send(get("/db/doc", HttpTestServer.ADMIN));
                    assertThrows(SocketTimeoutException.class, c::read, "loop_reads = false");
                }
            } finally {
                carriers.release.set(true);
                for (RawHttp r : spinners) {
                    assertEquals(200, r.read().status());
                    r.close();
                }
            }
            // The requests put off answer once the carriers are free, as they would have.
            List<Integer> statuses = new ArrayList<>();
            for (RawHttp c : waiting) {
                c.socket.setSoTimeout(10_000);
                statuses.add(c.read().status());
                c.close();
            }
            assertEquals(List.of(200, 200, 200, 200, 403, 201), statuses);
        }
    }

    /** One answer as the client sees it, less what differs between any two requests (the date, the request id). */
    private static RawHttp.Resp comparable(RawHttp.Resp r) {
        Map<String, String> h = new LinkedHashMap<>(r.headers());
        h.remove("date");
        h.remove("x-couch-request-id");
        return new RawHttp.Resp(r.status(), h, r.body());
    }

    @Test
    void theLoopAnswersAsTheVirtualThreadsDo() throws Exception {
        try (HttpTestServer s = new HttpTestServer()) {
            seed(s);
            String rev = s.asAdmin("GET", "/db/doc", null).status(200).json().path("_rev").asText();
            String wrong = "Basic " + java.util.Base64.getEncoder().encodeToString("bob:wrong".getBytes());
            List<String> requests = List.of(get("/db/doc", HttpTestServer.ADMIN), get("/db/doc", HttpTestServer.BOB),
                    "GET /db/doc HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\nIf-None-Match: \"" + rev + "\"\r\n\r\n",
                    "HEAD /db/doc HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\n\r\n",
                    get("/db/doc?revs=true&conflicts=true&meta=true", HttpTestServer.ADMIN), get("/db/_design/x", HttpTestServer.ADMIN),
                    get("/db/missing", HttpTestServer.ADMIN), get("/nodb/doc", HttpTestServer.ADMIN), get("/db/doc?rev=1-x", HttpTestServer.ADMIN),
                    get("/db/doc", null), get("/db/doc", HttpTestServer.EVE), get("/db/doc", wrong), get("/acc/eves", HttpTestServer.BOB),
                    get("/acc/eves", HttpTestServer.EVE), get("/_users/doc", HttpTestServer.BOB),
                    "GET /db/doc HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\nOrigin: http://example.com\r\n\r\n",
                    get("/db/doc?callback=f", HttpTestServer.ADMIN));
            // On the loop with eve's and bob's passwords not yet checked (those requests are put off to a virtual
            // thread), on virtual threads only, and on the loop again with the passwords known.
            List<List<RawHttp.Resp>> rounds = new ArrayList<>();
            for (String loopReads : List.of("true", "false", "true")) {
                s.config.set("chttpd", "loop_reads", loopReads, false);
                List<RawHttp.Resp> got = new ArrayList<>();
                try (RawHttp c = new RawHttp(s.http.port())) {
                    for (String r : requests) got.add(comparable(c.send(r).read(r.startsWith("HEAD"))));
                }
                rounds.add(got);
            }
            List<RawHttp.Resp> onThreads = rounds.get(1);
            assertEquals(List.of(200, 200, 304, 200, 200, 200, 404, 404, 404, 401, 403, 401, 403, 200, 404, 200, 200),
                    onThreads.stream().map(RawHttp.Resp::status).toList());
            for (int i = 0; i < requests.size(); i++) {
                assertEquals(onThreads.get(i), rounds.get(0).get(i), requests.get(i));
                assertEquals(onThreads.get(i), rounds.get(2).get(i), requests.get(i));
            }
        }
    }

    /** Bounded routes of a test's own: where each ran, and what a failure or a wait on the loop becomes. */
    @Test
    void whateverTheLoopMeetsItAnswers() throws Exception {
        List<Boolean> virtual = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (HttpTestServer s = new HttpTestServer(c -> c, http -> {
            Router r = http.router();
            r.add("GET", "/_t/where", Router.bounded(req -> {
                virtual.add(Thread.currentThread().isVirtual());
                return Response.json(200, dev.chaise.storage.json.Json.NODES.objectNode().put("ok", true));
            }, req -> req.query("off") == null));
            r.add("GET", "/_t/waits", Router.bounded(req -> {
                virtual.add(Thread.currentThread().isVirtual());
                dev.chaise.threads.NoWaiting.check("a test's wait"); // on the loop: put off, and run again on a virtual thread
                return Response.json(200, dev.chaise.storage.json.Json.NODES.objectNode().put("waited", true));
            }, req -> true));
            r.add("GET", "/_t/throws", Router.bounded(req -> {
                throw new IllegalStateException("a bug");
            }, req -> true));
            r.add("GET", "/_t/error", Router.bounded(req -> {
                throw new AssertionError("worse");
            }, req -> true));
            r.add("GET", "/_t/stream", Router.bounded(req -> Response.jsonStream(200, out -> out.write("{\"streamed\":true}".getBytes())),
                    req -> true));
        })) {
            s.config.set("chttpd", "loop_reads", "true", false);
            try (RawHttp c = new RawHttp(s.http.port())) {
                assertEquals(200, c.send(get("/_t/where", null)).read().status());
                assertEquals(200, c.send(get("/_t/where?off=1", null)).read().status());
                RawHttp.Resp waited = c.send(get("/_t/waits", null)).read();
                assertEquals("{\"waited\":true}", waited.body().strip());
                assertEquals(List.of(false, true, false, true), virtual, "the loop, a virtual thread, the loop and again on one");
                for (String failing : List.of("/_t/throws", "/_t/error")) {
                    RawHttp.Resp r = c.send(get(failing, null)).read();
                    assertEquals(500, r.status(), failing);
                    assertEquals("unknown_error", dev.chaise.storage.json.Json.MAPPER.readTree(r.body()).path("error").asText(), failing);
                }
                RawHttp.Resp streamed = c.send(get("/_t/stream", null)).read();
                assertEquals("{\"streamed\":true}", streamed.body());
                assertEquals(200, c.send(get("/_t/where", null)).read().status(), "the connection goes on");
            }
        }
    }

    @Test
    void onUnlessSwitchedOff() {
        assertTrue(RequestSettings.of(new dev.chaise.http.config.InMemoryConfigStore(Map.of())).loopReads());
        assertTrue(RequestSettings.of(new dev.chaise.http.config.InMemoryConfigStore(Map.of("chttpd", Map.of("loop_reads", "true")))).loopReads());
        assertFalse(RequestSettings.of(new dev.chaise.http.config.InMemoryConfigStore(Map.of("chttpd", Map.of("loop_reads", "false")))).loopReads());
    }

    @Test
    void aStoreWhoseReadsWaitServesNothingOnTheLoop() throws Exception {
        try (EmbeddedKvStore embedded = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            assertTrue(embedded.readsNeverWait());
            assertInstanceOf(Router.Bounded.class, documentGet(embedded));
            KvStore waits = new KvStore() { // as fdb's: the interface's default
                @Override
                public Transaction createTransaction() {
                    return embedded.createTransaction();
                }

                @Override
                public StoreTimer timer() {
                    return embedded.timer();
                }

                @Override
                public String backendName() {
                    return "fdb";
                }

                @Override
                public void close() {}
            };
            assertFalse(waits.readsNeverWait());
            assertFalse(documentGet(waits) instanceof Router.Bounded);
        }
    }

    private static Router.Handler documentGet(KvStore kv) {
        try (Storage storage = new Storage(kv, SecurityObject.ADMIN_ONLY_JSON)) {
            Router r = new Router();
            new DocumentHandlers(new Access(storage), null).register(r);
            return r.match("GET", List.of("db", "doc")).handler();
        }
    }
}

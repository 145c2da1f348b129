package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM while clients write: the server exits 0, every write it acknowledged (201) is there after
 * a restart with the acknowledged revision, no answer was a 5xx, and every document that exists at
 * all is whole, acknowledged or not (each carries its own check: a half-written one would fail it).
 */
class ShutdownUnderLoadTest {
    static final ObjectMapper JSON = new ObjectMapper();
    static final int WRITERS = 8;
    static final int PARTS = 12;

    /** A document that can tell whether all of it is there: every part and the nested copy of its counter. */
    static ObjectNode body(int writer, int i, int version) {
        ObjectNode d = JSON.createObjectNode().put("writer", writer).put("i", i).put("v", version).put("parts", PARTS);
        ArrayNode parts = d.putArray("payload");
        for (int p = 0; p < PARTS; p++) parts.add(JSON.createObjectNode().put("p", p).put("text", ("w" + writer + "-" + i + "-" + p + " ").repeat(8)));
        d.putObject("nested").putObject("deeper").put("i", i).put("v", version);
        return d;
    }

    static String whole(JsonNode d) {
        int writer = d.path("writer").asInt(-1);
        int i = d.path("i").asInt(-1);
        int v = d.path("v").asInt(-1);
        JsonNode payload = d.path("payload");
        if (writer < 0 || i < 0 || v < 0 || !payload.isArray() || payload.size() != d.path("parts").asInt()) return "parts missing";
        for (int p = 0; p < payload.size(); p++) {
            if (!payload.get(p).path("text").asText().equals(("w" + writer + "-" + i + "-" + p + " ").repeat(8))) return "part " + p + " wrong";
        }
        if (d.path("nested").path("deeper").path("i").asInt(-1) != i || d.path("nested").path("deeper").path("v").asInt(-1) != v) return "nested wrong";
        return null;
    }

    @Test
    void sigtermDuringWritesLosesNothingAcknowledgedAndHalfWritesNothing(@TempDir Path dir) throws Exception {
        String ini = "[chaise]\nstorage = embedded\ndata_dir = " + dir.resolve("data") + "\njs_warmup_docs = 0\nview_autoupdate_delay_ms = 0\nshutdown_timeout = 20\n";
        ChaiseProcess first = new ChaiseProcess("chaise-sigterm-before.log", ini, 0, null);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        String auth = "Basic " + Base64.getEncoder().encodeToString(("admin:" + first.password).getBytes());
        send(client, first.url, auth, "PUT", "/load", null);

        Map<String, String> acked = new ConcurrentHashMap<>(); // id -> revision acknowledged last
        List<String> serverErrors = new CopyOnWriteArrayList<>();
        AtomicInteger afterSignal = new AtomicInteger();
        List<Thread> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            writers.add(Thread.ofVirtual().start(() -> {
                Map<String, String> mine = new java.util.HashMap<>();
                for (int i = 0; first.server.isAlive(); i++) {
                    try {
                        if (writer % 2 == 0) {
                            // Single documents: a new one, then an update of the one before.
                            String id = "w" + writer + "-" + i;
                            HttpResponse<String> r = send(client, first.url, auth, "PUT", "/load/" + id, body(writer, i, 1).toString());
                            record(r, id, mine, acked, serverErrors, afterSignal, first);
                            if (i > 0 && mine.containsKey("w" + writer + "-" + (i - 1))) {
                                String prev = "w" + writer + "-" + (i - 1);
                                ObjectNode b = body(writer, i - 1, 2).put("_rev", mine.get(prev));
                                record(send(client, first.url, auth, "PUT", "/load/" + prev, b.toString()), prev, mine, acked, serverErrors, afterSignal, first);
                            }
                        } else {
                            // _bulk_docs of five.
                            ObjectNode req = JSON.createObjectNode();
                            ArrayNode docs = req.putArray("docs");
                            for (int k = 0; k < 5; k++) docs.add(body(writer, i * 5 + k, 1).put("_id", "w" + writer + "-" + (i * 5 + k)));
                            HttpResponse<String> r = send(client, first.url, auth, "POST", "/load/_bulk_docs", req.toString());
                            if (r.statusCode() >= 500) serverErrors.add(r.statusCode() + " " + r.body());
                            if (r.statusCode() == 201) {
                                for (JsonNode row : JSON.readTree(r.body())) {
                                    if (row.path("ok").asBoolean()) acked.put(row.get("id").asText(), row.get("rev").asText());
                                }
                                if (!first.server.isAlive() || signalled) afterSignal.incrementAndGet();
                            }
                        }
                    } catch (IOException e) {
                        // refused or cut: not acknowledged, so the client does not count it
                        if (!first.server.isAlive()) return;
                        pause();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }));
        }
        // SIGTERM once enough writes were acknowledged (a busy machine may take a while), so there is something to lose.
        long loadDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (acked.size() < 200 && System.nanoTime() < loadDeadline) Thread.sleep(50);
        int before = acked.size();
        signalled = true;
        long t0 = System.nanoTime();
        first.server.destroy(); // SIGTERM
        assertTrue(first.server.waitFor(60, TimeUnit.SECONDS), "the server did not stop within 60 s of SIGTERM");
        long stopMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        for (Thread t : writers) t.join(30_000);
        assertEquals(0, first.server.exitValue(), "exit code after SIGTERM; see target/chaise-sigterm-before.log");
        assertEquals(List.of(), serverErrors, "no 5xx while stopping");
        assertTrue(before > 50, "the load wrote too little to prove anything: " + before);
        String log = Files.readString(ChaiseProcess.MODULE.resolve("target/chaise-sigterm-before.log"));
        assertTrue(log.contains("stopping: no new connections") && log.contains("stopped"), log);
        System.out.printf("SIGTERM under load: %d writes acknowledged (%d of them after the signal), stopped in %d ms%n",
                acked.size(), afterSignal.get(), stopMillis);

        try (ChaiseProcess second = new ChaiseProcess("chaise-sigterm-after.log", ini, 0, first.password)) {
            for (Map.Entry<String, String> e : acked.entrySet()) {
                HttpResponse<String> r = send(client, second.url, auth, "GET", "/load/" + e.getKey(), null);
                assertEquals(200, r.statusCode(), "acknowledged " + e.getKey() + " is gone: " + r.body());
                JsonNode d = JSON.readTree(r.body());
                assertEquals(e.getValue(), d.get("_rev").asText(), "acknowledged revision of " + e.getKey());
            }
            JsonNode all = JSON.readTree(send(client, second.url, auth, "GET", "/load/_all_docs?include_docs=true", null).body());
            int whole = 0;
            for (JsonNode row : all.get("rows")) {
                String broken = whole(row.get("doc"));
                assertEquals(null, broken, row.get("id").asText() + " is not whole: " + row.get("doc"));
                whole++;
            }
            assertTrue(whole >= acked.size(), whole + " documents, " + acked.size() + " acknowledged");
            JsonNode info = JSON.readTree(send(client, second.url, auth, "GET", "/load", null).body());
            assertEquals(whole, info.get("doc_count").asInt(), "doc_count agrees with the documents there");
        }
    }

    private static volatile boolean signalled;

    private static void record(HttpResponse<String> r, String id, Map<String, String> mine, Map<String, String> acked,
                               List<String> serverErrors, AtomicInteger afterSignal, ChaiseProcess p) throws IOException {
        if (r.statusCode() >= 500) serverErrors.add(r.statusCode() + " " + r.body());
        if (r.statusCode() != 201) return;
        String rev = JSON.readTree(r.body()).get("rev").asText();
        mine.put(id, rev);
        acked.put(id, rev);
        if (signalled) afterSignal.incrementAndGet();
    }

    private static void pause() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static HttpResponse<String> send(HttpClient c, String base, String auth, String method, String path, String body)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(30)).header("Authorization", auth)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (body != null) b.header("Content-Type", "application/json");
        return c.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
}

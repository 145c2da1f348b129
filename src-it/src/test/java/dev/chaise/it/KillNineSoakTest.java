package dev.chaise.it;

import static dev.chaise.it.KillNineProbe.adopt;
import static dev.chaise.it.KillNineProbe.deleteTree;
import static dev.chaise.it.KillNineProbe.expect;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.it.KillNineProbe.Tracked;
import dev.chaise.it.KillNineProbe.UnexpectedAnswer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * kill -9 under a mixed write load, {@value #CYCLES_DEFAULT} times, against the server jar on its
 * on-disk embedded storage. Eight writers each own their documents and do single PUTs, updates,
 * deletes, {@code _bulk_docs} of ten and attachment PUTs; another thread queries a view all along,
 * so a build is often running when the process dies. After each restart, before any new write:
 * <ul>
 *   <li>every acknowledged write is there: each document is as its last acknowledged write left
 *       it, or as the one write in flight at the kill made it (which may or may not have landed);</li>
 *   <li>{@code doc_count} equals the rows of {@code _all_docs};</li>
 *   <li>{@code _changes} lists each document exactly once, live and deleted ones together;</li>
 *   <li>the view (a {@code _count} by type) equals a recount over {@code _all_docs}.</li>
 * </ul>
 * The first view query after each restart is timed. Figures go to {@code target/kill9-soak.txt}
 * and docs/reliability.md. Slow: {@code ./chaise test --slow}.
 */
@Tag("slow")
class KillNineSoakTest {
    static final int CYCLES_DEFAULT = 20;
    private static final String DB = "soak";
    private static final String[] TYPES = {"apple", "pear", "plum", "fig", "kiwi"};
    private static final int WRITERS = 8;
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A document as a write left it: {@code op} is the writing operation's number, in the body. */
    record State(String rev, boolean deleted, long op, String type, String attDigest) {}

    private final Map<String, Tracked<State>> docs = new ConcurrentHashMap<>();
    /** Answers a writer did not expect while the server was up (a 5xx, say): each fails the test. */
    private final List<String> anomalies = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();
    private HttpClient http;
    private String url;
    private String auth;

    @Test
    void everyAcknowledgedWriteSurvivesKillNine() throws Exception {
        int cycles = Integer.getInteger("chaise.soak.cycles", CYCLES_DEFAULT);
        Path data = ChaiseProcess.MODULE.resolve("target/kill9-soak-data");
        deleteTree(data);
        String password = UUID.randomUUID().toString();
        // Default settings, as users run the server; -Dchaise.soak.chaise=... adds [chaise] lines (e.g. js_warmup_docs = 0).
        String chaise = "storage = embedded\ndata_dir = " + data + "\n" + System.getProperty("chaise.soak.chaise", "").replace("\\n", "\n") + "\n";
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        auth = "Basic " + Base64.getEncoder().encodeToString(("admin:" + password).getBytes(StandardCharsets.UTF_8));
        Random rnd = new Random(20260101);
        List<String> report = new ArrayList<>();
        List<Long> restartToView = new ArrayList<>();
        List<Long> viewQuery = new ArrayList<>();
        long lossesTotal = 0;
        int orphanRestarts = 0;
        for (int cycle = 0; cycle <= cycles; cycle++) {
            long spawned = System.nanoTime();
            String logName = "chaise-kill9-soak-server-" + cycle + ".log";
            ChaiseProcess server = new ChaiseProcess(logName, "[chaise]\n" + chaise, 0, password);
            url = server.url;
            long up = System.nanoTime();
            if (cycle == 0) setUp();
            long viewStart = System.nanoTime();
            Map<String, Long> view = viewCounts();
            long viewDone = System.nanoTime();
            Check c = check(view);
            lossesTotal += c.losses.size();
            // The server logs the build jobs the dead process left running, re-queued at start.
            boolean orphan;
            try (var lines = Files.lines(ChaiseProcess.MODULE.resolve("target/" + logName), StandardCharsets.ISO_8859_1)) {
                orphan = lines.anyMatch(l -> l.contains("left running by a previous process"));
            }
            if (orphan) orphanRestarts++;
            if (cycle > 0) {
                restartToView.add(ms(viewDone - spawned));
                viewQuery.add(ms(viewDone - viewStart));
            }
            String line = String.format("cycle %2d: %6d docs (%5d deleted), %7d acknowledged writes so far, start %5d ms, first view query %5d ms (restart to view %5d ms)%s, losses %d",
                    cycle, c.docCount + c.delCount, c.delCount, acknowledged.get(), ms(up - spawned), ms(viewDone - viewStart), ms(viewDone - spawned),
                    orphan ? ", a build job left running was re-queued" : "", c.losses.size());
            System.out.println(line);
            report.add(line);
            assertEquals(List.of(), c.losses, "acknowledged writes lost or documents in a state no write made, cycle " + cycle);
            if (cycle == cycles) {
                server.close();
                break;
            }
            adopt(docs, c.actual);
            long before = acknowledged.get();
            long loadMs = 3_000 + rnd.nextInt(6_000);
            runLoadThenKill(server, loadMs, rnd.nextLong());
            assertEquals(List.of(), anomalies, "unexpected answers during the load of cycle " + cycle);
            assertTrue(acknowledged.get() > before, "the load made progress in cycle " + cycle);
        }
        restartToView.sort(null);
        viewQuery.sort(null);
        String summary = String.format("%d kill -9 cycles: %d acknowledged writes, %d lost; %d documents at the end. "
                        + "First view query after a restart: median %d ms, max %d ms (restart to view: median %d ms, max %d ms); "
                        + "%d restarts re-queued a build job left running",
                cycles, acknowledged.get(), lossesTotal, docs.size(), viewQuery.get(viewQuery.size() / 2), viewQuery.getLast(),
                restartToView.get(restartToView.size() / 2), restartToView.getLast(), orphanRestarts);
        System.out.println(summary);
        report.add(summary);
        Files.write(ChaiseProcess.MODULE.resolve("target/kill9-soak.txt"), report);
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    private void setUp() throws Exception {
        assertEquals(201, send("PUT", "/" + DB, null).statusCode());
        ObjectNode ddoc = JSON.createObjectNode();
        ddoc.putObject("views").putObject("types")
                .put("map", "function (doc) { if (doc.type) emit(doc.type, 1); }")
                .put("reduce", "_count");
        assertEquals(201, send("PUT", "/" + DB + "/_design/soak", ddoc).statusCode());
    }

    // ---------------------------------------------------------------- load

    private void runLoadThenKill(ChaiseProcess server, long loadMs, long seed) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            Random r = new Random(seed + w);
            threads.add(Thread.ofPlatform().name("soak-writer-" + w).start(() -> write(writer, r, stop)));
        }
        threads.add(Thread.ofPlatform().name("soak-view").start(() -> {
            while (!stop.get()) {
                try {
                    viewCounts();
                    Thread.sleep(20);
                } catch (UnexpectedAnswer e) {
                    if (!stop.get()) anomalies.add(e.getMessage());
                    return;
                } catch (Exception e) {
                    return; // the server died
                }
            }
        }));
        Thread.sleep(loadMs);
        server.kill();
        stop.set(true);
        for (Thread t : threads) t.join(60_000);
    }

    /** One writer's loop over the documents it owns; a failed request ends it (the server died). */
    private void write(int writer, Random r, AtomicBoolean stop) {
        List<String> mine = new ArrayList<>();
        for (var e : docs.entrySet()) if (e.getKey().startsWith("w" + writer + "-")) mine.add(e.getKey());
        try {
            while (!stop.get()) {
                int dice = r.nextInt(100);
                List<String> live = new ArrayList<>();
                if (dice >= 30) {
                    for (int i = 0; i < 8 && !mine.isEmpty(); i++) {
                        String id = mine.get(r.nextInt(mine.size()));
                        State s = docs.get(id).acked;
                        if (s != null && !s.deleted) live.add(id);
                    }
                }
                if (dice < 30 || live.isEmpty()) {
                    String id = "w" + writer + "-" + UUID.randomUUID();
                    mine.add(id);
                    put(id, null, TYPES[r.nextInt(TYPES.length)]);
                } else if (dice < 55) {
                    put(live.getFirst(), docs.get(live.getFirst()).acked, TYPES[r.nextInt(TYPES.length)]);
                } else if (dice < 65) {
                    delete(live.getFirst());
                } else if (dice < 85) {
                    List<String> ids = new ArrayList<>();
                    for (int i = 0; i < 10; i++) ids.add("w" + writer + "-" + UUID.randomUUID());
                    mine.addAll(ids);
                    bulk(ids, r);
                } else {
                    attach(live.getFirst(), r);
                }
            }
        } catch (IOException | InterruptedException e) {
            // killed mid-request: what was in flight stays pending
        } catch (UnexpectedAnswer e) {
            if (!stop.get()) anomalies.add(e.getMessage()); // an answer racing the kill is not the server's fault
        }
    }

    private void put(String id, State base, String type) throws IOException, InterruptedException {
        long op = ops.incrementAndGet();
        ObjectNode body = JSON.createObjectNode().put("type", type).put("op", op);
        if (base != null) body.put("_rev", base.rev);
        Tracked<State> t = docs.computeIfAbsent(id, k -> new Tracked<>());
        t.pending = new State(null, false, op, type, null); // a PUT without _attachments drops the attachment
        HttpResponse<String> res = send("PUT", "/" + DB + "/" + id, body);
        expect(res, 201);
        acked(t, t.pending, JSON.readTree(res.body()).get("rev").asText());
    }

    private void delete(String id) throws IOException, InterruptedException {
        Tracked<State> t = docs.get(id);
        State base = t.acked;
        t.pending = new State(null, true, base.op, base.type, null);
        HttpResponse<String> res = send("DELETE", "/" + DB + "/" + id + "?rev=" + base.rev, null);
        expect(res, 200);
        acked(t, t.pending, JSON.readTree(res.body()).get("rev").asText());
    }

    private void bulk(List<String> ids, Random r) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode list = body.putArray("docs");
        Map<String, State> pending = new HashMap<>();
        for (String id : ids) {
            long op = ops.incrementAndGet();
            String type = TYPES[r.nextInt(TYPES.length)];
            list.addObject().put("_id", id).put("type", type).put("op", op);
            Tracked<State> t = docs.computeIfAbsent(id, k -> new Tracked<>());
            t.pending = new State(null, false, op, type, null);
            pending.put(id, t.pending);
        }
        HttpResponse<String> res = send("POST", "/" + DB + "/_bulk_docs", body);
        expect(res, 201);
        for (JsonNode row : JSON.readTree(res.body())) {
            if (!row.path("ok").asBoolean()) throw new UnexpectedAnswer("_bulk_docs: " + row);
            String id = row.get("id").asText();
            acked(docs.get(id), pending.get(id), row.get("rev").asText());
        }
    }

    private void attach(String id, Random r) throws IOException, InterruptedException {
        Tracked<State> t = docs.get(id);
        State base = t.acked;
        byte[] bytes = new byte[1 + r.nextInt(16 * 1024)];
        r.nextBytes(bytes);
        String digest;
        try {
            digest = "md5-" + Base64.getEncoder().encodeToString(MessageDigest.getInstance("MD5").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        t.pending = new State(null, false, base.op, base.type, digest);
        HttpRequest req = HttpRequest.newBuilder(URI.create(url + "/" + DB + "/" + id + "/a.bin?rev=" + base.rev))
                .header("Authorization", auth).header("Content-Type", "application/octet-stream")
                .timeout(Duration.ofSeconds(60)).PUT(HttpRequest.BodyPublishers.ofByteArray(bytes)).build();
        HttpResponse<String> res = http.send(req, HttpResponse.BodyHandlers.ofString());
        expect(res, 201);
        acked(t, t.pending, JSON.readTree(res.body()).get("rev").asText());
    }

    private void acked(Tracked<State> t, State pending, String rev) {
        t.acked = new State(rev, pending.deleted, pending.op, pending.type, pending.attDigest);
        t.pending = null;
        acknowledged.incrementAndGet();
    }

    // ---------------------------------------------------------------- checks

    record Check(long docCount, long delCount, Map<String, State> actual, List<String> losses) {}

    private Check check(Map<String, Long> view) throws Exception {
        List<String> losses = new ArrayList<>();
        JsonNode info = JSON.readTree(get("/" + DB));
        long docCount = info.get("doc_count").asLong();
        long delCount = info.get("doc_del_count").asLong();

        JsonNode all = JSON.readTree(get("/" + DB + "/_all_docs?include_docs=true"));
        Map<String, State> actual = new HashMap<>();
        Map<String, Long> recount = new TreeMap<>();
        int rows = 0;
        for (JsonNode row : all.get("rows")) {
            rows++;
            JsonNode doc = row.get("doc");
            String id = row.get("id").asText();
            if (id.startsWith("_design/")) continue;
            JsonNode att = doc.path("_attachments").path("a.bin");
            actual.put(id, new State(doc.get("_rev").asText(), false, doc.get("op").asLong(), doc.get("type").asText(),
                    att.isMissingNode() ? null : att.get("digest").asText()));
            recount.merge(doc.get("type").asText(), 1L, Long::sum);
        }
        if (docCount != rows) losses.add("doc_count " + docCount + " but _all_docs has " + rows + " rows");
        if (all.get("total_rows").asLong() != rows) losses.add("_all_docs total_rows " + all.get("total_rows") + " but " + rows + " rows");

        JsonNode changes = JSON.readTree(get("/" + DB + "/_changes"));
        Set<String> seen = new HashSet<>();
        long deletedInFeed = 0;
        for (JsonNode ch : changes.get("results")) {
            String id = ch.get("id").asText();
            if (!seen.add(id)) losses.add("_changes lists " + id + " twice");
            if (ch.path("deleted").asBoolean()) {
                deletedInFeed++;
                Tracked<State> t = docs.get(id);
                State last = t == null ? null : t.acked != null ? t.acked : t.pending;
                actual.put(id, new State(ch.get("changes").get(0).get("rev").asText(), true, last == null ? -1 : last.op,
                        last == null ? null : last.type, null));
            }
        }
        if (seen.size() != docCount + delCount) losses.add("_changes has " + seen.size() + " documents, doc_count + doc_del_count is " + (docCount + delCount));
        if (deletedInFeed != delCount) losses.add("_changes has " + deletedInFeed + " deletions, doc_del_count is " + delCount);
        if (!view.equals(recount)) losses.add("the view " + view + " is not the recount " + recount);

        for (var e : docs.entrySet()) {
            Tracked<State> t = e.getValue();
            State a = actual.get(e.getKey());
            boolean asAcked = same(a, t.acked);
            boolean asPending = t.pending != null && same(a, t.pending);
            boolean absentNeverAcked = a == null && t.acked == null; // its creation was in flight and did not land
            if (!asAcked && !asPending && !absentNeverAcked) {
                losses.add(e.getKey() + ": is " + a + ", acknowledged " + t.acked + ", in flight " + t.pending);
            }
        }
        for (String id : actual.keySet()) if (!docs.containsKey(id)) losses.add(id + " exists but was never written");
        if (losses.size() > 20) losses = new ArrayList<>(losses.subList(0, 20));
        return new Check(docCount, delCount, actual, losses);
    }

    /** Same write: deletion, the operation that wrote the body, and the attachment. */
    private static boolean same(State actual, State expected) {
        if (actual == null || expected == null) return false;
        if (actual.deleted || expected.deleted) return actual.deleted && expected.deleted;
        return actual.op == expected.op && java.util.Objects.equals(actual.attDigest, expected.attDigest);
    }

    private Map<String, Long> viewCounts() throws IOException, InterruptedException {
        HttpResponse<String> res = send("GET", "/" + DB + "/_design/soak/_view/types?group=true", null);
        expect(res, 200);
        Map<String, Long> out = new TreeMap<>();
        for (JsonNode row : JSON.readTree(res.body()).get("rows")) out.put(row.get("key").asText(), row.get("value").asLong());
        return out;
    }

    // ---------------------------------------------------------------- http

    private String get(String path) throws IOException, InterruptedException {
        HttpResponse<String> res = send("GET", path, null);
        assertEquals(200, res.statusCode(), path + ": " + res.body());
        return res.body();
    }

    private HttpResponse<String> send(String method, String path, JsonNode body) throws IOException, InterruptedException {
        return KillNineProbe.send(http, url, auth, method, path, body);
    }
}

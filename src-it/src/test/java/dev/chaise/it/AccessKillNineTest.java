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
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * kill -9 of a server whose per-document access database (issue 28) is written by a stream of
 * writes that create, re-assign ({@code _access} changed) and delete documents, against the jar on
 * on-disk embedded storage, {@value #CYCLES_DEFAULT} times. Three admin writers give documents
 * random {@code _access} (users, roles, none); two users write their own, naming others too. After
 * each restart, before any new write:
 * <ul>
 *   <li>every acknowledged write is there: each document is as its last acknowledged write left it
 *       (body and {@code _access}), or as the one write in flight at the kill made it;</li>
 *   <li>for every user, their {@code _all_docs} (ids, revisions, {@code total_rows}),
 *       {@code GET /{db}}'s {@code doc_count} and {@code _find} equal the admin's live documents
 *       filtered by the rules ({@code _access} names them or one of their roles);</li>
 *   <li>their {@code _changes} lists each document once: every document they may read, deleted
 *       ones too, at its current revision, and any other only as a deletion that is not the
 *       document's revision (a document they lost: {@code AccessIndex.revokedRev}).</li>
 * </ul>
 * These listings come from {@code AccessIndex}, written in each document's transaction: a kill that
 * left them apart from the documents would show here. Figures go to {@code target/access-kill9.txt}
 * and docs/reliability.md. Slow: {@code ./chaise test --slow}.
 */
@Tag("slow")
class AccessKillNineTest {
    static final int CYCLES_DEFAULT = 6;
    private static final String DB = "acc";
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Users and their roles; every signed-in user of an access database also has {@code _users}. */
    private static final Map<String, List<String>> USERS = new TreeMap<>(Map.of(
            "u0", List.of("team-a"), "u1", List.of("team-a"), "u2", List.of("team-b"), "u3", List.of()));
    private static final String[] PRINCIPALS = {"u0", "u1", "u2", "u3", "team-a", "team-b", "_users"};
    private static final String[] USER_WRITERS = {"u0", "u2"};
    private static final int ADMIN_WRITERS = 3;

    /** A document as a write left it: {@code op} numbers the write that made its body; {@code access} null for none. */
    record State(String rev, boolean deleted, long op, List<String> access) {}

    private final Map<String, Tracked<State>> docs = new ConcurrentHashMap<>();
    private final List<String> anomalies = java.util.Collections.synchronizedList(new ArrayList<>());
    private final AtomicLong ops = new AtomicLong();
    private final AtomicLong acknowledged = new AtomicLong();
    private final AtomicLong reassigned = new AtomicLong();
    private HttpClient http;
    private String url;
    private String adminAuth;

    @Test
    void everyUsersListingsMatchTheDocumentsAfterKillNine() throws Exception {
        int cycles = Integer.getInteger("chaise.access.cycles", CYCLES_DEFAULT);
        Path data = ChaiseProcess.MODULE.resolve("target/access-kill9-data");
        deleteTree(data);
        String password = UUID.randomUUID().toString();
        String ini = "[chaise]\nstorage = embedded\ndata_dir = " + data + "\n[per_doc_access]\nenable = true\n";
        http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();
        adminAuth = basic("admin", password);
        Random rnd = new Random(20261127);
        List<String> report = new ArrayList<>();
        int port = 0;
        for (int cycle = 0; cycle <= cycles; cycle++) {
            ChaiseProcess server = new ChaiseProcess("chaise-access-kill9-" + cycle + ".log", ini, port, password);
            port = server.port;
            url = server.url;
            if (cycle == 0) setUp();
            Check c = check();
            String line = String.format("cycle %2d: %5d docs (%4d deleted), %6d acknowledged writes so far (%5d re-assignments), user listings %s, %d feed rows of lost documents, losses %d",
                    cycle, c.live + c.deleted, c.deleted, acknowledged.get(), reassigned.get(), c.perUser, c.lostRows, c.losses.size());
            System.out.println(line);
            report.add(line);
            assertEquals(List.of(), c.losses, "acknowledged writes lost or listings apart from the documents, cycle " + cycle);
            if (cycle == cycles) {
                server.close();
                break;
            }
            adopt(docs, c.actual);
            long before = acknowledged.get();
            runLoadThenKill(server, 2_000 + rnd.nextInt(4_000), rnd.nextLong());
            assertEquals(List.of(), anomalies, "unexpected answers during the load of cycle " + cycle);
            assertTrue(acknowledged.get() > before, "the load made progress in cycle " + cycle);
        }
        String summary = String.format("%d kill -9 cycles: %d acknowledged writes (%d re-assignments of _access), 0 lost, every user's listings equal to the rules",
                cycles, acknowledged.get(), reassigned.get());
        System.out.println(summary);
        report.add(summary);
        Files.write(ChaiseProcess.MODULE.resolve("target/access-kill9.txt"), report);
    }

    private void setUp() throws Exception {
        expect(send(adminAuth, "PUT", "/" + DB + "?access=true", null), 201);
        expect(send(adminAuth, "PUT", "/" + DB + "/_security",
                JSON.readTree("{\"members\":{\"roles\":[\"_users\"]},\"admins\":{\"roles\":[\"_admin\"]}}")), 200);
        for (var u : USERS.entrySet()) {
            ObjectNode user = JSON.createObjectNode().put("name", u.getKey()).put("password", u.getKey() + "pw").put("type", "user");
            u.getValue().forEach(user.putArray("roles")::add);
            expect(send(adminAuth, "PUT", "/_users/org.couchdb.user:" + u.getKey(), user), 201);
        }
    }

    private static String basic(String name, String password) {
        return "Basic " + Base64.getEncoder().encodeToString((name + ":" + password).getBytes(StandardCharsets.UTF_8));
    }

    private static String userAuth(String user) {
        return basic(user, user + "pw");
    }

    // ---------------------------------------------------------------- load

    private void runLoadThenKill(ChaiseProcess server, long loadMs, long seed) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int w = 0; w < ADMIN_WRITERS; w++) {
            String prefix = "a" + w + "-";
            Random r = new Random(seed + w);
            threads.add(Thread.ofPlatform().name("access-admin-" + w).start(() -> write(prefix, null, r, stop)));
        }
        for (int w = 0; w < USER_WRITERS.length; w++) {
            String user = USER_WRITERS[w];
            Random r = new Random(seed + 100 + w);
            threads.add(Thread.ofPlatform().name("access-" + user).start(() -> write(user + "-", user, r, stop)));
        }
        Thread.sleep(loadMs);
        server.kill();
        stop.set(true);
        for (Thread t : threads) t.join(60_000);
    }

    /** A random {@code _access}: null (admins only) for an admin now and then; a user's always names them. */
    private static List<String> access(String user, Random r) {
        if (user == null && r.nextInt(8) == 0) return null;
        Set<String> out = new LinkedHashSet<>();
        if (user != null) out.add(user);
        for (String p : PRINCIPALS) if (r.nextInt(4) == 0) out.add(p);
        return List.copyOf(out);
    }

    /** One writer's loop over the documents it owns (ids under {@code prefix}); a failed request ends it (the server died). */
    private void write(String prefix, String user, Random r, AtomicBoolean stop) {
        String auth = user == null ? adminAuth : userAuth(user);
        List<String> mine = new ArrayList<>();
        for (String id : docs.keySet()) if (id.startsWith(prefix)) mine.add(id);
        try {
            while (!stop.get()) {
                int dice = r.nextInt(100);
                String live = null;
                for (int i = 0; i < 8 && !mine.isEmpty() && live == null; i++) {
                    String id = mine.get(r.nextInt(mine.size()));
                    State s = docs.get(id).acked;
                    if (s != null && !s.deleted) live = id;
                }
                if (dice < 25 || live == null) {
                    String id = prefix + UUID.randomUUID();
                    mine.add(id);
                    put(auth, id, null, access(user, r));
                } else if (dice < 65) {
                    put(auth, live, docs.get(live).acked, access(user, r)); // re-assigned: a new _access
                    reassigned.incrementAndGet();
                } else if (dice < 80) {
                    delete(auth, live);
                } else {
                    List<String> ids = new ArrayList<>();
                    for (int i = 0; i < 10; i++) ids.add(prefix + UUID.randomUUID());
                    mine.addAll(ids);
                    bulk(auth, ids, user, r);
                }
            }
        } catch (IOException | InterruptedException e) {
            // killed mid-request: what was in flight stays pending
        } catch (UnexpectedAnswer e) {
            if (!stop.get()) anomalies.add(e.getMessage());
        }
    }

    private static ObjectNode body(long op, List<String> access) {
        ObjectNode body = JSON.createObjectNode().put("op", op);
        if (access != null) access.forEach(body.putArray("_access")::add);
        return body;
    }

    private void put(String auth, String id, State base, List<String> access) throws IOException, InterruptedException {
        long op = ops.incrementAndGet();
        ObjectNode body = body(op, access);
        if (base != null) body.put("_rev", base.rev);
        Tracked<State> t = docs.computeIfAbsent(id, k -> new Tracked<>());
        t.pending = new State(null, false, op, access);
        HttpResponse<String> res = send(auth, "PUT", "/" + DB + "/" + id, body);
        expect(res, 201);
        acked(t, t.pending, JSON.readTree(res.body()).get("rev").asText());
    }

    private void delete(String auth, String id) throws IOException, InterruptedException {
        Tracked<State> t = docs.get(id);
        State base = t.acked;
        t.pending = new State(null, true, base.op, base.access); // a deletion keeps the stored _access
        HttpResponse<String> res = send(auth, "DELETE", "/" + DB + "/" + id + "?rev=" + base.rev, null);
        expect(res, 200);
        acked(t, t.pending, JSON.readTree(res.body()).get("rev").asText());
    }

    private void bulk(String auth, List<String> ids, String user, Random r) throws IOException, InterruptedException {
        ObjectNode req = JSON.createObjectNode();
        ArrayNode list = req.putArray("docs");
        Map<String, State> pending = new HashMap<>();
        for (String id : ids) {
            long op = ops.incrementAndGet();
            List<String> access = access(user, r);
            list.add(body(op, access).put("_id", id));
            Tracked<State> t = docs.computeIfAbsent(id, k -> new Tracked<>());
            t.pending = new State(null, false, op, access);
            pending.put(id, t.pending);
        }
        HttpResponse<String> res = send(auth, "POST", "/" + DB + "/_bulk_docs", req);
        expect(res, 201);
        for (JsonNode row : JSON.readTree(res.body())) {
            if (!row.path("ok").asBoolean()) throw new UnexpectedAnswer("_bulk_docs: " + row);
            String id = row.get("id").asText();
            acked(docs.get(id), pending.get(id), row.get("rev").asText());
        }
    }

    private void acked(Tracked<State> t, State pending, String rev) {
        t.acked = new State(rev, pending.deleted, pending.op, pending.access);
        t.pending = null;
        acknowledged.incrementAndGet();
    }

    // ---------------------------------------------------------------- checks

    /**
     * @param perUser each user's live documents, for the report
     * @param lostRows rows of the users' feeds for documents they lost (revoked), for the report
     */
    record Check(long live, long deleted, Map<String, State> actual, Map<String, Integer> perUser, long lostRows, List<String> losses) {}

    private static List<String> accessOf(JsonNode doc) {
        JsonNode a = doc.get("_access");
        if (a == null) return null;
        List<String> out = new ArrayList<>();
        a.forEach(p -> out.add(p.asText()));
        return out;
    }

    private Check check() throws Exception {
        List<String> losses = new ArrayList<>();
        Map<String, State> actual = new HashMap<>();
        for (JsonNode row : get(adminAuth, "/" + DB + "/_all_docs?include_docs=true").get("rows")) {
            JsonNode doc = row.get("doc");
            actual.put(row.get("id").asText(), new State(doc.get("_rev").asText(), false, doc.get("op").asLong(), accessOf(doc)));
        }
        long deleted = 0;
        for (JsonNode ch : get(adminAuth, "/" + DB + "/_changes?include_docs=true").get("results")) {
            if (!ch.path("deleted").asBoolean()) continue;
            deleted++;
            Tracked<State> t = docs.get(ch.get("id").asText());
            State last = t == null ? null : t.acked != null ? t.acked : t.pending;
            actual.put(ch.get("id").asText(), new State(ch.get("changes").get(0).get("rev").asText(), true, last == null ? -1 : last.op,
                    accessOf(ch.get("doc"))));
        }
        for (var e : docs.entrySet()) {
            Tracked<State> t = e.getValue();
            State a = actual.get(e.getKey());
            boolean asAcked = same(a, t.acked);
            boolean asPending = t.pending != null && same(a, t.pending);
            boolean absentNeverAcked = a == null && t.acked == null;
            if (!asAcked && !asPending && !absentNeverAcked) losses.add(e.getKey() + ": is " + a + ", acknowledged " + t.acked + ", in flight " + t.pending);
        }
        for (String id : actual.keySet()) if (!docs.containsKey(id)) losses.add(id + " exists but was never written");

        Map<String, Integer> perUser = new TreeMap<>();
        long lostRows = 0;
        for (var u : USERS.entrySet()) {
            String auth = userAuth(u.getKey());
            Set<String> principals = new LinkedHashSet<>(u.getValue());
            principals.add(u.getKey());
            principals.add("_users");
            Map<String, String> expectedLive = new TreeMap<>();
            Map<String, State> readable = new HashMap<>();
            actual.forEach((id, s) -> {
                if (s.access == null || s.access.stream().noneMatch(principals::contains)) return;
                readable.put(id, s);
                if (!s.deleted) expectedLive.put(id, s.rev);
            });
            perUser.put(u.getKey(), expectedLive.size());
            String who = u.getKey() + ": ";
            JsonNode all = get(auth, "/" + DB + "/_all_docs");
            Map<String, String> listed = new TreeMap<>();
            for (JsonNode row : all.get("rows")) listed.put(row.get("id").asText(), row.get("value").get("rev").asText());
            if (!listed.equals(expectedLive)) losses.add(who + "_all_docs " + diff(listed, expectedLive));
            if (all.get("total_rows").asLong() != expectedLive.size()) losses.add(who + "total_rows " + all.get("total_rows") + ", not " + expectedLive.size());
            long docCount = get(auth, "/" + DB).get("doc_count").asLong();
            if (docCount != expectedLive.size()) losses.add(who + "doc_count " + docCount + ", not " + expectedLive.size());
            HttpResponse<String> find = send(auth, "POST", "/" + DB + "/_find", JSON.readTree("{\"selector\":{},\"limit\":1000000,\"fields\":[\"_id\"]}"));
            expect(find, 200);
            Set<String> found = new java.util.TreeSet<>();
            JSON.readTree(find.body()).get("docs").forEach(d -> found.add(d.get("_id").asText()));
            if (!found.equals(expectedLive.keySet())) losses.add(who + "_find has " + found.size() + " documents, not " + expectedLive.size());
            Set<String> fed = new java.util.HashSet<>();
            for (JsonNode ch : get(auth, "/" + DB + "/_changes").get("results")) {
                String id = ch.get("id").asText();
                String rev = ch.get("changes").get(0).get("rev").asText();
                boolean del = ch.path("deleted").asBoolean();
                if (!fed.add(id)) losses.add(who + "_changes lists " + id + " twice");
                State s = readable.get(id);
                if (s != null && (!s.rev.equals(rev) || s.deleted != del)) losses.add(who + "_changes has " + id + " at " + rev + (del ? " deleted" : "") + ", it is " + s);
                State now = actual.get(id);
                if (s == null && (!del || now != null && now.rev.equals(rev))) losses.add(who + "_changes has " + id + " (" + rev + ") which is not theirs, and not as a loss");
                if (s == null) lostRows++;
            }
            for (String id : readable.keySet()) if (!fed.contains(id)) losses.add(who + "_changes lacks " + id);
        }
        if (losses.size() > 20) losses = new ArrayList<>(losses.subList(0, 20));
        return new Check(actual.size() - deleted, deleted, actual, perUser, lostRows, losses);
    }

    private static String diff(Map<String, String> got, Map<String, String> expected) {
        List<String> out = new ArrayList<>();
        for (var e : got.entrySet()) if (!Objects.equals(expected.get(e.getKey()), e.getValue())) out.add("+" + e.getKey() + "@" + e.getValue());
        for (var e : expected.entrySet()) if (!Objects.equals(got.get(e.getKey()), e.getValue())) out.add("-" + e.getKey() + "@" + e.getValue());
        return out.size() > 6 ? out.subList(0, 6) + " and " + (out.size() - 6) + " more" : out.toString();
    }

    /** Same write: deletion, the operation that wrote the body, and {@code _access}. */
    private static boolean same(State actual, State expected) {
        if (actual == null || expected == null) return false;
        if (actual.deleted || expected.deleted) return actual.deleted && expected.deleted && Objects.equals(actual.access, expected.access);
        return actual.op == expected.op && Objects.equals(actual.access, expected.access);
    }

    // ---------------------------------------------------------------- http

    private JsonNode get(String auth, String path) throws IOException, InterruptedException {
        HttpResponse<String> res = send(auth, "GET", path, null);
        assertEquals(200, res.statusCode(), path + ": " + res.body());
        return JSON.readTree(res.body());
    }

    private HttpResponse<String> send(String auth, String method, String path, JsonNode body) throws IOException, InterruptedException {
        return KillNineProbe.send(http, url, auth, method, path, body);
    }
}

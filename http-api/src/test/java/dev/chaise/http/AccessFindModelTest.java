package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A user's {@code _find} in a per-document access database (issue 28, beyond CouchDB's branch,
 * where {@code _find} is for admins only), against a model: the admin writes, re-assigns and
 * deletes documents with random {@code _access} and fields; after each step every user's
 * {@code _find} for random selectors, sorts, fields, skip, limit and bookmark pages equals the
 * admin's {@code _find} (on the admin's JSON index where there is a sort) filtered by the rules:
 * the documents whose {@code _access} names the user or one of their roles. Its
 * {@code total_keys_examined} is the user's documents, not the database's.
 */
class AccessFindModelTest {
    static HttpTestServer s;
    /** Who the users are to the rules: bob has role "reader", every signed-in user "_users". */
    static final Map<String, Set<String>> PRINCIPALS = Map.of(BOB, Set.of("bob", "reader", "_users"), EVE, Set.of("eve", "_users"));
    static final String[] NAMES = {"bob", "eve", "reader", "_users", "carol"};

    @BeforeAll
    static void start() throws Exception {
        s = AccessDatabaseTest.withAccess();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp as(String auth, String method, String path, String body) throws Exception {
        return s.send(method, path, body, "Authorization", auth, "Content-Type", "application/json");
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void aUsersFindIsTheAdminsFilteredByTheRules(long seed) throws Exception {
        Random rnd = new Random(seed);
        String db = "/find-model-" + seed;
        s.asAdmin("PUT", db + "?access=true", null).status(201);
        s.asAdmin("PUT", db + "/_security", AccessDatabaseTest.SECURITY).status(200);
        // the admin's index over everyone's documents, which a user's query must never use
        s.asAdmin("POST", db + "/_index", "{\"index\":{\"fields\":[\"n\"]},\"name\":\"by-n\",\"ddoc\":\"by-n\"}").status(200);
        Map<String, String> revs = new HashMap<>();
        List<Integer> numbers = new ArrayList<>();
        for (int i = 0; i < 400; i++) numbers.add(i);
        java.util.Collections.shuffle(numbers, rnd);
        int nextNumber = 0;
        for (int step = 0; step < 6; step++) {
            ArrayNode docs = Json.NODES.arrayNode();
            for (int k = 0; k < 25; k++) {
                String id = "d" + rnd.nextInt(80);
                ObjectNode d = docs.addObject().put("_id", id);
                if (revs.containsKey(id)) d.put("_rev", revs.get(id));
                if (revs.containsKey(id) && rnd.nextInt(6) == 0) {
                    d.put("_deleted", true);
                    continue;
                }
                if (rnd.nextInt(6) > 0) d.put("n", numbers.get(nextNumber++)); // unique, so sorts have no ties
                d.put("g", List.of("x", "y", "z").get(rnd.nextInt(3)));
                if (rnd.nextInt(8) > 0) {
                    ArrayNode a = d.putArray("_access");
                    for (String p : NAMES) if (rnd.nextInt(3) == 0) a.add(p);
                }
            }
            ObjectNode bulk = Json.NODES.objectNode();
            bulk.set("docs", dedupe(docs));
            for (JsonNode r : s.asAdmin("POST", db + "/_bulk_docs", bulk.toString()).status(201).json()) {
                if (r.has("rev")) revs.put(r.get("id").asText(), r.get("rev").asText());
            }
            for (String user : List.of(BOB, EVE)) {
                for (int q = 0; q < 6; q++) compare(db, user, query(rnd), rnd);
            }
        }
    }

    /** One write per id in a batch: the later one of the same id would conflict. */
    private static ArrayNode dedupe(ArrayNode docs) {
        Map<String, JsonNode> last = new java.util.LinkedHashMap<>();
        for (JsonNode d : docs) last.put(d.get("_id").asText(), d);
        ArrayNode out = Json.NODES.arrayNode();
        last.values().forEach(out::add);
        return out;
    }

    /** A random selector and sort: on n (the admin's index serves the sort), on _id, or none. */
    private static ObjectNode query(Random rnd) {
        ObjectNode q = Json.NODES.objectNode();
        int k = rnd.nextInt(400);
        String selector = switch (rnd.nextInt(5)) {
            case 0 -> "{}";
            case 1 -> "{\"g\":\"x\"}";
            case 2 -> "{\"n\":{\"$gt\":" + k + "}}";
            case 3 -> "{\"$or\":[{\"g\":\"y\"},{\"n\":{\"$lt\":" + k + "}}]}";
            default -> "{\"_id\":{\"$gte\":\"d4\"},\"g\":{\"$ne\":\"z\"}}";
        };
        q.set("selector", json(selector));
        switch (rnd.nextInt(4)) {
            case 0 -> q.set("sort", json("[{\"n\":\"asc\"}]"));
            case 1 -> q.set("sort", json("[{\"n\":\"desc\"}]"));
            case 2 -> { // the admin's _all_docs sorts by _id only for a selector on it
                q.set("selector", json("{\"$and\":[" + selector + ",{\"_id\":{\"$gt\":null}}]}"));
                q.set("sort", json("[{\"_id\":\"desc\"}]"));
            }
            default -> { }
        }
        if (rnd.nextBoolean()) q.set("fields", json("[\"_id\",\"n\",\"g\"]"));
        return q;
    }

    private void compare(String db, String user, ObjectNode q, Random rnd) throws Exception {
        // the admin's answer, every match, filtered by the rules
        ObjectNode all = q.deepCopy().put("limit", 100_000);
        all.remove("fields");
        List<JsonNode> expected = new ArrayList<>();
        for (JsonNode d : s.asAdmin("POST", db + "/_find", all.toString()).status(200).json().get("docs")) {
            boolean theirs = false;
            for (JsonNode p : d.path("_access")) theirs |= PRINCIPALS.get(user).contains(p.asText());
            if (theirs) expected.add(q.has("fields") ? project(d) : d);
        }
        boolean sorted = q.has("sort");
        // without a sort the order is the index's, which differs: compare as sets
        if (!sorted) expected.sort(java.util.Comparator.comparing((JsonNode d) -> d.get("_id").asText()));
        ObjectNode whole = q.deepCopy().put("limit", 100_000).put("execution_stats", true);
        JsonNode got = as(user, "POST", db + "/_find", whole.toString()).status(200).json();
        List<JsonNode> docs = list(got.get("docs"));
        if (!sorted) docs.sort(java.util.Comparator.comparing((JsonNode d) -> d.get("_id").asText()));
        assertEquals(expected, docs, q.toString());
        assertTrue(got.get("execution_stats").get("total_keys_examined").asLong() <= live(db, user), got.toString());
        if (!sorted) return;
        // a window (skip and limit), then bookmark pages, of the same order
        int skip = rnd.nextInt(5), limit = 1 + rnd.nextInt(6);
        ObjectNode window = q.deepCopy().put("skip", skip).put("limit", limit);
        assertEquals(expected.subList(Math.min(skip, expected.size()), Math.min(skip + limit, expected.size())),
                list(as(user, "POST", db + "/_find", window.toString()).status(200).json().get("docs")), window.toString());
        List<JsonNode> paged = new ArrayList<>();
        String bookmark = null;
        for (int page = 0; page <= expected.size() / limit + 1; page++) {
            ObjectNode next = q.deepCopy().put("limit", limit);
            if (bookmark != null) next.put("bookmark", bookmark);
            JsonNode r = as(user, "POST", db + "/_find", next.toString()).status(200).json();
            paged.addAll(list(r.get("docs")));
            bookmark = r.get("bookmark").asText();
            if (r.get("docs").isEmpty()) break;
        }
        assertEquals(expected, paged, "pages of " + q);
    }

    private static long live(String db, String user) throws Exception {
        return as(user, "GET", db + "/_all_docs", null).status(200).json().get("total_rows").asLong();
    }

    private static JsonNode project(JsonNode d) {
        ObjectNode o = Json.NODES.objectNode();
        for (String f : List.of("_id", "n", "g")) if (d.has(f)) o.set(f, d.get(f));
        return o;
    }

    private static List<JsonNode> list(JsonNode a) {
        List<JsonNode> out = new ArrayList<>();
        a.forEach(out::add);
        return out;
    }

    private static JsonNode json(String s) {
        try {
            return Json.MAPPER.readTree(s);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}

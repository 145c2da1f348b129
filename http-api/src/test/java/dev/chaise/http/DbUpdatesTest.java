package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code GET /_db_updates}: CouchDB's events, order and feeds, from storage's versionstamped subspace. */
class DbUpdatesTest {
    static HttpTestServer s;
    static final AtomicInteger NAMES = new AtomicInteger();

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /** A fresh name under {@code stem}, so each test reads only its own databases' events. */
    static String name(String stem) {
        return stem + NAMES.incrementAndGet();
    }

    /** The feed's rows for databases whose names start with {@code stem}, as db_name:type. */
    static List<String> events(JsonNode feed, String stem) {
        List<String> out = new ArrayList<>();
        for (JsonNode r : feed.get("results")) {
            if (r.get("db_name").asText().startsWith(stem)) out.add(r.get("db_name").asText() + ":" + r.get("type").asText());
        }
        return out;
    }

    @Test
    void eventsComeInCommitOrderOncePerDatabaseAndType() throws Exception {
        String a = name("order-");
        String b = name("order-");
        s.asAdmin("PUT", "/" + a, null).status(201);
        s.asAdmin("PUT", "/" + b, null).status(201);
        JsonNode first = s.asAdmin("GET", "/_db_updates", null).status(200).json();
        assertEquals(List.of(a + ":created", b + ":created"), events(first, "order-"));

        s.asAdmin("PUT", "/" + a + "/doc", "{}").status(201);
        s.docs.flushDbUpdates(); // the server does it within half a second
        s.asAdmin("DELETE", "/" + b, null).status(200);
        JsonNode all = s.asAdmin("GET", "/_db_updates", null).status(200).json();
        // As CouchDB 3.5.0 answers (its _global_changes keeps one document per type and database):
        // created a, created b, updated a, deleted b.
        assertEquals(List.of(a + ":created", b + ":created", a + ":updated", b + ":deleted"), events(all, "order-"),
                "each database and type once, at its last event");
        s.asAdmin("PUT", "/" + a + "/doc2", "{}").status(201);
        s.docs.flushDbUpdates();
        assertEquals(List.of(a + ":created", b + ":created", b + ":deleted", a + ":updated"),
                events(s.asAdmin("GET", "/_db_updates", null).status(200).json(), "order-"), "a's next write moves its updated row");
        all = s.asAdmin("GET", "/_db_updates", null).status(200).json();
        JsonNode lastRow = all.get("results").get(all.get("results").size() - 1);
        assertEquals(lastRow.get("seq"), all.get("last_seq"));
        assertTrue(lastRow.get("seq").asText().matches("[0-9a-f]{24}"), lastRow.toString());

        JsonNode since = s.asAdmin("GET", "/_db_updates?since=" + all.get("last_seq").asText(), null).status(200).json();
        assertEquals(0, since.get("results").size());
        assertEquals(all.get("last_seq"), since.get("last_seq"), "an empty page keeps where it was");
        String c = name("order-");
        s.asAdmin("PUT", "/" + c, null).status(201);
        JsonNode next = s.asAdmin("GET", "/_db_updates?since=" + all.get("last_seq").asText(), null).status(200).json();
        assertEquals(List.of(c + ":created"), events(next, "order-"));

        JsonNode one = s.asAdmin("GET", "/_db_updates?limit=1", null).status(200).json();
        assertEquals(1, one.get("results").size());
        assertEquals(one.at("/results/0/seq"), one.get("last_seq"));
        JsonNode down = s.asAdmin("GET", "/_db_updates?descending=true", null).status(200).json();
        assertEquals(List.of(c + ":created", a + ":updated", b + ":deleted", b + ":created", a + ":created"), events(down, "order-"), "newest first");
    }

    @Test
    void onlyServerAdminsAndCouchDbsErrors() throws Exception {
        s.get("/_db_updates").error(401, "unauthorized", "You are not a server admin.");
        s.get("/_db_updates", "Authorization", HttpTestServer.BOB).error(401, "unauthorized", "You are not a server admin.");
        s.asAdmin("GET", "/_db_updates?feed=bogus", null).error(400, "bad_request", "Supported `feed` types: normal, continuous, longpoll, eventsource");
        s.asAdmin("GET", "/_db_updates?limit=-1", null).error(400, "bad_request", "invalid_integer");
        s.asAdmin("GET", "/_db_updates?since=nonsense", null).error(400, "bad_request", "Malformed sequence supplied in 'since' parameter.");
        s.asAdmin("POST", "/_db_updates", "{}").status(405);
    }

    /** Lines of a streamed response, read as they come. */
    static Iterator<String> lines(String query) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create(s.base + "/_db_updates" + query))
                .header("Authorization", HttpTestServer.ADMIN).timeout(java.time.Duration.ofSeconds(30)).build();
        HttpResponse<java.util.stream.Stream<String>> r = s.client.send(req, HttpResponse.BodyHandlers.ofLines());
        assertEquals(200, r.statusCode());
        return r.body().iterator();
    }

    @Test
    void liveFeedsSeeNewDatabases() throws Exception {
        Iterator<String> cont = lines("?feed=continuous&since=now&heartbeat=50");
        String d = name("live-");
        s.asAdmin("PUT", "/" + d, null).status(201);
        String l;
        while ((l = cont.next()).isEmpty()) { } // heartbeats until the event
        JsonNode row = Json.MAPPER.readTree(l);
        assertEquals(d, row.get("db_name").asText());
        assertEquals("created", row.get("type").asText());

        String since = row.get("seq").asText();
        var poll = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            try {
                return s.asAdmin("GET", "/_db_updates?feed=longpoll&since=" + since, null).json();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        String e = name("live-");
        s.asAdmin("PUT", "/" + e, null).status(201);
        JsonNode answered = poll.get(20, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(List.of(e + ":created"), events(answered, "live-"), "a longpoll answers with the first events after since");

        List<String> ended = new ArrayList<>();
        lines("?feed=continuous&since=" + since + "&timeout=100").forEachRemaining(ended::add);
        assertEquals(2, ended.size(), ended.toString());
        assertEquals(Json.MAPPER.readTree(ended.get(0)).get("seq"), Json.MAPPER.readTree(ended.get(1)).get("last_seq"));

        List<String> events = new ArrayList<>();
        lines("?feed=eventsource&since=" + since + "&timeout=100").forEachRemaining(events::add);
        assertTrue(events.get(0).startsWith("data: {"), events.toString());
        assertEquals("id: " + Json.MAPPER.readTree(events.get(0).substring(6)).get("seq"), events.get(1));
    }
}

package dev.chaise.http;

import dev.chaise.http.wiring.ChaiseHttp;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _changes}: every feed type (normal, longpoll, continuous, eventsource) and parameter.
 * Live feeds are observed causally: a test waits until the server holds the feed open
 * ({@link ChaiseHttp#openChangesFeeds()}), then writes, then reads what the write produced.
 */
class ChangesTest {
    static final String A = "a".repeat(32);
    static final String B = "b".repeat(32);
    static HttpTestServer s;
    static int dbs;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static String newDb() throws Exception {
        String name = "ch" + (dbs++);
        s.asAdmin("PUT", "/" + name, null).status(201);
        return name;
    }

    static String put(String db, String id, String body) throws Exception {
        return s.asAdmin("PUT", "/" + db + "/" + id, body).status(201).json().get("rev").asText();
    }

    static JsonNode changes(String db, String query) throws Exception {
        return s.asAdmin("GET", "/" + db + "/_changes" + query, null).status(200).json();
    }

    static List<String> ids(JsonNode feed) {
        List<String> out = new ArrayList<>();
        feed.get("results").forEach(r -> out.add(r.get("id").asText()));
        return out;
    }

    /** Waits for a condition the server reaches on its own (not a timing assertion: the limit is generous). */
    static void await(BooleanSupplier cond, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!cond.getAsBoolean()) {
            assertTrue(System.nanoTime() < deadline, "never happened: " + what);
            Thread.sleep(10);
        }
    }

    static void awaitFeeds(int n) throws InterruptedException {
        await(() -> s.http.openChangesFeeds() == n, n + " open feeds (now " + s.http.openChangesFeeds() + ")");
    }

    // ---------------------------------------------------------------- normal

    @Test
    void normalFeedOrderSinceLimitDescending() throws Exception {
        String db = newDb();
        String ra = put(db, "a", "{\"n\":1}");
        put(db, "b", "{\"n\":2}");
        put(db, "c", "{\"n\":3}");
        String ra2 = put(db, "a", "{\"n\":4,\"_rev\":\"" + ra + "\"}");
        JsonNode all = changes(db, "");
        assertEquals(List.of("b", "c", "a"), ids(all), "an update moves the document to the end");
        JsonNode last = all.get("results").get(2);
        assertEquals("[{\"rev\":\"" + ra2 + "\"}]", last.get("changes").toString());
        assertEquals(last.get("seq"), all.get("last_seq"));
        assertEquals(0, all.get("pending").asInt());

        JsonNode one = changes(db, "?limit=1");
        assertEquals(List.of("b"), ids(one));
        assertEquals(2, one.get("pending").asInt());
        assertEquals(one.get("results").get(0).get("seq"), one.get("last_seq"));

        String afterB = all.get("results").get(0).get("seq").asText();
        assertEquals(List.of("c", "a"), ids(changes(db, "?since=" + afterB)));
        assertEquals(List.of("c", "a"), ids(changes(db, "?since=%22" + afterB + "%22")), "a quoted since");
        assertEquals(List.of(), ids(changes(db, "?since=now")));
        assertEquals(all.get("last_seq"), changes(db, "?since=now").get("last_seq"));

        JsonNode desc = changes(db, "?descending=true");
        assertEquals(List.of("a", "c", "b"), ids(desc));
        assertEquals(List.of("a"), ids(changes(db, "?descending=true&limit=1")));
        assertEquals(0, changes(db, "?limit=0").get("results").size());
    }

    @Test
    void includeDocsDeletionsAndConflicts() throws Exception {
        String db = newDb();
        String r = put(db, "x", "{\"v\":1}");
        s.asAdmin("DELETE", "/" + db + "/x?rev=" + r, null).status(200);
        put(db, "y", "{\"v\":2}");
        s.asAdmin("POST", "/" + db + "/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"y\",\"_rev\":\"1-" + A + "\",\"v\":3}]}").status(201);
        JsonNode feed = changes(db, "?include_docs=true&conflicts=true");
        JsonNode x = feed.get("results").get(0);
        assertTrue(x.get("deleted").asBoolean());
        assertTrue(x.get("doc").get("_deleted").asBoolean());
        JsonNode y = feed.get("results").get(1).get("doc");
        assertEquals(1, y.get("_conflicts").size(), y.toString());
        assertFalse(changes(db, "?include_docs=true").get("results").get(1).get("doc").has("_conflicts"));
        assertFalse(changes(db, "").get("results").get(1).has("doc"));
    }

    @Test
    void allDocsStyleListsEveryLeaf() throws Exception {
        String db = newDb();
        String single = put(db, "single", "{}");
        s.asAdmin("POST", "/" + db + "/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"two\",\"_rev\":\"1-" + A + "\"},"
                + "{\"_id\":\"two\",\"_rev\":\"1-" + B + "\",\"_deleted\":true}]}").status(201);
        JsonNode all = changes(db, "?style=all_docs");
        assertEquals("[{\"rev\":\"" + single + "\"}]", all.get("results").get(0).get("changes").toString());
        assertEquals("[{\"rev\":\"1-" + A + "\"},{\"rev\":\"1-" + B + "\"}]", all.get("results").get(1).get("changes").toString(),
                "the winner first, then the deleted leaf");
        assertEquals("[{\"rev\":\"1-" + A + "\"}]", changes(db, "?style=main_only").get("results").get(1).get("changes").toString());
    }

    @Test
    void seqIntervalLeavesSomeSeqsOutButNotLastSeq() throws Exception {
        String db = newDb();
        for (int i = 0; i < 6; i++) put(db, "d" + i, "{}");
        JsonNode feed = changes(db, "?seq_interval=3");
        int nulls = 0;
        for (JsonNode r : feed.get("results")) if (r.get("seq").isNull()) nulls++;
        assertEquals(4, nulls, feed.toString());
        JsonNode full = changes(db, "");
        assertEquals(full.get("last_seq"), feed.get("last_seq"));
        assertEquals(0, changes(db, "?since=" + feed.get("last_seq").asText()).get("results").size());
    }

    /**
     * Rows carry ids and bodies as CouchDB's jiffy writes them (chttpd_db's changes callbacks
     * encode each row with ?JSON_ENCODE): characters outside the BMP as UTF-8, not as escaped
     * surrogates; quotes, backslashes and control characters escaped; every feed type alike, and a
     * body larger than the feed's chunk of bytes (FeedWriter.CHUNK) whole.
     */
    @Test
    void rowsAreEncodedAsCouchDbEncodesThem() throws Exception {
        String db = newDb();
        String big = "x".repeat(100_000);
        String rev = s.asAdmin("POST", "/" + db + "/_bulk_docs",
                "{\"docs\":[{\"_id\":\"q\\\"b\\\\c\\u0001-\u00e9-\ud83d\ude00\",\"v\":\"\ud83d\ude00\"},{\"_id\":\"big\",\"t\":\"" + big + "\"}]}")
                .status(201).json().get(0).get("rev").asText();
        String id = "\"q\\\"b\\\\c\\u0001-\u00e9-\ud83d\ude00\"";
        String text = s.asAdmin("GET", "/" + db + "/_changes?include_docs=true", null).status(200).text();
        String seq = Json.MAPPER.readTree(text).get("results").get(0).get("seq").asText();
        String row = "{\"seq\":\"" + seq + "\",\"id\":" + id + ",\"changes\":[{\"rev\":\"" + rev + "\"}],\"doc\":{\"_id\":" + id
                + ",\"_rev\":\"" + rev + "\",\"v\":\"\ud83d\ude00\"}}";
        assertTrue(text.startsWith("{\"results\":[\n" + row + ",\r\n{"), text.substring(0, 300));
        assertEquals(big, Json.MAPPER.readTree(text).get("results").get(1).get("doc").get("t").asText());
        try (Stream st = new Stream("/" + db + "/_changes?feed=continuous&timeout=0&include_docs=true")) {
            assertEquals(row, st.line());
        }
        try (Stream st = new Stream("/" + db + "/_changes?feed=eventsource&timeout=0&seq_interval=3")) {
            assertEquals("data: " + row.replace("\"seq\":\"" + seq + "\"", "\"seq\":null").replaceAll(",\"doc\":.*}$", "}"), st.line());
            assertEquals("id: null", st.line(), "an event's id is its row's seq as JSON");
        }
        awaitFeeds(0);
    }

    @Test
    void filters() throws Exception {
        String db = newDb();
        put(db, "a", "{\"n\":1}");
        put(db, "b", "{\"n\":2}");
        put(db, "_design/d", "{\"filters\":{\"f\":\"function(doc){return true}\"}}");
        put(db, "c", "{\"n\":3}");
        assertEquals(List.of("a", "c"), ids(changes(db, "?filter=_doc_ids&doc_ids=%5B%22c%22,%22a%22%5D")));
        JsonNode post = s.asAdmin("POST", "/" + db + "/_changes?filter=_doc_ids", "{\"doc_ids\":[\"b\"]}").status(200).json();
        assertEquals(List.of("b"), ids(post));
        assertEquals(changes(db, "").get("last_seq"), post.get("last_seq"), "last_seq covers what the filter dropped");
        assertEquals(List.of("_design/d"), ids(changes(db, "?filter=_design")));
        JsonNode sel = s.asAdmin("POST", "/" + db + "/_changes?filter=_selector", "{\"selector\":{\"n\":{\"$gt\":1}}}").status(200).json();
        assertEquals(List.of("b", "c"), ids(sel));

        s.asAdmin("GET", "/" + db + "/_changes?filter=_doc_ids", null).error(400, "bad_request", "`doc_ids` filter parameter is not a list of doc ids.");
        s.asAdmin("GET", "/" + db + "/_changes?filter=_selector", null).error(400, "bad_request", "Selector must be specified in POST payload");
        s.asAdmin("POST", "/" + db + "/_changes?filter=_selector", "{}").error(400, "bad_request", "Selector error: expected a JSON object");
        s.asAdmin("GET", "/" + db + "/_changes?filter=_nope", null).error(400, "bad_request", "unknown builtin filter name");
        s.asAdmin("GET", "/" + db + "/_changes?filter=d/nope", null).error(404, "not_found", "missing json key: nope");
        assertEquals(ids(changes(db, "")), ids(changes(db, "?filter=d/f")), "a filter passing everything passes everything");
        // A filter that throws fails the request, as CouchDB's does (PouchDB's test 3356 expects it).
        put(db, "_design/t", "{\"filters\":{\"boom\":\"function(doc){ if (doc.n == 3) throw new Error('no 3'); return true; }\"}}");
        s.asAdmin("GET", "/" + db + "/_changes?filter=t/boom", null).error(500, "filter_error", null);
    }

    @Test
    void parameterErrors() throws Exception {
        String db = newDb();
        String p = "/" + db + "/_changes?";
        s.asAdmin("GET", p + "feed=bogus", null).error(400, "bad_request", "Supported `feed` types: normal, continuous, live, longpoll, eventsource");
        s.asAdmin("PUT", "/" + db + "/a", "{}").status(201);
        s.asAdmin("PUT", "/" + db + "/b", "{}").status(201);
        // CouchDB 3.5.0 counts a negative limit down without ever reaching zero: 200 and every change.
        assertEquals(2, s.asAdmin("GET", p + "limit=-1", null).status(200).json().path("results").size());
        s.asAdmin("GET", p + "limit=x", null).error(400, "bad_request", "The limit parameter should be a non-negative integer");
        s.asAdmin("GET", p + "heartbeat=0", null).error(400, "bad_request", "The heartbeat value should be a positive integer (in milliseconds).");
        s.asAdmin("GET", p + "heartbeat=x", null).error(400, "bad_request", "Invalid heartbeat value. Expecting a positive integer value (in milliseconds).");
        s.asAdmin("GET", p + "timeout=-5", null).error(400, "bad_request", "The timeout value should be a non-negative integer");
        s.asAdmin("GET", p + "seq_interval=0", null).error(400, "bad_request", "invalid_seq_interval");
        s.asAdmin("GET", p + "style=odd", null).error(400, "bad_request", null);
        s.asAdmin("GET", p + "since=garbage", null).error(400, "bad_request", "Malformed sequence supplied in 'since' parameter.");
        s.asAdmin("GET", "/nope/_changes", null).error(404, "not_found", null);
        assertEquals(0, s.http.openChangesFeeds());
    }

    // ---------------------------------------------------------------- longpoll

    @Test
    void longpollAnswersAtOnceWhenThereAreChanges() throws Exception {
        String db = newDb();
        put(db, "a", "{}");
        JsonNode r = changes(db, "?feed=longpoll");
        assertEquals(List.of("a"), ids(r));
    }

    @Test
    void longpollWakesOnAWrite() throws Exception {
        String db = newDb();
        put(db, "before", "{}");
        CompletableFuture<HttpTestServer.Resp> pending = CompletableFuture.supplyAsync(() -> {
            try {
                return s.asAdmin("GET", "/" + db + "/_changes?feed=longpoll&since=now", null);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        awaitFeeds(1);
        assertFalse(pending.isDone(), "nothing to report yet");
        put(db, "after", "{}");
        JsonNode r = pending.get(20, TimeUnit.SECONDS).status(200).json();
        assertEquals(List.of("after"), ids(r));
        assertEquals(r.get("results").get(0).get("seq"), r.get("last_seq"));
        awaitFeeds(0);
    }

    @Test
    void longpollTimeoutEndsWithLastSeq() throws Exception {
        String db = newDb();
        put(db, "a", "{}");
        JsonNode now = changes(db, "");
        JsonNode r = changes(db, "?feed=longpoll&since=now&timeout=50");
        assertEquals(0, r.get("results").size());
        assertEquals(now.get("last_seq"), r.get("last_seq"));
    }

    // ---------------------------------------------------------------- continuous and eventsource

    /** A streamed response read chunk by chunk over a raw socket. */
    static final class Stream implements AutoCloseable {
        final RawHttp raw;
        final StringBuilder buffered = new StringBuilder();
        final int status;

        Stream(String path) throws IOException {
            raw = new RawHttp(s.http.port());
            raw.send("GET " + path + " HTTP/1.1\r\nHost: x\r\nAuthorization: " + HttpTestServer.ADMIN + "\r\n\r\n");
            status = Integer.parseInt(raw.line().split(" ")[1]);
            while (!raw.line().isEmpty()) { } // headers
        }

        /** The next line (without its newline), or null at the end of the response. */
        String line() throws IOException {
            while (buffered.indexOf("\n") < 0) {
                String size = raw.line();
                if (size == null) return null;
                int n = Integer.parseInt(size.strip(), 16);
                if (n == 0) return null;
                ByteArrayOutputStream b = new ByteArrayOutputStream();
                b.write(raw.in.readNBytes(n));
                raw.line();
                buffered.append(b.toString(StandardCharsets.UTF_8));
            }
            int i = buffered.indexOf("\n");
            String l = buffered.substring(0, i);
            buffered.delete(0, i + 1);
            return l;
        }

        List<String> rest() throws IOException {
            List<String> out = new ArrayList<>();
            for (String l; (l = line()) != null; ) out.add(l);
            return out;
        }

        @Override
        public void close() throws IOException {
            raw.close();
        }
    }

    @Test
    void continuousFeedRowsThenLastSeqOnTimeout() throws Exception {
        String db = newDb();
        put(db, "a", "{}");
        put(db, "b", "{}");
        try (Stream st = new Stream("/" + db + "/_changes?feed=continuous&timeout=50")) {
            assertEquals(200, st.status);
            List<String> lines = st.rest();
            assertEquals(3, lines.size(), lines.toString());
            assertEquals("a", Json.MAPPER.readTree(lines.get(0)).get("id").asText());
            JsonNode end = Json.MAPPER.readTree(lines.get(2));
            assertEquals(Json.MAPPER.readTree(lines.get(1)).get("seq"), end.get("last_seq"));
            assertEquals(0, end.get("pending").asInt());
        }
        try (Stream st = new Stream("/" + db + "/_changes?feed=continuous&limit=1")) {
            List<String> lines = st.rest();
            assertEquals(2, lines.size(), "the limit ends a continuous feed: " + lines);
            assertEquals(1, Json.MAPPER.readTree(lines.get(1)).get("pending").asInt());
        }
        awaitFeeds(0);
    }

    @Test
    void continuousFeedSendsHeartbeatsAndLiveWrites() throws Exception {
        String db = newDb();
        put(db, "old", "{}");
        try (Stream st = new Stream("/" + db + "/_changes?feed=continuous&since=now&heartbeat=20")) {
            assertEquals("", st.line(), "a heartbeat is an empty line");
            assertEquals("", st.line());
            put(db, "new", "{\"v\":1}");
            String l;
            while ((l = st.line()).isEmpty()) { } // heartbeats until the change
            assertEquals("new", Json.MAPPER.readTree(l).get("id").asText());
            put(db, "newer", "{}");
            while ((l = st.line()).isEmpty()) { }
            assertEquals("newer", Json.MAPPER.readTree(l).get("id").asText());
        }
        awaitFeeds(0);
    }

    @Test
    void eventsourceFeed() throws Exception {
        String db = newDb();
        put(db, "a", "{}");
        try (Stream st = new Stream("/" + db + "/_changes?feed=eventsource&timeout=50")) {
            List<String> lines = st.rest();
            assertTrue(lines.get(0).startsWith("data: {"), lines.toString());
            JsonNode row = Json.MAPPER.readTree(lines.get(0).substring(6));
            assertEquals("a", row.get("id").asText());
            assertEquals("id: " + row.get("seq"), lines.get(1));
            assertEquals("", lines.get(2));
            assertEquals(3, lines.size(), "no last_seq line in an event stream: " + lines);
        }
        try (Stream st = new Stream("/" + db + "/_changes?feed=eventsource&since=now&heartbeat=20")) {
            assertEquals("event: heartbeat", st.line());
            assertEquals("data: ", st.line());
        }
        awaitFeeds(0);
    }

    @Test
    void aDepartedClientEndsItsFeed() throws Exception {
        String db = newDb();
        put(db, "a", "{}");
        for (String feed : List.of("continuous", "longpoll", "eventsource")) {
            Stream st = new Stream("/" + db + "/_changes?feed=" + feed + "&since=now");
            awaitFeeds(1);
            st.close(); // no heartbeat and a 60 s timeout: only noticing the disconnect ends it
            awaitFeeds(0);
        }
        // and the server serves the next request as usual
        put(db, "b", "{}");
        assertEquals(List.of("a", "b"), ids(changes(db, "")));
    }

    @Test
    void aDeletedDatabaseEndsALiveFeed() throws Exception {
        String db = newDb();
        put(db, "a", "{}");
        try (Stream st = new Stream("/" + db + "/_changes?feed=continuous&since=now&heartbeat=20")) {
            assertEquals("", st.line());
            s.asAdmin("DELETE", "/" + db, null).status(200);
            List<String> rest = st.rest();
            assertNotNull(rest);
            String end = rest.stream().filter(l -> !l.isEmpty()).findFirst().orElse(null);
            assertNotNull(end, "the feed ends with its last_seq: " + rest);
            assertTrue(Json.MAPPER.readTree(end).has("last_seq"), end);
        }
        awaitFeeds(0);
    }
}

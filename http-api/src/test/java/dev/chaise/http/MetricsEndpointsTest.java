package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** {@code _stats}, {@code _prometheus}, {@code _system}, {@code /_up} and the access log. */
class MetricsEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/mdb", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static JsonNode stats() throws Exception {
        return s.get("/_node/_local/_stats", "Authorization", ADMIN).status(200).json();
    }

    private static void assertLeaf(JsonNode leaf, String type) {
        assertNotNull(leaf, "missing");
        assertEquals(type, leaf.path("type").asText(), leaf.toString());
        assertTrue(leaf.path("desc").isTextual() && !leaf.path("desc").asText().isEmpty(), leaf.toString());
        assertTrue(leaf.has("value"), leaf.toString());
    }

    @Test
    void statsHaveCouchDbsTreeAndCountWhatHappened() throws Exception {
        JsonNode before = stats().get("couchdb");
        long gets = before.path("httpd_request_methods").path("GET").path("value").asLong(0);
        long ok = before.path("httpd_status_codes").path("200").path("value").asLong(0);
        long notFound = before.path("httpd_status_codes").path("404").path("value").asLong(0);
        long reads = before.path("database_reads").path("value").asLong();
        long writes = before.path("database_writes").path("value").asLong();
        long docWrites = before.path("document_writes").path("value").asLong();

        s.asAdmin("PUT", "/mdb/d1", "{\"a\":1}").status(201);
        s.asAdmin("POST", "/mdb/_bulk_docs", "{\"docs\":[{\"_id\":\"d2\"},{\"_id\":\"d3\"}]}").status(201);
        s.get("/mdb/d1", "Authorization", ADMIN).status(200);
        s.get("/mdb/nope", "Authorization", ADMIN).status(404);

        JsonNode c = stats().get("couchdb");
        // The stats request itself is counted after it answers: exactly the 2 GETs above, plus the first _stats.
        assertEquals(gets + 3, c.path("httpd_request_methods").path("GET").path("value").asLong());
        assertLeaf(c.path("httpd_request_methods").path("PUT"), "counter");
        assertTrue(c.path("httpd_status_codes").path("200").path("value").asLong() >= ok + 2);
        assertEquals(notFound + 1, c.path("httpd_status_codes").path("404").path("value").asLong());
        assertLeaf(c.path("httpd").path("requests"), "counter");
        assertEquals(writes + 2, c.path("database_writes").path("value").asLong(), "a PUT and a _bulk_docs: one each, as couch_db:update_docs counts");
        assertEquals(docWrites + 3, c.path("document_writes").path("value").asLong(), "one PUT and two _bulk_docs documents");
        assertEquals(reads + 1, c.path("database_reads").path("value").asLong(), "one document found (the 404 read nothing)");
        assertLeaf(c.path("open_databases"), "counter"); // CouchDB declares it a counter (a gauge in _prometheus)
        assertTrue(c.path("open_databases").path("value").asLong() >= 1);
        assertLeaf(c.path("mrview").path("map_doc"), "counter");
        assertTrue(c.path("mrview").path("builds").isMissingNode(), "index builds are Chaise's own: " + c.path("mrview"));
        assertLeaf(stats().path("chaise").path("mrview").path("builds").path("started"), "counter");
        // CouchDB declares its status codes, so they show before they happen.
        assertLeaf(c.path("httpd_status_codes").path("507"), "counter");

        JsonNode rt = c.path("request_time");
        assertLeaf(rt, "histogram");
        JsonNode v = rt.path("value");
        assertTrue(v.path("n").asLong() > 0, v.toString());
        for (String k : new String[] {"arithmetic_mean", "max", "median"}) assertTrue(v.path(k).isNumber(), k + " in " + v);
        assertEquals(6, v.path("percentile").size(), v.toString());
        assertEquals(999, v.path("percentile").get(5).get(0).asInt());
        assertTrue(v.path("histogram").size() > 0);

        // Every StoreTimer event, under chaise.store: commits are counted and commit waits timed.
        JsonNode store = stats().path("chaise").path("store");
        assertTrue(store.path("count").path("commits").path("value").asLong() >= 2, store.toString());
        assertLeaf(store.path("wait").path("commit").path("count"), "counter");
        assertLeaf(store.path("wait").path("commit").path("seconds"), "counter");
        assertTrue(store.path("wait").path("commit").path("count").path("value").asLong() >= 2);
    }

    @Test
    void statsSubtreesAndAccess() throws Exception {
        JsonNode leaf = s.get("/_node/_local/_stats/couchdb/request_time", "Authorization", ADMIN).status(200).json();
        assertLeaf(leaf, "histogram");
        s.get("/_node/_local/_stats/couchdb/no_such_stat", "Authorization", ADMIN).error(404, "not_found", null);
        s.get("/_node/_local/_stats", "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
        s.get("/_node/_local/_prometheus").error(401, "unauthorized", null);
        s.get("/_node/_local/_system").error(401, "unauthorized", null);
        s.get("/_node/other@node/_stats", "Authorization", ADMIN).error(404, "not_found", null);
    }

    @Test
    void prometheusIsStrictTextFormatFromTheSameRegistry() throws Exception {
        s.get("/mdb", "Authorization", ADMIN).status(200);
        var r = s.get("/_node/_local/_prometheus", "Authorization", ADMIN).status(200);
        assertEquals("text/plain; version=2.0", r.header("Content-Type"), "CouchDB 3.5's");
        Map<String, PrometheusText.Family> f = PrometheusText.parse(r.text());
        assertEquals("counter", f.get("couchdb_httpd_requests_total").type(), f.keySet().toString());
        assertEquals("summary", f.get("couchdb_request_time_seconds").type());
        assertEquals("counter", f.get("couchdb_database_writes_total").type());
        assertEquals("gauge", f.get("couchdb_open_databases").type());
        assertEquals("gauge", f.get("couchdb_httpd_clients_requesting_changes").type());
        assertEquals("counter", f.get("chaise_store_count_total").type());
        assertTrue(f.get("chaise_store_count_total").samples().stream().anyMatch(x -> x.labels().equals(Map.of("event", "commits"))));
        assertTrue(f.containsKey("chaise_store_wait_seconds"), f.keySet().toString());
        assertTrue(f.containsKey("chaise_mrview_builds_started_total"), f.keySet().toString());
        assertTrue(f.keySet().stream().allMatch(n -> n.startsWith("couchdb_") || n.startsWith("chaise_")), f.keySet().toString());

        // The same numbers as _stats. Document writes come from requests only (background work such as
        // the job monitor commits too, so the store's commit count may move between the two reads).
        s.asAdmin("PUT", "/mdb/same-registry", "{}").status(201);
        double writes = PrometheusText.parse(s.get("/_node/_local/_prometheus", "Authorization", ADMIN).text())
                .get("couchdb_database_writes_total").samples().get(0).value();
        assertTrue(writes >= 1);
        assertEquals((long) writes, stats().path("couchdb").path("database_writes").path("value").asLong());
    }

    /** The names and lines CouchDB 3.5's couch_prometheus writes, which dashboards and alerts made for CouchDB read. */
    @Test
    void prometheusNamesCountersAsCouchDbDoes() throws Exception {
        s.get("/mdb", "Authorization", ADMIN).status(200);
        s.get("/mdb/nope", "Authorization", ADMIN).status(404);
        String text = s.get("/_node/_local/_prometheus", "Authorization", ADMIN).status(200).text();
        Map<String, PrometheusText.Family> f = PrometheusText.parse(text);
        // The two labelled counters keep their names: no _total.
        assertEquals("counter", f.get("couchdb_httpd_request_methods").type(), f.keySet().toString());
        assertEquals("number of HTTP requests by method", f.get("couchdb_httpd_request_methods").help());
        assertTrue(value(f, "couchdb_httpd_request_methods", Map.of("method", "GET")) >= 2);
        assertEquals(0, value(f, "couchdb_httpd_request_methods", Map.of("method", "COPY")), "every method CouchDB counts is there from the start");
        assertEquals("counter", f.get("couchdb_httpd_status_codes").type());
        assertTrue(value(f, "couchdb_httpd_status_codes", Map.of("code", "200")) >= 1);
        assertTrue(value(f, "couchdb_httpd_status_codes", Map.of("code", "404")) >= 1);
        assertEquals(0, value(f, "couchdb_httpd_status_codes", Map.of("code", "507")));
        assertFalse(f.containsKey("couchdb_httpd_request_methods_total"));
        assertFalse(f.containsKey("couchdb_httpd_status_codes_total"));
        // Other counters get _total; histograms are summaries in seconds with CouchDB's quantiles.
        assertTrue(value(f, "couchdb_httpd_requests_total", Map.of()) >= 3);
        assertTrue(f.containsKey("couchdb_database_reads_total"));
        assertTrue(f.containsKey("couchdb_mrview_map_doc_total"));
        List<String> quantiles = f.get("couchdb_request_time_seconds").samples().stream()
                .filter(x -> x.name().equals("couchdb_request_time_seconds")).map(x -> x.labels().get("quantile")).toList();
        assertEquals(List.of("0.5", "0.75", "0.9", "0.95", "0.99", "0.999"), quantiles);
        assertTrue(value(f, "couchdb_request_time_seconds_count", Map.of()) >= 3);
        assertTrue(f.get("couchdb_uptime_seconds").type().equals("counter"));
        // CouchDB's lines: an empty line, HELP, TYPE, then the samples, one label written name="value".
        assertTrue(text.contains("\n\n# HELP couchdb_httpd_request_methods number of HTTP requests by method\n"
                + "# TYPE couchdb_httpd_request_methods counter\ncouchdb_httpd_request_methods{method=\"COPY\"} 0\n"), text);
        assertTrue(text.matches("(?s).*\ncouchdb_httpd_status_codes\\{code=\"404\"\\} [1-9][0-9]*\n.*"), text);
        assertTrue(text.matches("(?s).*\ncouchdb_open_databases [0-9]+\n.*"), text);
    }

    private static double value(Map<String, PrometheusText.Family> f, String sample, Map<String, String> labels) {
        String family = f.containsKey(sample) ? sample : sample.replaceAll("_(count|sum)$", "");
        return f.get(family).samples().stream().filter(x -> x.name().equals(sample) && x.labels().equals(labels))
                .mapToDouble(PrometheusText.Sample::value).findFirst().orElseThrow(() -> new AssertionError(sample + labels + " missing"));
    }

    @Test
    void theStrictParserRejectsMalformedExpositions() {
        String ok = "# HELP a_total x\n# TYPE a_total counter\na_total{k=\"v\"} 1\n";
        PrometheusText.parse(ok);
        for (String bad : new String[] {
            "a_total 1",                                             // no final line feed
            "# TYPE a counter\na 1\n# TYPE a counter\n",              // TYPE twice
            "a 1\n# TYPE a counter\n",                               // TYPE after samples
            "a 1\nb 1\na{x=\"1\"} 2\n",                              // family split
            "a{k=\"v\"} 1\na{k=\"v\"} 2\n",                          // duplicate series
            "a{k=\"\\t\"} 1\n",                                      // bad escape
            "1a 1\n",                                                // bad name
            "a one\n",                                               // bad value
            "# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\nh_sum 1\n", // not cumulative
            "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_count 1\nh_sum 1\n",                          // no +Inf
            "# TYPE c counter\nc -1\n",                              // negative counter
        }) {
            assertThrows(IllegalArgumentException.class, () -> PrometheusText.parse(bad), bad);
        }
    }

    @Test
    void systemHasMemoryThreadsConnectionsAndTheEngine() throws Exception {
        JsonNode sys = s.get("/_node/_local/_system", "Authorization", ADMIN).status(200).json();
        assertTrue(sys.path("uptime").isNumber());
        assertTrue(sys.path("memory").path("heap_used").asLong() > 0);
        assertTrue(sys.path("threads").path("live").asInt() > 0);
        assertTrue(sys.path("open_connections").asInt() >= 1, "this request's own connection");
        JsonNode storage = sys.path("storage");
        assertEquals("embedded-memory", storage.path("backend").asText());
        assertEquals("rocksdb", storage.path("engine").asText());
        for (String k : new String[] {"total_sst_files_size", "cur_size_all_mem_tables", "estimate_pending_compaction_bytes",
                "write_stalls_stop", "write_stalls_slowdown", "is_write_stopped"}) {
            assertTrue(storage.path(k).isIntegralNumber(), k + " in " + storage);
        }
    }

    @Test
    void accessLogHasCouchDbsShapeAndCanBeSwitchedOff() throws Exception {
        Logger access = (Logger) LoggerFactory.getLogger("dev.chaise.http.access");
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        Level was = access.getLevel();
        access.setLevel(Level.INFO);
        access.addAppender(lines);
        try {
            var r = s.get("/mdb?x=1", "Authorization", ADMIN, "X-Couch-Request-ID", "req-abc123");
            assertEquals("req-abc123", r.header("X-Couch-Request-ID"));
            String line = awaitLine(lines, "/mdb?x=1");
            // NODE <THREAD> REQUEST-ID HOST PEER USER METHOD PATH CODE STATUS MILLISECONDS
            assertTrue(Pattern.matches("chaise@127\\.0\\.0\\.1 <[^ >]+> req-abc123 127\\.0\\.0\\.1:\\d+ 127\\.0\\.0\\.1 admin GET /mdb\\?x=1 200 ok \\d+", line), line);
            lines.list.clear();
            s.get("/nope_db", "Authorization", ADMIN).status(404);
            assertTrue(awaitLine(lines, "/nope_db").contains(" GET /nope_db 404 error "));

            s.asAdmin("PUT", "/_node/_local/_config/chaise/access_log", "\"false\"").status(200);
            lines.list.clear();
            s.get("/mdb", "Authorization", ADMIN).status(200);
            s.get("/mdb", "Authorization", ADMIN).status(200);
            Thread.sleep(200);
            assertTrue(lines.list.stream().noneMatch(e -> e.getFormattedMessage().contains(" GET /mdb ")), lines.list.toString());
        } finally {
            s.asAdmin("DELETE", "/_node/_local/_config/chaise/access_log", null);
            access.detachAppender(lines);
            access.setLevel(was);
        }
    }

    /** The line is written after the response, so it may trail the client by a moment. */
    /**
     * The line of the request to {@code path}: an earlier test's request may log its line after
     * this test attached its appender, since a line is written once the response is.
     */
    private static String awaitLine(ListAppender<ILoggingEvent> lines, String path) throws InterruptedException {
        for (int i = 0; i < 100; i++) {
            List<ILoggingEvent> seen;
            synchronized (lines) { // AppenderBase appends under the appender's lock
                seen = List.copyOf(lines.list);
            }
            for (ILoggingEvent e : seen) {
                if (e.getFormattedMessage().contains(" " + path + " ")) return e.getFormattedMessage();
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no access line for " + path + " in " + lines.list);
    }

    @Test
    void upAnswers503WithAReasonOnceStorageIsUnusable() throws Exception {
        try (HttpTestServer t = new HttpTestServer()) {
            assertEquals("ok", t.get("/_up").status(200).json().path("status").asText());
            t.kv.close();
            Thread.sleep(1100); // the last answer is kept a second
            JsonNode down = t.get("/_up").error(503, "service_unavailable", null).json();
            assertTrue(down.path("reason").asText().contains("storage"), down.toString());
            assertEquals("error", down.path("status").asText(), down.toString());
        }
    }
}

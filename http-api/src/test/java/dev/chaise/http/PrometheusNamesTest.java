package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.http.metrics.Metrics;
import dev.chaise.stats.Stats;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * couch_prometheus_util:couch_to_prom's names, from a registry filled by hand: the renamings
 * CouchDB makes for some of its metrics, whichever of them Chaise counts today.
 */
class PrometheusNamesTest {
    @Test
    void couchDbsRenamingsAndTotals() {
        Stats stats = new Stats();
        Metrics metrics = new Metrics(stats);
        stats.counter("couch_log.level.error", "level", "e").add(2);
        stats.counter("couch_log.level.info", "level", "i").add(5);
        stats.counter("couch_replicator.checkpoints.success", "s").add(3);
        stats.counter("couch_replicator.checkpoints.failure", "f").add(1);
        stats.counter("couchdb.auth_cache_hits", "h").add(7);
        stats.counter("couchdb.auth_cache_misses", "m").add(2);
        stats.counter("ddoc_cache.hit", "h").add(4);
        stats.counter("ddoc_cache.miss", "m").add(1);
        stats.counter("couchdb.document_purges.total", "t").add(6);
        stats.gauge("couch_replicator.jobs.running", "r", () -> 2);
        stats.gauge("couchdb.open_databases", "o", () -> 3);
        stats.histogram("mango.query_time", "q").record(20);
        stats.counter("chaise.things", "t").add(1);
        metrics.request("GET", 200, true, 1_000_000);
        metrics.request("PATCH", 418, true, 1_000_000);
        metrics.request("GET", 200, false, 1_000_000);

        String text = metrics.prometheus();
        Map<String, PrometheusText.Family> f = PrometheusText.parse(text);
        assertEquals("counter", f.get("couchdb_couch_log_requests_total").type());
        assertEquals("messages logged, by level", f.get("couchdb_couch_log_requests_total").help());
        assertTrue(text.contains("\ncouchdb_couch_log_requests_total{level=\"error\"} 2\ncouchdb_couch_log_requests_total{level=\"info\"} 5\n"), text);
        assertTrue(text.contains("\ncouchdb_couch_replicator_checkpoints_total 4\n"), "success and failure together: " + text);
        assertTrue(text.contains("\ncouchdb_couch_replicator_checkpoints_failure_total 1\n"), text);
        assertTrue(text.contains("\ncouchdb_auth_cache_requests_total 9\n"), text);
        assertTrue(text.contains("\ncouchdb_auth_cache_misses_total 2\n"), text);
        assertTrue(text.contains("\ncouchdb_ddoc_cache_requests_total 5\n"), text);
        assertTrue(text.contains("\ncouchdb_ddoc_cache_requests_failures_total 1\n"), text);
        assertTrue(text.contains("\ncouchdb_document_purges_total 6\n"), "no second _total: " + text);
        assertTrue(text.contains("\n# TYPE couchdb_couch_replicator_jobs_running gauge\ncouchdb_couch_replicator_jobs_running 2\n"), text);
        assertTrue(text.contains("\n# TYPE couchdb_open_databases gauge\ncouchdb_open_databases 3\n"), text);
        assertTrue(text.contains("\ncouchdb_mango_query_time_seconds_count 1\n"), text);
        assertTrue(text.contains("\n# TYPE chaise_things_total counter\nchaise_things_total 1\n"), text);
        assertTrue(text.contains("\ncouchdb_httpd_request_methods{method=\"GET\"} 2\n"), text);
        assertTrue(text.contains("\ncouchdb_httpd_status_codes{code=\"200\"} 1\n"), "the aborted one has no status: " + text);
        assertTrue(text.contains("\ncouchdb_httpd_aborted_requests_total 1\n"), text);
        assertTrue(text.contains("\ncouchdb_httpd_status_codes{code=\"418\"} 1\n"), "a code CouchDB does not declare, once it happens: " + text);
        assertFalse(text.contains("PATCH"), "methods CouchDB does not count are not counted");
        assertTrue(text.endsWith("\n# HELP couchdb_uptime_seconds couchdb uptime\n# TYPE couchdb_uptime_seconds counter\ncouchdb_uptime_seconds "
                + text.substring(text.lastIndexOf(' ') + 1)), text);
    }

    @Test
    void aHistogramsQuantilesAreSecondsAndWithinItsRange() {
        Stats stats = new Stats();
        var h = stats.histogram("couchdb.dbinfo", "d");
        for (int i = 1; i <= 100; i++) h.record(i); // 1 to 100 ms
        var snap = h.snapshot();
        assertEquals(100, snap.n());
        assertEquals(1, snap.min());
        assertEquals(100, snap.max());
        assertEquals(50.5, snap.mean(), 1e-9);
        // within a bucket's 12.5 % of the true percentile
        assertEquals(50, snap.median(), 50 * 0.125);
        assertEquals(99, snap.percentiles()[4][1], 99 * 0.125);
        String text = new Metrics(stats).prometheus();
        double q = PrometheusText.parse(text).get("couchdb_dbinfo_seconds").samples().stream()
                .filter(x -> "0.5".equals(x.labels().get("quantile"))).findFirst().orElseThrow().value();
        assertEquals(0.050, q, 0.050 * 0.125);
        assertTrue(text.contains("\ncouchdb_dbinfo_seconds_sum 5.05\n"), text);
    }
}

package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * CouchDB 3.5's metrics (its stats_descriptions.cfg) that Chaise has a counterpart for: each group
 * is made to move by doing what it counts, then read in {@code _stats} (CouchDB's leaf:
 * value, type, desc) and in {@code _prometheus} (the name couch_prometheus_util gives it, with its
 * {@code # TYPE}).
 */
class CouchDbMetricsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/mx", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /** The {@code _stats} value at a dotted path: a number, or a histogram's {@code n}. */
    private static long stat(String path) throws Exception {
        JsonNode leaf = leaf(path);
        JsonNode v = leaf.path("value");
        return v.isObject() ? v.path("n").asLong() : v.asLong();
    }

    private static JsonNode leaf(String path) throws Exception {
        JsonNode leaf = s.get("/_node/_local/_stats/" + path.replace('.', '/'), "Authorization", ADMIN).status(200).json();
        assertTrue(leaf.path("desc").isTextual() && !leaf.path("desc").asText().isEmpty(), path + ": " + leaf);
        assertTrue(List.of("counter", "gauge", "histogram").contains(leaf.path("type").asText()), path + ": " + leaf);
        return leaf;
    }

    private static Map<String, PrometheusText.Family> prometheus() throws Exception {
        return PrometheusText.parse(s.get("/_node/_local/_prometheus", "Authorization", ADMIN).status(200).text());
    }

    /** A sample's value; the family must have the {@code type} given. */
    private static double sample(Map<String, PrometheusText.Family> f, String family, String type, String sample, Map<String, String> labels) {
        PrometheusText.Family fam = f.get(family);
        assertNotNull(fam, family + " not in " + f.keySet());
        assertEquals(type, fam.type(), family);
        return fam.samples().stream().filter(x -> x.name().equals(sample) && x.labels().equals(labels)).mapToDouble(PrometheusText.Sample::value)
                .findFirst().orElseThrow(() -> new AssertionError(sample + labels + " not in " + fam.samples()));
    }

    private static double counter(Map<String, PrometheusText.Family> f, String name) {
        return sample(f, name, "counter", name, Map.of());
    }

    /** couch_db, couch_db_updater, fabric_doc_update and chttpd_db's counts of document writes and reads. */
    @Test
    void documentsAndDatabases() throws Exception {
        long dbWrites = stat("couchdb.database_writes");
        long docWrites = stat("couchdb.document_writes");
        long inserts = stat("couchdb.document_inserts");
        long local = stat("couchdb.local_document_writes");
        long reads = stat("couchdb.database_reads");
        long errors = stat("fabric.doc_update.errors");
        long bulk = stat("couchdb.httpd.bulk_requests");
        long commits = stat("couchdb.commits");

        String rev = s.asAdmin("PUT", "/mx/a", "{}").status(201).json().path("rev").asText();
        s.asAdmin("PUT", "/mx/a", "{\"_rev\":\"" + rev + "\"}").status(201); // an update: a write, not an insert
        s.asAdmin("PUT", "/mx/a", "{}").error(409, "conflict", null);
        s.asAdmin("POST", "/mx/_bulk_docs", "{\"docs\":[{\"_id\":\"b\"},{\"_id\":\"c\"},{\"_id\":\"a\"}]}").status(201); // a conflicts
        s.asAdmin("PUT", "/mx/_local/l", "{}").status(201);
        s.asAdmin("POST", "/mx/_bulk_get", "{\"docs\":[{\"id\":\"b\"}]}").status(200);
        s.asAdmin("GET", "/mx/a", null).status(200);
        s.asAdmin("GET", "/mx", null).status(200);
        s.asAdmin("PUT", "/mx_new", null).status(201);
        s.asAdmin("GET", "/mx_new", null).status(200); // its metadata read when first opened

        assertEquals(dbWrites + 4, stat("couchdb.database_writes"), "one per request that writes documents");
        assertEquals(docWrites + 4, stat("couchdb.document_writes"), "a, a again, b, c");
        assertEquals(inserts + 3, stat("couchdb.document_inserts"), "a, b, c");
        assertEquals(local + 1, stat("couchdb.local_document_writes"));
        assertTrue(stat("couchdb.database_reads") >= reads + 2, "b from _bulk_get, a");
        assertEquals(errors + 2, stat("fabric.doc_update.errors"), "the two conflicts");
        assertEquals(bulk + 2, stat("couchdb.httpd.bulk_requests"), "_bulk_docs and _bulk_get");
        // histograms cover the last [stats] interval: n counts what was recorded in it
        assertTrue(stat("couchdb.httpd.bulk_docs") >= 1, "a _bulk_docs size recorded");
        assertTrue(stat("couchdb.dbinfo") >= 1);
        assertTrue(stat("couchdb.commits") >= commits + 5);
        assertTrue(stat("couchdb.db_open_time") >= 1, "mx_new opened");
        assertEquals("histogram", leaf("couchdb.httpd.bulk_docs").path("type").asText());
        JsonNode h = leaf("couchdb.dbinfo").path("value");
        for (String k : List.of("min", "max", "arithmetic_mean", "median", "variance", "standard_deviation", "percentile", "histogram", "n")) {
            assertTrue(h.has(k), k + " in " + h);
        }
        assertEquals("counter", leaf("couchdb.open_databases").path("type").asText(), "CouchDB declares it a counter");

        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_database_writes_total") >= dbWrites + 4);
        assertTrue(counter(f, "couchdb_document_inserts_total") >= inserts + 3);
        assertTrue(counter(f, "couchdb_local_document_writes_total") >= 1);
        assertTrue(counter(f, "couchdb_fabric_doc_update_errors_total") >= 2);
        assertTrue(counter(f, "couchdb_httpd_bulk_requests_total") >= 2);
        assertTrue(counter(f, "couchdb_commits_total") >= 5);
        assertTrue(sample(f, "couchdb_dbinfo_seconds", "summary", "couchdb_dbinfo_seconds_count", Map.of()) >= 1);
        assertTrue(sample(f, "couchdb_httpd_bulk_docs_seconds", "summary", "couchdb_httpd_bulk_docs_seconds", Map.of("quantile", "0.5")) > 0,
                "couch_prometheus divides every histogram by 1000, a _bulk_docs size too");
        assertEquals("gauge", f.get("couchdb_open_databases").type());
    }

    /** chttpd_db's purge counts and couch_db's database_purges. */
    @Test
    void purges() throws Exception {
        long requests = stat("couchdb.httpd.purge_requests");
        long total = stat("couchdb.document_purges.total");
        long success = stat("couchdb.document_purges.success");
        long purges = stat("couchdb.database_purges");
        String r1 = s.asAdmin("PUT", "/mx/p1", "{}").json().path("rev").asText();
        String r2 = s.asAdmin("PUT", "/mx/p2", "{}").json().path("rev").asText();
        s.asAdmin("POST", "/mx/_purge", "{\"p1\":[\"" + r1 + "\"],\"p2\":[\"" + r2 + "\"]}").status(201);
        assertEquals(requests + 1, stat("couchdb.httpd.purge_requests"));
        assertEquals(total + 2, stat("couchdb.document_purges.total"));
        assertEquals(success + 2, stat("couchdb.document_purges.success"));
        assertEquals(purges + 1, stat("couchdb.database_purges"));
        leaf("couchdb.document_purges.failure");
        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_httpd_purge_requests_total") >= 1);
        // couch_prometheus_util's counter_metric: document_purges.total is already ..._total
        assertTrue(counter(f, "couchdb_document_purges_total") >= 2);
        assertTrue(counter(f, "couchdb_document_purges_success_total") >= 2);
        assertTrue(counter(f, "couchdb_database_purges_total") >= 1);
    }

    /** couch_os_process (the engine's calls), couch_proc_manager, couch_mrview and couch_db's validate_doc_update figures. */
    @Test
    void queryServerViewsAndValidation() throws Exception {
        s.asAdmin("PUT", "/qs", null).status(201);
        s.asAdmin("PUT", "/qs/_design/d", """
                {"views":{"v":{"map":"function(d){ emit(d._id, 1); emit(d._id, 2); }","reduce":"function(k,v,re){ return sum(v); }"}},
                 "validate_doc_update":"function(n){ if (n.bad) throw({forbidden:'no'}); }",
                 "filters":{"f":"function(d){ return true; }"},
                 "shows":{"s":"function(d,r){ return 'hi'; }"}}""").status(201);
        long calls = stat("couchdb.query_server.calls.map");
        long micros = stat("couchdb.query_server.time.map");
        long emits = stat("couchdb.mrview.emits");
        long viewReads = stat("couchdb.httpd.view_reads");
        long rejects = stat("couchdb.query_server.vdu_rejects");
        long vdu = stat("couchdb.query_server.calls.ddoc_vdu");
        long acquired = stat("couchdb.query_server.acquired_processes");
        long prompts = stat("couchdb.query_server.process_prompts");

        s.asAdmin("PUT", "/qs/x", "{}").status(201);
        s.asAdmin("PUT", "/qs/y", "{\"bad\":true}").error(403, "forbidden", "no");
        s.asAdmin("GET", "/qs/_design/d/_view/v?reduce=false", null).status(200);
        s.asAdmin("POST", "/qs/_design/d/_view/v/queries", "{\"queries\":[{},{\"reduce\":false}]}").status(200);
        s.asAdmin("GET", "/qs/_changes?filter=d/f", null).status(200);
        s.asAdmin("GET", "/qs/_design/d/_show/s/x", null).status(200);

        assertTrue(stat("couchdb.query_server.calls.map") >= calls + 1, "x was mapped");
        assertTrue(stat("couchdb.query_server.time.map") >= micros);
        assertTrue(stat("couchdb.mrview.emits") >= emits + 2, "two rows for x");
        assertEquals(viewReads + 3, stat("couchdb.httpd.view_reads"), "a GET, and a queries request of two");
        assertEquals(rejects + 1, stat("couchdb.query_server.vdu_rejects"));
        assertEquals(vdu + 2, stat("couchdb.query_server.calls.ddoc_vdu"), "x and y validated");
        assertTrue(stat("couchdb.query_server.vdu_process_time") >= 1);
        assertTrue(stat("couchdb.query_server.calls.reduce") >= 1, "the queries request's reduced query");
        assertTrue(stat("couchdb.query_server.calls.ddoc_filter") >= 1);
        assertTrue(stat("couchdb.query_server.calls.ddoc_other") >= 1, "the show");
        assertTrue(stat("couchdb.query_server.calls.add_fun") >= 1, "the design document's functions compiled when saved");
        assertTrue(stat("couchdb.query_server.process_starts") >= 1);
        assertTrue(stat("couchdb.query_server.acquired_processes") > acquired);
        assertTrue(stat("couchdb.query_server.process_prompts") > prompts);
        assertEquals("histogram", leaf("couchdb.query_server.vdu_process_time").path("type").asText());
        long hits = stat("ddoc_cache.hit");
        s.asAdmin("GET", "/qs/_design/d/_view/v", null).status(200); // _design/d parsed before: a hit
        assertTrue(stat("ddoc_cache.hit") > hits);
        assertTrue(stat("ddoc_cache.miss") >= 1, "_design/d read and parsed once");

        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_query_server_calls_map_total") >= 1);
        assertTrue(counter(f, "couchdb_query_server_time_map_total") >= 0);
        assertTrue(counter(f, "couchdb_mrview_emits_total") >= 2);
        assertTrue(counter(f, "couchdb_httpd_view_reads_total") >= 3);
        assertTrue(counter(f, "couchdb_query_server_vdu_rejects_total") >= 1);
        assertTrue(sample(f, "couchdb_query_server_vdu_process_time_seconds", "summary", "couchdb_query_server_vdu_process_time_seconds_count", Map.of()) >= 1);
        // couch_prometheus: ddoc_cache's requests are hits and misses together, its misses "failures"
        long requests = (long) counter(f, "couchdb_ddoc_cache_requests_total");
        assertTrue(requests >= hits + 2 && requests <= stat("ddoc_cache.hit") + stat("ddoc_cache.miss"), "hits and misses: " + requests);
        assertTrue(counter(f, "couchdb_ddoc_cache_requests_failures_total") >= 1);
    }

    /** mango_cursor, mango_cursor_view, mango_execution_stats and mango_selector's counts. */
    @Test
    void mango() throws Exception {
        s.asAdmin("PUT", "/mg", null).status(201);
        StringBuilder docs = new StringBuilder();
        for (int i = 0; i < 30; i++) docs.append(i == 0 ? "" : ",").append("{\"n\":").append(i).append('}');
        s.asAdmin("POST", "/mg/_bulk_docs", "{\"docs\":[" + docs + "]}").status(201);
        s.asAdmin("POST", "/mg/_index", "{\"index\":{\"fields\":[\"n\"]},\"name\":\"byn\",\"ddoc\":\"byn\"}").status(200);
        long unindexed = stat("mango.unindexed_queries");
        long examined = stat("mango.docs_examined");
        long keys = stat("mango.keys_examined");
        long results = stat("mango.results_returned");
        long evaluated = stat("mango.evaluate_selector");
        long invalid = stat("mango.query_invalid_index");
        long tooMany = stat("mango.too_many_docs_scanned");

        s.asAdmin("POST", "/mg/_find", "{\"selector\":{\"m\":1}}").status(200); // no index: all 30 examined, none returned
        s.asAdmin("POST", "/mg/_find", "{\"selector\":{\"n\":{\"$gt\":27}}}").status(200); // byn: 2 keys, 2 docs, 2 results
        s.asAdmin("POST", "/mg/_find", "{\"selector\":{\"n\":{\"$gt\":27}},\"use_index\":\"nope\"}").status(200);

        assertEquals(unindexed + 1, stat("mango.unindexed_queries"));
        assertTrue(stat("mango.docs_examined") >= examined + 30 + 2);
        assertTrue(stat("mango.keys_examined") >= keys + 2);
        assertEquals(results + 4, stat("mango.results_returned"));
        assertTrue(stat("mango.evaluate_selector") >= evaluated + 32);
        assertEquals(invalid + 1, stat("mango.query_invalid_index"));
        assertEquals(tooMany + 1, stat("mango.too_many_docs_scanned"), "30 examined for no result");
        assertTrue(stat("mango.query_time") >= 3, "the three queries, within the interval");
        assertEquals("histogram", leaf("mango.query_time").path("type").asText());

        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_mango_unindexed_queries_total") >= 1);
        assertTrue(counter(f, "couchdb_mango_docs_examined_total") >= 32);
        assertTrue(counter(f, "couchdb_mango_results_returned_total") >= 4);
        assertTrue(counter(f, "couchdb_mango_evaluate_selector_total") >= 32);
        assertTrue(sample(f, "couchdb_mango_query_time_seconds", "summary", "couchdb_mango_query_time_seconds_count", Map.of()) >= 1);
        assertEquals(List.of("0.5", "0.75", "0.9", "0.95", "0.99", "0.999"), f.get("couchdb_mango_query_time_seconds").samples().stream()
                .filter(x -> x.name().equals("couchdb_mango_query_time_seconds")).map(x -> x.labels().get("quantile")).toList());
    }

    /** couch_passwords and couch_passwords_cache: the first check of a password hashes it slowly, later ones fast. */
    @Test
    void passwordHashing() throws Exception {
        long slow = stat("couchdb.password_hashing_slow");
        s.get("/_session", "Authorization", HttpTestServer.BOB).status(200);
        long fast = stat("couchdb.password_hashing_fast");
        s.get("/_session", "Authorization", HttpTestServer.BOB).status(200);
        s.get("/_session", "Authorization", HttpTestServer.BOB).status(200);
        // each _stats read by the admin is a fast check of the admin's password too
        assertEquals(fast + 2 + 1, stat("couchdb.password_hashing_fast"));
        s.get("/_session", "Authorization", "Basic " + HttpTestServer.b64("bob:wrong")).status(401);
        assertTrue(stat("couchdb.password_hashing_slow") >= slow + 1, "a wrong password is hashed slowly");
        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_password_hashing_fast_total") >= 3);
        assertTrue(counter(f, "couchdb_password_hashing_slow_total") >= 1);
    }

    /** couch_replicator_scheduler, _scheduler_job and _httpc: a replication to a remote target. */
    @Test
    void replicator() throws Exception {
        long adds = stat("couch_replicator.jobs.adds");
        long starts = stat("couch_replicator.jobs.starts");
        long requests = stat("couch_replicator.requests");
        long responses = stat("couch_replicator.responses.success");
        long checkpoints = stat("couch_replicator.checkpoints.success");
        long workers = stat("couch_replicator.workers_started");
        s.asAdmin("PUT", "/rsrc", null).status(201);
        s.asAdmin("PUT", "/rsrc/d", "{}").status(201);
        String target = "http://admin:pass@127.0.0.1:" + s.http.port() + "/rtgt";
        s.asAdmin("POST", "/_replicate", "{\"source\":\"rsrc\",\"target\":\"" + target + "\",\"create_target\":true}").status(200);

        assertEquals(adds + 1, stat("couch_replicator.jobs.adds"));
        assertEquals(starts + 1, stat("couch_replicator.jobs.starts"));
        assertTrue(stat("couch_replicator.requests") > requests);
        assertTrue(stat("couch_replicator.responses.success") > responses);
        assertEquals(checkpoints + 1, stat("couch_replicator.checkpoints.success"));
        assertTrue(stat("couch_replicator.workers_started") > workers);
        assertEquals("gauge", leaf("couch_replicator.jobs.running").path("type").asText());
        long failed = stat("couch_replicator.failed_starts");
        long crashes = stat("couch_replicator.jobs.crashes");
        s.asAdmin("POST", "/_replicate", "{\"source\":\"rnope\",\"target\":\"" + target + "\"}").error(404, "db_not_found", null);
        assertEquals(failed + 1, stat("couch_replicator.failed_starts"), "the source does not exist");
        assertEquals(crashes + 1, stat("couch_replicator.jobs.crashes"));
        leaf("couch_replicator.jobs.pending");
        leaf("couch_replicator.jobs.total");

        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_couch_replicator_jobs_adds_total") >= 1);
        // couch_prometheus: checkpoints_total is success and failure together, failures alone beside it
        assertEquals(stat("couch_replicator.checkpoints.success") + stat("couch_replicator.checkpoints.failure"),
                (long) counter(f, "couchdb_couch_replicator_checkpoints_total"));
        counter(f, "couchdb_couch_replicator_checkpoints_failure_total");
        assertTrue(counter(f, "couchdb_couch_replicator_responses_total") >= 1);
        counter(f, "couchdb_couch_replicator_responses_failure_total");
        assertEquals("gauge", f.get("couchdb_couch_replicator_jobs_running").type());
    }

    /** Every family is CouchDB's name or Chaise's own, never both. */
    @Test
    void everyFamilyIsCouchDbsOrChaises() throws Exception {
        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(f.keySet().stream().allMatch(n -> n.startsWith("couchdb_") || n.startsWith("chaise_")), f.keySet().toString());
        counter(f, "couchdb_httpd_aborted_requests_total");
        assertTrue(f.keySet().stream().noneMatch(n -> n.startsWith("couchdb_chaise")), f.keySet().toString());
    }

    /** chttpd_db's partition request counts and nouveau_httpd's search metrics. */
    @Test
    void partitionsAndNouveau() throws Exception {
        long allDocs = stat("couchdb.httpd.partition_all_docs_requests");
        long find = stat("couchdb.httpd.partition_find_requests");
        long explain = stat("couchdb.httpd.partition_explain_requests");
        long view = stat("couchdb.httpd.partition_view_requests");
        long searches = stat("nouveau.search_latency");
        long updates = stat("nouveau.update_latency");
        s.asAdmin("PUT", "/pm?partitioned=true", null).status(201);
        s.asAdmin("POST", "/pm/_bulk_docs", """
                {"docs":[{"_id":"a:1","t":"hello world"},{"_id":"a:2","t":"goodbye"},
                 {"_id":"_design/d","views":{"v":{"map":"function(doc){emit(doc.t, 1);}"}},
                  "nouveau":{"i":{"index":"function(doc){ if (doc.t) index('text', 't', doc.t); }"}}}]}""").status(201);
        s.asAdmin("GET", "/pm/_partition/a/_all_docs", null).status(200);
        s.asAdmin("POST", "/pm/_partition/a/_find", "{\"selector\":{\"t\":\"goodbye\"}}").status(200);
        s.asAdmin("POST", "/pm/_partition/a/_explain", "{\"selector\":{\"t\":\"goodbye\"}}").status(200);
        s.asAdmin("GET", "/pm/_partition/a/_design/d/_view/v", null).status(200);
        s.asAdmin("GET", "/pm/_partition/a/_design/d/_info", null).status(200); // under a partition, but no view read
        s.asAdmin("GET", "/pm/_design/d/_nouveau/i?q=t:hello", null).status(200);
        s.asAdmin("GET", "/pm/_design/d/_nouveau/i?q=t:hello&update=false", null).status(200);
        assertEquals(allDocs + 1, stat("couchdb.httpd.partition_all_docs_requests"));
        assertEquals(find + 1, stat("couchdb.httpd.partition_find_requests"));
        assertEquals(explain + 1, stat("couchdb.httpd.partition_explain_requests"));
        assertEquals(view + 1, stat("couchdb.httpd.partition_view_requests"));
        assertEquals(searches + 2, stat("nouveau.search_latency"));
        assertEquals(updates + 1, stat("nouveau.update_latency"), "update=false waits for no update");
        assertEquals(0, stat("nouveau.active_searches"));
        assertEquals("counter", leaf("nouveau.active_searches").path("type").asText(), "CouchDB declares it a counter");

        Map<String, PrometheusText.Family> f = prometheus();
        assertTrue(counter(f, "couchdb_httpd_partition_view_requests_total") >= view + 1);
        assertTrue(sample(f, "couchdb_nouveau_search_latency_seconds", "summary", "couchdb_nouveau_search_latency_seconds_count", Map.of()) >= 2);
        assertEquals("gauge", f.get("couchdb_nouveau_active_searches").type());
    }

}

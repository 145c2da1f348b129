package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The jar as operators meet it: a first start, the start-up line, and the real Fauxton release at /_utils/. */
class OperationsTest {
    static ChaiseProcess chaise;
    static final HttpClient client = HttpClient.newHttpClient();

    @BeforeAll
    static void start() throws Exception {
        chaise = new ChaiseProcess("chaise-operations-server.log");
    }

    @AfterAll
    static void stop() throws Exception {
        if (chaise != null) chaise.close();
    }

    static HttpResponse<String> get(String path, boolean admin) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(chaise.url + path));
        if (admin) b.header("Authorization", "Basic " + Base64.getEncoder().encodeToString(("admin:" + chaise.password).getBytes()));
        return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aFirstStartHasTheSystemDatabasesAdminsOnly() throws Exception {
        String dbs = get("/_all_dbs", true).body();
        assertTrue(dbs.contains("\"_users\"") && dbs.contains("\"_replicator\""), dbs);
        for (String db : new String[] {"_users", "_replicator"}) {
            String sec = get("/" + db + "/_security", true).body();
            // couch_db_updater:default_security_object, as stored (no names: [])
            assertEquals("{\"members\":{\"roles\":[\"_admin\"]},\"admins\":{\"roles\":[\"_admin\"]}}", sec.strip(), db);
            assertEquals(401, get("/" + db + "/_all_docs", false).statusCode(), db + " is not readable anonymously");
        }
    }

    @Test
    void startUpEndsWithOneLineSayingWhereAndHowFast() throws Exception {
        String log = Files.readString(ChaiseProcess.MODULE.resolve("target/chaise-operations-server.log"));
        Matcher m = Pattern.compile("Chaise \\S+ ready at (http://\\S+/) storage=embedded-memory data_dir=\\S.* config=\\S+ in (\\d+) ms").matcher(log);
        assertTrue(m.find(), log);
        assertEquals(chaise.url + "/", m.group(1));
    }

    /**
     * Prometheus' own parser and linter: Debian's prometheus package brings promtool. The lint finds
     * nothing but CouchDB 3.5's own names, which Chaise keeps for the dashboards made for CouchDB:
     * the three counters without {@code _total}, and the gauge {@code couchdb_couch_replicator_jobs_total}.
     */
    @Test
    void thePrometheusScrapePassesPromtool() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isExecutable(java.nio.file.Path.of("/usr/bin/promtool")),
                "promtool is not installed (apt-get install --no-install-recommends prometheus)");
        get("/_all_dbs", true);
        HttpResponse<String> scrape = get("/_node/_local/_prometheus", true);
        assertEquals(200, scrape.statusCode());
        assertTrue(scrape.body().contains("\ncouchdb_request_time_seconds{quantile=\"0.5\"} "), scrape.body());
        assertTrue(scrape.body().contains("\ncouchdb_httpd_request_methods{method=\"GET\"} "), scrape.body());
        Process p = new ProcessBuilder("/usr/bin/promtool", "check", "metrics").redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(scrape.body().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        // 0: clean; 3: lint problems only (1 would be a parse error).
        assertTrue(p.exitValue() == 0 || p.exitValue() == 3, "promtool check metrics: " + out);
        java.util.Set<String> counters = java.util.Set.of("couchdb_httpd_request_methods", "couchdb_httpd_status_codes", "couchdb_uptime_seconds");
        for (String line : out.strip().lines().toList()) {
            String name = line.split(" ", 2)[0];
            boolean couchDbs = counters.contains(name) && line.endsWith("counter metrics should have \"_total\" suffix")
                    || name.equals("couchdb_couch_replicator_jobs_total") && line.endsWith("non-counter metrics should not have \"_total\" suffix");
            assertTrue(couchDbs, "promtool's lint found a problem: " + line);
        }
    }

    @Test
    void theRealFauxtonReleaseIsServedAsCouchDbServesIt() throws Exception {
        HttpResponse<String> redirect = get("/_utils", false);
        assertEquals(301, redirect.statusCode());
        assertEquals(chaise.url + "/_utils/", redirect.headers().firstValue("Location").orElseThrow());
        HttpResponse<String> index = get("/_utils/", false);
        assertEquals(200, index.statusCode());
        assertTrue(index.body().contains("<title>Project Fauxton</title>"), index.body());
        assertEquals("text/html; charset=utf-8", index.headers().firstValue("Content-Type").orElseThrow());
        assertEquals("private, must-revalidate", index.headers().firstValue("Cache-Control").orElseThrow());
        assertTrue(index.headers().firstValue("Content-Security-Policy").orElseThrow().contains("script-src 'self' 'unsafe-eval'"));
        Matcher script = Pattern.compile("src=\"(dashboard\\.assets/js/[^\"]+\\.js)\"").matcher(index.body());
        assertTrue(script.find(), index.body());
        HttpResponse<String> js = get("/_utils/" + script.group(1), false);
        assertEquals(200, js.statusCode());
        assertEquals("application/javascript", js.headers().firstValue("Content-Type").orElseThrow());
        HttpResponse<String> post = client.send(HttpRequest.newBuilder(URI.create(chaise.url + "/_utils/"))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode());
        assertEquals("GET,HEAD", post.headers().firstValue("Allow").orElseThrow());
    }
}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The replicator over real HTTP between two servers in this JVM: _replicate one-shot and
 * continuous, local and remote endpoints both ways, attachments, conflicts and deletions, filters,
 * checkpoints, the _replicator database, _scheduler and _active_tasks, and CouchDB's errors.
 */
class ReplicatorEndpointsTest {
    static HttpTestServer a;
    static HttpTestServer b;

    @BeforeAll
    static void start() throws Exception {
        a = new HttpTestServer();
        b = new HttpTestServer();
        a.asAdmin("PUT", "/_replicator", null).status(201);
    }

    @AfterAll
    static void stop() {
        if (a != null) a.close();
        if (b != null) b.close();
    }

    static String url(HttpTestServer s, String db) {
        return "http://admin:pass@127.0.0.1:" + s.http.port() + "/" + db;
    }

    static int seq;

    static String name(String p) {
        return p + "-" + (++seq) + "-" + System.nanoTime() % 100000;
    }

    /** A source with plain documents, a deleted one, a conflicted one and attachments (one of 2 MB, stored ahead). */
    static void fill(HttpTestServer s, String db) throws Exception {
        s.asAdmin("PUT", "/" + db, null).status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < 120; i++) docs.append(i == 0 ? "" : ",").append("{\"_id\":\"d").append(i).append("\",\"n\":").append(i).append("}");
        docs.append("]}");
        s.asAdmin("POST", "/" + db + "/_bulk_docs", docs.toString()).status(201);
        String rev = s.asAdmin("PUT", "/" + db + "/gone", "{\"v\":1}").json().get("rev").asText();
        s.asAdmin("DELETE", "/" + db + "/gone?rev=" + rev, null).status(200);
        s.asAdmin("POST", "/" + db + "/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"c\",\"_rev\":\"1-aaa\",\"v\":\"a\"},{\"_id\":\"c\",\"_rev\":\"1-bbb\",\"v\":\"b\"}]}").status(201);
        byte[] big = new byte[2 * 1024 * 1024 + 17];
        new Random(7).nextBytes(big);
        s.asAdmin("PUT", "/" + db + "/att", "{\"_attachments\":{\"small.txt\":{\"content_type\":\"text/plain\",\"data\":\"aGVsbG8=\"},"
                + "\"big.bin\":{\"content_type\":\"application/octet-stream\",\"data\":\"" + Base64.getEncoder().encodeToString(big) + "\"}}}").status(201);
        s.asAdmin("PUT", "/" + db + "/_design/f", "{\"filters\":{\"even\":\"function(doc, req) { return doc.n % 2 === 0 && doc.n >= Number(req.query.min || 0); }\"}}").status(201);
    }

    /** Every document's leaves with bodies, _revisions and attachment digests: what must be equal on both sides. */
    static List<String> snapshot(HttpTestServer s, String db) throws Exception {
        List<String> out = new ArrayList<>();
        JsonNode changes = s.asAdmin("GET", "/" + db + "/_changes?style=all_docs", null).json();
        for (JsonNode row : changes.get("results")) {
            String id = row.get("id").asText();
            JsonNode revs = s.send("GET", "/" + db + "/" + id + "?open_revs=all&revs=true", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json").json();
            List<String> leaves = new ArrayList<>();
            for (JsonNode r : revs) {
                JsonNode d = r.get("ok");
                if (d.has("_attachments")) {
                    for (JsonNode m : d.get("_attachments")) {
                        ((com.fasterxml.jackson.databind.node.ObjectNode) m).remove("revpos");
                    }
                }
                leaves.add(d.toString());
            }
            leaves.sort(null);
            out.add(id + "=" + leaves);
        }
        out.sort(null);
        return out;
    }

    static JsonNode replicate(HttpTestServer on, String body) throws Exception {
        return on.asAdmin("POST", "/_replicate", body).status(200).json();
    }

    /** couch_replicator_worker: design documents one by one, the rest by _bulk_get; its counts are of those revisions. */
    @Test
    void bulkGetCountsAsCouchDbCountsThem() throws Exception {
        String src = name("bgsrc");
        a.asAdmin("PUT", "/" + src, null).status(201);
        a.asAdmin("POST", "/" + src + "/_bulk_docs", "{\"docs\":[{\"_id\":\"p1\"},{\"_id\":\"p2\"},{\"_id\":\"p3\"},"
                + "{\"_id\":\"_design/d\",\"views\":{}},{\"_id\":\"att\",\"_attachments\":{\"a.bin\":"
                + "{\"content_type\":\"application/octet-stream\",\"data\":\"AAEC\"}}}]}").status(201);
        JsonNode r = replicate(b, "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + name("bgtgt") + "\",\"create_target\":true}");
        JsonNode h = r.get("history").get(0);
        assertEquals(4, h.get("bulk_get_attempts").asInt(), r.toString()); // p1, p2, p3, att: not the design document
        assertEquals(3, h.get("bulk_get_docs").asInt(), r.toString()); // att has an attachment: fetched again, with open_revs
        assertEquals(5, h.get("docs_written").asInt(), r.toString());
    }

    @Test
    void localToLocalSameDocumentsRevisionTreesAndDigests() throws Exception {
        String src = name("src");
        String tgt = name("tgt");
        fill(a, src);
        JsonNode r = replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + tgt + "\",\"create_target\":true}");
        assertTrue(r.get("ok").asBoolean(), r.toString());
        assertEquals(4, r.get("replication_id_version").asInt());
        JsonNode h = r.get("history").get(0);
        assertEquals(125, h.get("docs_written").asInt(), r.toString());
        assertEquals(0, h.get("doc_write_failures").asInt());
        assertEquals(snapshot(a, src), snapshot(a, tgt));
        String big = a.asAdmin("GET", "/" + tgt + "/att/big.bin", null).text();
        assertEquals(a.asAdmin("GET", "/" + src + "/att/big.bin", null).text(), big);
        // the checkpoint is on both sides, under the replication id, with CouchDB's history
        String logId = "_local/" + r.get("session_id").asText(); // not the id: look it up by history
        JsonNode locals = a.asAdmin("GET", "/" + src + "/_local_docs?include_docs=true", null).json().get("rows");
        assertEquals(1, locals.size());
        JsonNode cp = locals.get(0).get("doc");
        assertEquals(r.get("session_id"), cp.get("session_id"), logId);
        assertEquals(cp.get("source_last_seq"), a.asAdmin("GET", "/" + tgt + "/" + cp.get("_id").asText(), null).json().get("source_last_seq"));

        // again: nothing to do, resumed from the checkpoint
        JsonNode again = replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + tgt + "\"}");
        assertTrue(again.path("no_changes").asBoolean(), again.toString());
        // one more document: only it is read
        a.asAdmin("PUT", "/" + src + "/later", "{\"x\":1}").status(201);
        JsonNode third = replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + tgt + "\"}");
        JsonNode h3 = third.get("history").get(0);
        assertEquals(h.get("recorded_seq"), h3.get("start_last_seq"), "resumed where the last session stopped");
        assertEquals(1, h3.get("docs_written").asInt() - h.get("docs_written").asInt(), third.toString());
    }

    @Test
    void pullAndPushBetweenTwoServers() throws Exception {
        String src = name("pull-src");
        fill(a, src);
        String pulled = name("pulled");
        JsonNode r = replicate(b, "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + pulled + "\",\"create_target\":true}");
        assertEquals(125, r.get("history").get(0).get("docs_written").asInt(), r.toString());
        assertEquals(snapshot(a, src), snapshot(b, pulled));
        String pushed = name("pushed");
        r = replicate(b, "{\"source\":\"" + pulled + "\",\"target\":\"" + url(a, pushed) + "\",\"create_target\":true}");
        assertEquals(125, r.get("history").get(0).get("docs_written").asInt(), r.toString());
        assertEquals(snapshot(a, src), snapshot(a, pushed));
        // remote to remote, run by a third party (b) between two databases of a
        String both = name("both");
        r = replicate(b, "{\"source\":\"" + url(a, src) + "\",\"target\":{\"url\":\"" + url(a, both).replace("admin:pass@", "")
                + "\",\"auth\":{\"basic\":{\"username\":\"admin\",\"password\":\"pass\"}}},\"create_target\":true,\"use_bulk_get\":false}");
        assertEquals(125, r.get("history").get(0).get("docs_written").asInt(), r.toString());
        assertEquals(snapshot(a, src), snapshot(a, both));
    }

    @Test
    void filters() throws Exception {
        String src = name("fsrc");
        fill(a, src);
        String t1 = name("byids");
        replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + t1 + "\",\"create_target\":true,\"doc_ids\":[\"d1\",\"d2\",\"c\",\"nope\"]}");
        assertEquals(List.of("c", "d1", "d2"), ids(a, t1));
        String t2 = name("bysel");
        replicate(b, "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + t2 + "\",\"create_target\":true,\"selector\":{\"n\":{\"$gte\":115}}}");
        assertEquals(List.of("d115", "d116", "d117", "d118", "d119"), ids(b, t2));
        String t3 = name("byjs");
        replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + t3 + "\",\"create_target\":true,\"filter\":\"f/even\",\"query_params\":{\"min\":\"110\"}}");
        assertEquals(List.of("d110", "d112", "d114", "d116", "d118"), ids(a, t3));
        String t4 = name("byjs-remote");
        replicate(b, "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + t4 + "\",\"create_target\":true,\"filter\":\"f/even\",\"query_params\":{\"min\":\"114\"}}");
        assertEquals(List.of("d114", "d116", "d118"), ids(b, t4));
        a.asAdmin("POST", "/_replicate", "{\"source\":\"" + src + "\",\"target\":\"" + t3 + "\",\"filter\":\"f/missing\"}").error(404, "not_found", null);
    }

    /** use_checkpoints, winning_revs_only and since_seq do what CouchDB's do. */
    @Test
    void options() throws Exception {
        String src = name("osrc");
        fill(a, src);
        String t1 = name("nocp");
        JsonNode r = replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + t1 + "\",\"create_target\":true,\"use_checkpoints\":false}");
        assertEquals(false, r.get("use_checkpoints").asBoolean(), r.toString());
        assertEquals(0, a.asAdmin("GET", "/" + t1 + "/_local_docs", null).json().get("rows").size(), "no checkpoint written");
        String t2 = name("winning");
        replicate(b, "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + t2 + "\",\"create_target\":true,\"winning_revs_only\":true}");
        JsonNode c = b.asAdmin("GET", "/" + t2 + "/c?conflicts=true", null).json();
        assertFalse(c.has("_conflicts"), c.toString());
        assertTrue(a.asAdmin("GET", "/" + src + "/c?conflicts=true", null).json().has("_conflicts"));
        String since = a.asAdmin("GET", "/" + src, null).json().get("update_seq").asText();
        a.asAdmin("PUT", "/" + src + "/newer", "{\"v\":1}").status(201);
        String t3 = name("since");
        JsonNode r3 = replicate(a, "{\"source\":\"" + src + "\",\"target\":\"" + t3 + "\",\"create_target\":true,\"since_seq\":\"" + since + "\"}");
        assertEquals(List.of("newer"), ids(a, t3), r3.toString());
    }

    static List<String> ids(HttpTestServer s, String db) throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode row : s.asAdmin("GET", "/" + db + "/_all_docs", null).json().get("rows")) out.add(row.get("id").asText());
        return out;
    }

    @Test
    void continuousReplicationCopiesNewWritesUntilCancelled() throws Exception {
        String src = name("csrc");
        String tgt = name("ctgt");
        a.asAdmin("PUT", "/" + src, null).status(201);
        JsonNode r = a.asAdmin("POST", "/_replicate", "{\"source\":\"" + src + "\",\"target\":\"" + url(b, tgt) + "\",\"create_target\":true,\"continuous\":true}").status(202).json();
        String id = r.get("_local_id").asText();
        assertTrue(id.endsWith("+continuous+create_target"), id);
        a.asAdmin("PUT", "/" + src + "/x", "{\"v\":1}").status(201);
        waitFor(() -> b.asAdmin("GET", "/" + tgt + "/x", null).status() == 200, 10_000);
        JsonNode jobs = a.asAdmin("GET", "/_scheduler/jobs", null).status(200).json();
        JsonNode job = find(jobs.get("jobs"), id);
        assertNotNull(job, jobs.toString());
        assertEquals(src, job.get("source").asText());
        assertTrue(job.get("target").asText().startsWith("http://127.0.0.1:"), "no credentials shown: " + job);
        assertFalse(job.get("target").asText().contains("pass"), job.toString());
        waitFor(() -> a.asAdmin("GET", "/_active_tasks", null).text().contains("\"replication_id\":\"" + id + "\""), 10_000);
        JsonNode tasks = a.asAdmin("GET", "/_active_tasks", null).json();
        JsonNode task = null;
        for (JsonNode t : tasks) if (t.path("replication_id").asText().equals(id)) task = t;
        assertEquals("replication", task.get("type").asText());
        for (String f : List.of("docs_read", "docs_written", "doc_write_failures", "missing_revisions_found", "revisions_checked", "changes_pending",
                "checkpointed_source_seq", "source_seq")) {
            assertTrue(task.has(f), f + " in " + task);
        }
        // cancelled by the same body with "cancel": true, as CouchDB allows; then it is gone
        JsonNode cancelled = a.asAdmin("POST", "/_replicate", "{\"source\":\"" + src + "\",\"target\":\"" + url(b, tgt)
                + "\",\"create_target\":true,\"continuous\":true,\"cancel\":true}").status(200).json();
        assertEquals(id, cancelled.get("_local_id").asText());
        a.asAdmin("POST", "/_replicate", "{\"replication_id\":\"" + id + "\",\"cancel\":true}").error(404, "not_found", null);
        a.asAdmin("PUT", "/" + src + "/y", "{\"v\":2}").status(201);
        Thread.sleep(1500);
        b.asAdmin("GET", "/" + tgt + "/y", null).status(404);
    }

    @Test
    void replicatorDocumentsStartStopAndShowState() throws Exception {
        String src = name("dsrc");
        String tgt = name("dtgt");
        fill(a, src);
        a.asAdmin("PUT", "/_replicator/one", "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + url(b, tgt) + "\",\"create_target\":true}").status(201);
        waitFor(() -> "completed".equals(a.asAdmin("GET", "/_scheduler/docs/_replicator/one", null).json().path("state").asText()), 30_000);
        JsonNode d = a.asAdmin("GET", "/_scheduler/docs/_replicator/one", null).json();
        assertEquals(125, d.get("info").get("docs_written").asInt(), d.toString());
        assertEquals(snapshot(a, src), snapshot(b, tgt));
        JsonNode stored = a.asAdmin("GET", "/_replicator/one", null).json();
        assertEquals("completed", stored.get("_replication_state").asText());
        assertEquals("admin", stored.get("owner").asText());

        // continuous, then the document is deleted: the replication stops
        String tgt2 = name("dtgt2");
        String rev = a.asAdmin("PUT", "/_replicator/two", "{\"source\":\"" + url(a, src) + "\",\"target\":\"" + url(b, tgt2) + "\",\"create_target\":true,\"continuous\":true}").json().get("rev").asText();
        waitFor(() -> "running".equals(a.asAdmin("GET", "/_scheduler/docs/_replicator/two", null).json().path("state").asText()), 30_000);
        a.asAdmin("PUT", "/" + src + "/live", "{\"v\":1}").status(201);
        waitFor(() -> b.asAdmin("GET", "/" + tgt2 + "/live", null).status() == 200, 10_000);
        a.asAdmin("DELETE", "/_replicator/two?rev=" + rev, null).status(200);
        waitFor(() -> !a.asAdmin("GET", "/_scheduler/jobs", null).text().contains(tgt2), 10_000);
        a.asAdmin("PUT", "/" + src + "/after", "{\"v\":1}").status(201);
        Thread.sleep(1500);
        b.asAdmin("GET", "/" + tgt2 + "/after", null).status(404);

        // a document that does not parse is refused; one that slips in (replicated) is failed with the reason
        a.asAdmin("PUT", "/_replicator/bad", "{\"source\":\"" + url(a, src) + "\",\"target\":\"http://\"}").error(403, "forbidden", "endpoint has an invalid url");
        a.asAdmin("POST", "/_replicator/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"bad\",\"_rev\":\"1-abc\",\"source\":42}]}").status(201);
        waitFor(() -> "failed".equals(a.asAdmin("GET", "/_scheduler/docs/_replicator/bad", null).json().path("state").asText()), 10_000);
        JsonNode bad = a.asAdmin("GET", "/_scheduler/docs/_replicator/bad", null).json();
        assertEquals("endpoint has an invalid url", bad.get("info").get("error").asText(), bad.toString());
        // a filtered replication whose source cannot be reached has no id yet: `error`, retried later
        a.asAdmin("PUT", "/_replicator/unreachable", "{\"source\":\"http://127.0.0.1:1/db\",\"target\":\"" + url(b, tgt) + "\",\"filter\":\"d/f\",\"retries_per_request\":0}").status(201);
        waitFor(() -> "error".equals(a.asAdmin("GET", "/_scheduler/docs/_replicator/unreachable", null).json().path("state").asText()), 10_000);
        JsonNode err = a.asAdmin("GET", "/_scheduler/docs/_replicator/unreachable", null).json();
        assertTrue(err.get("info").get("error").asText().contains("127.0.0.1:1"), err.toString());
        assertEquals(1, err.get("error_count").asInt(), err.toString());
        JsonNode all = a.asAdmin("GET", "/_scheduler/docs?states=failed,completed", null).status(200).json();
        assertTrue(all.get("docs").size() >= 2, all.toString());
        a.asAdmin("GET", "/_scheduler/docs?states=bogus", null).error(400, "query_parse_error", null);
    }

    /**
     * A server admin's document naming local databases (Chaise's extension) runs as a server
     * admin, as CouchDB runs a document with its owner's user_ctx: it reads an admin-only source
     * and creates its target. It used to run anonymously and crash with "unauthorized".
     */
    @Test
    void serverAdminsDocumentWithLocalNamesRunsAsServerAdmin() throws Exception {
        String src = name("lsrc");
        String tgt = name("ltgt");
        fill(a, src);
        a.asAdmin("PUT", "/_replicator/local-" + src, "{\"source\":\"" + src + "\",\"target\":\"" + tgt + "\",\"create_target\":true}").status(201);
        waitFor(() -> {
            JsonNode s = a.asAdmin("GET", "/_scheduler/docs/_replicator/local-" + src, null).json();
            if (s.path("state").asText().equals("crashing")) throw new AssertionError(s.toString());
            return s.path("state").asText().equals("completed");
        }, 30_000);
        assertEquals(snapshot(a, src), snapshot(a, tgt));
        assertEquals("admin", a.asAdmin("GET", "/_replicator/local-" + src, null).json().get("owner").asText());
    }

    @Test
    void couchDbsErrors() throws Exception {
        a.asAdmin("POST", "/_replicate", "{\"source\":\"nope-nope\",\"target\":\"whatever\"}").error(404, "db_not_found", "could not open nope-nope");
        a.asAdmin("POST", "/_replicate", "{\"source\":\"http://\",\"target\":\"x\"}").error(400, "invalid_replication", "endpoint has an invalid url");
        a.asAdmin("POST", "/_replicate", "{\"source\":\"" + url(b, "missing-db") + "\",\"target\":\"x\"}").error(404, "db_not_found", null);
        String src = name("esrc");
        b.asAdmin("PUT", "/" + src, null).status(201);
        String wrong = "http://admin:wrong@127.0.0.1:" + b.http.port() + "/" + src;
        a.asAdmin("POST", "/_replicate", "{\"source\":\"" + wrong + "\",\"target\":\"x\"}").error(401, "unauthorized", null);
        a.asAdmin("POST", "/_replicate", "{\"source\":\"http://127.0.0.1:1/db\",\"target\":\"x\",\"retries_per_request\":0}").status(500);
        a.send("POST", "/_replicate", "{\"source\":\"a\",\"target\":\"b\"}", "Content-Type", "application/json").error(401, "unauthorized", "Authentication required.");
        a.send("GET", "/_scheduler/jobs", null, "Authorization", HttpTestServer.BOB).error(401, "unauthorized", null);
        a.asAdmin("GET", "/_scheduler/jobs/nope", null).error(404, "not_found", null);
        a.asAdmin("GET", "/_scheduler/docs/other", null).error(400, "bad_request", "Invalid path");
        a.asAdmin("GET", "/_scheduler/nope", null).error(404, "not_found", null);
        a.asAdmin("DELETE", "/_scheduler/jobs", null).status(405);
        a.asAdmin("GET", "/_replicate", null).status(405);
        // nothing else is affected: the server still replicates
        String ok = name("eok");
        a.asAdmin("PUT", "/" + ok, null).status(201);
        replicate(a, "{\"source\":\"" + ok + "\",\"target\":\"" + name("eok-t") + "\",\"create_target\":true}");
    }

    static JsonNode find(JsonNode jobs, String id) {
        for (JsonNode j : jobs) if (j.path("id").asText().equals(id)) return j;
        return null;
    }

    interface Check {
        boolean ok() throws Exception;
    }

    static void waitFor(Check c, long ms) throws Exception {
        long deadline = System.currentTimeMillis() + ms;
        while (!c.ok()) {
            if (System.currentTimeMillis() > deadline) throw new AssertionError("not within " + ms + " ms");
            Thread.sleep(100);
        }
    }

    static {
        Json.MAPPER.getClass(); // loaded early
    }
}

package dev.chaise.replicator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** CouchDB's scheduler rules (couch_replicator_scheduler) and _replicator's before_doc_update rules. */
class SchedulerRulesTest {
    static JsonNode history(String... events) throws Exception {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < events.length; i += 2) {
            if (i > 0) b.append(',');
            b.append("{\"type\":\"").append(events[i]).append("\",\"timestamp\":\"").append(events[i + 1]).append("\"}");
        }
        return Json.MAPPER.readTree(b.append(']').toString());
    }

    /** Newest first, as the job keeps it: crashes close together are one streak; a healthy run or a stop ends it. */
    @Test
    void consecutiveCrashesAsCouchDbCountsThem() throws Exception {
        Duration health = Duration.ofMinutes(2);
        assertEquals(0, CrashBackoff.consecutiveCrashes(history("started", "2026-01-01T00:00:00Z", "added", "2026-01-01T00:00:00Z"), health));
        assertEquals(3, CrashBackoff.consecutiveCrashes(history(
                "crashed", "2026-01-01T00:03:00Z", "started", "2026-01-01T00:02:59Z", "crashed", "2026-01-01T00:02:00Z",
                "started", "2026-01-01T00:01:59Z", "crashed", "2026-01-01T00:01:00Z", "added", "2026-01-01T00:00:59Z"), health));
        // a crash after running longer than the health threshold is not part of a streak
        assertEquals(0, CrashBackoff.consecutiveCrashes(history(
                "crashed", "2026-01-01T01:00:00Z", "started", "2026-01-01T00:10:00Z", "crashed", "2026-01-01T00:09:00Z",
                "added", "2026-01-01T00:08:59Z"), health));
        assertEquals(0, CrashBackoff.consecutiveCrashes(history("stopped", "2026-01-01T00:03:00Z", "started", "2026-01-01T00:02:00Z",
                "crashed", "2026-01-01T00:01:00Z"), health));
    }

    /** backoff_micros: base * 2^(crashes - 1), the exponent at most 10 (30 s to 8.5 hours with CouchDB's base). */
    @Test
    void backoffDoublesUpToTwoToTheTenth() {
        Duration base = Duration.ofSeconds(30);
        assertEquals(Duration.ZERO, CrashBackoff.backoff(base, 0));
        assertEquals(Duration.ofSeconds(30), CrashBackoff.backoff(base, 1));
        assertEquals(Duration.ofSeconds(60), CrashBackoff.backoff(base, 2));
        assertEquals(Duration.ofSeconds(120), CrashBackoff.backoff(base, 3));
        assertEquals(Duration.ofSeconds(30 * 1024), CrashBackoff.backoff(base, 11));
        assertEquals(Duration.ofSeconds(30 * 1024), CrashBackoff.backoff(base, 50));
    }

    static ObjectNode doc(String json) throws Exception {
        return (ObjectNode) Json.MAPPER.readTree(json);
    }

    @Test
    void replicatorDocumentsGetTheirOwnerAndMustParse() throws Exception {
        ObjectNode d = doc("{\"source\":\"http://h/a\",\"target\":\"http://h/b\"}");
        assertEquals("bob", ReplicatorDocs.beforeUpdate("r", d, false, "bob", List.of(), false).get("owner").asText());
        ReplicationException e = assertThrows(ReplicationException.class,
                () -> ReplicatorDocs.beforeUpdate("r", doc("{\"source\":\"http://h/a\",\"target\":\"http://h/b\",\"owner\":\"eve\"}"), false, "bob", List.of(), false));
        assertEquals(403, e.status());
        assertEquals("Can't update replication documents from other users.", e.reason());
        // an admin may edit anyone's; deletions and design documents pass without parsing
        ReplicatorDocs.beforeUpdate("r", doc("{\"source\":\"http://h/a\",\"target\":\"http://h/b\",\"owner\":\"eve\"}"), false, "adm", List.of("_admin"), true);
        ReplicatorDocs.beforeUpdate("r", doc("{\"owner\":\"bob\"}"), true, "bob", List.of(), false);
        ReplicatorDocs.beforeUpdate("_design/x", doc("{\"views\":{}}"), false, "bob", List.of(), false);
        e = assertThrows(ReplicationException.class, () -> ReplicatorDocs.beforeUpdate("r", doc("{\"source\":42,\"target\":\"http://h/b\"}"), false, "adm", List.of("_admin"), true));
        assertEquals("forbidden", e.error());
        assertEquals("endpoint has an invalid url", e.reason());
        // a non-admin may not run a replication as someone else
        e = assertThrows(ReplicationException.class, () -> ReplicatorDocs.beforeUpdate("r",
                doc("{\"source\":\"a\",\"target\":\"b\",\"user_ctx\":{\"name\":\"bob\",\"roles\":[\"_admin\"]}}"), false, "bob", List.of("reader"), false));
        assertEquals(403, e.status());
        ReplicatorDocs.beforeUpdate("r", doc("{\"source\":\"a\",\"target\":\"b\",\"user_ctx\":{\"name\":\"bob\",\"roles\":[\"reader\"]}}"), false, "bob", List.of("reader"), false);
    }

    /** A document runs as its user_ctx; without one, as its owner when a server admin (with _admin), else anonymously. */
    @Test
    void replicatorDocumentsRunAsTheirUserCtxOrAServerAdminOwner() throws Exception {
        java.util.function.Predicate<String> admins = "adm"::equals;
        assertEquals(new ReplicationSpec.RepUser("adm", List.of("_admin")),
                ReplicatorDocs.runAs(doc("{\"source\":\"a\",\"target\":\"b\",\"owner\":\"adm\"}"), admins));
        assertEquals(ReplicationSpec.RepUser.NONE, ReplicatorDocs.runAs(doc("{\"source\":\"a\",\"target\":\"b\",\"owner\":\"bob\"}"), admins));
        assertEquals(ReplicationSpec.RepUser.NONE, ReplicatorDocs.runAs(doc("{\"source\":\"a\",\"target\":\"b\",\"owner\":null}"), admins));
        assertEquals(new ReplicationSpec.RepUser("bob", List.of("reader")), ReplicatorDocs.runAs(
                doc("{\"source\":\"a\",\"target\":\"b\",\"owner\":\"adm\",\"user_ctx\":{\"name\":\"bob\",\"roles\":[\"reader\"]}}"), admins));
    }
}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _replicator}'s read rule, applied by the database on every path: a member who is not a
 * database admin reads another user's replication without its credentials (CouchDB's
 * {@code couch_replicator_docs:after_doc_read}); its owner and admins read it whole.
 */
class ReplicatorPolicyTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/_replicator", null).status(201);
        s.asAdmin("PUT", "/_replicator/_security", "{\"members\":{\"names\":[\"bob\",\"eve\"]}}").status(200);
        // Port 9 (discard) answers nothing: the job fails and backs off, which this test does not look at.
        s.asAdmin("PUT", "/_replicator/r1", "{\"source\":\"http://eve:pw@127.0.0.1:9/a\","
                + "\"target\":{\"url\":\"http://127.0.0.1:9/b\",\"headers\":{\"Authorization\":\"Basic ZXZlOnB3\"}},\"owner\":\"eve\"}").status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void othersReadNoCredentials() throws Exception {
        JsonNode bob = s.get("/_replicator/r1", "Authorization", HttpTestServer.BOB).status(200).json();
        assertEquals("http://127.0.0.1:9/a", bob.path("source").asText());
        assertEquals("http://127.0.0.1:9/b", bob.path("target").path("url").asText());
        assertFalse(bob.path("target").has("headers"), bob.toString());
        // The same rule on a path that reads many documents at once.
        String bulk = s.send("POST", "/_replicator/_bulk_get", "{\"docs\":[{\"id\":\"r1\"}]}", "Authorization", HttpTestServer.BOB,
                "Content-Type", "application/json").status(200).text();
        assertFalse(bulk.contains("eve:pw") || bulk.contains("ZXZlOnB3"), bulk);
    }

    @Test
    void ownerAndAdminsReadItWhole() throws Exception {
        JsonNode eve = s.get("/_replicator/r1", "Authorization", HttpTestServer.EVE).status(200).json();
        assertEquals("http://eve:pw@127.0.0.1:9/a", eve.path("source").asText());
        assertEquals("Basic ZXZlOnB3", eve.path("target").path("headers").path("Authorization").asText());
        JsonNode admin = s.get("/_replicator/r1", "Authorization", HttpTestServer.ADMIN).status(200).json();
        assertEquals("http://eve:pw@127.0.0.1:9/a", admin.path("source").asText());
    }
}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvException;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * FoundationDB's limits (keys 10 KB, values 100 KB, transactions 10 MB) reached through the HTTP
 * API: each is CouchDB's answer for a request too large (413 {@code too_large}) or a key too long
 * (400 {@code bad_request}), never a 500, whatever the path that reached it.
 */
class KvLimitsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/db", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static String big(int n) {
        return "x".repeat(n);
    }

    @Test
    void theMappingIsInTheOnePlace() {
        var tx = ErrorMapper.map(new KvException(KvException.TRANSACTION_TOO_LARGE, "transaction_too_large"), null);
        assertEquals(413, tx.status());
        assertEquals("too_large", tx.error());
        var value = ErrorMapper.map(new KvException(KvException.VALUE_TOO_LARGE, "value_too_large"), null);
        assertEquals(413, value.status());
        assertEquals("too_large", value.error());
        var key = ErrorMapper.map(new KvException(KvException.KEY_TOO_LARGE, "key_too_large"), null);
        assertEquals(400, key.status());
        assertEquals("bad_request", key.error());
        // Through a wrapper too, as storage may rethrow.
        assertEquals(413, ErrorMapper.map(new java.util.concurrent.CompletionException(new KvException(KvException.VALUE_TOO_LARGE, "v")), null).status());
    }

    @Test
    void securityObjectOverAValue() throws Exception {
        String body = "{\"admins\":{\"names\":[\"" + big(200_000) + "\"]}}";
        s.asAdmin("PUT", "/db/_security", body).error(413, "too_large", null);
        s.asAdmin("GET", "/db/_security", null).status(200);
    }

    @Test
    void localDocuments() throws Exception {
        s.asAdmin("POST", "/db", "{\"_id\":\"_local/" + big(12_000) + "\"}").error(400, "bad_request", null);
        var r = s.asAdmin("POST", "/db/_bulk_docs", "{\"docs\":[{\"_id\":\"_local/" + big(12_000) + "\"}]}");
        assertTrue(r.status() == 400 || r.status() == 201 && r.json().path(0).path("error").asText().equals("bad_request"), r.status() + " " + r.text());
        // Large _local bodies within the document size are stored (chunked values).
        s.asAdmin("PUT", "/db/_local/big", "{\"a\":\"" + big(200_000) + "\"}").status(201);
    }

    @Test
    void aTransactionOverTenMegabytes() throws Exception {
        ObjectNode req = Json.NODES.objectNode().put("all_or_nothing", true);
        ArrayNode docs = req.putArray("docs");
        for (int i = 0; i < 15; i++) {
            ArrayNode a = docs.addObject().put("_id", "aon" + i).putArray("a");
            for (int j = 0; j < 10; j++) a.add(big(90_000));
        }
        s.asAdmin("POST", "/db/_bulk_docs", req.toString()).error(413, "too_large", null);
        s.asAdmin("GET", "/db/aon0", null).status(404);
    }

    @Test
    void designDocumentsAndViewKeys() throws Exception {
        String ddoc = "{\"views\":{\"v\":{\"map\":\"function(d){emit(d._id,1)}" + " ".repeat(150_000) + "\"},"
                + "\"k\":{\"map\":\"function(d){emit([d._id,'" + "k".repeat(9_990) + "'],1)}\"}},\"x\":\"" + big(300_000) + "\"}";
        s.asAdmin("PUT", "/views", null).status(201);
        s.asAdmin("PUT", "/views/_design/big", ddoc).status(201);
        s.asAdmin("PUT", "/views/a", "{}").status(201);
        assertEquals(1, s.asAdmin("GET", "/views/_design/big/_view/v", null).status(200).json().path("rows").size());
        // A key past FDB's limit is not indexed (RFC E), and a query for one finds nothing.
        assertEquals(0, s.asAdmin("GET", "/views/_design/big/_view/k", null).status(200).json().path("rows").size());
        assertEquals(0, s.asAdmin("POST", "/views/_design/big/_view/v", "{\"keys\":[\"" + big(12_000) + "\"]}").status(200).json().path("rows").size());
        s.asAdmin("POST", "/views/_design/big/_view/v", "{\"startkey\":[\"" + big(5_000) + "\",\"" + big(5_000) + "\",\"" + big(5_000) + "\"]}").status(200);
        s.asAdmin("POST", "/db/_all_docs", "{\"keys\":[\"" + big(12_000) + "\"]}").status(200);
    }

    @Test
    void attachmentMetadata() throws Exception {
        s.asAdmin("PUT", "/db/att1", "{\"_attachments\":{\"a\":{\"data\":\"aGk=\",\"content_type\":\"" + big(120_000) + "\"}}}").status(201);
        s.asAdmin("PUT", "/db/att2", "{\"_attachments\":{\"" + big(9_000) + "\":{\"data\":\"aGk=\"}}}").status(201);
        var r = s.asAdmin("PUT", "/db/att3", "{\"_attachments\":{\"" + big(12_000) + "\":{\"data\":\"aGk=\"}}}");
        assertEquals(400, r.status(), r.text());
        // A standalone attachment's Content-Type is metadata too.
        r = s.send("PUT", "/db/att4/a", "hi", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/" + big(60_000));
        assertEquals(201, r.status(), r.text());
    }
}

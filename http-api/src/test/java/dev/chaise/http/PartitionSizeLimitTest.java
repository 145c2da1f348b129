package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code [couchdb] max_partition_size} (issue 29): a write that would grow a full partition is 403
 * {@code partition_overflow}, a {@code _bulk_docs} row for just that document; deletes, shrinking
 * updates, replicated writes, design documents and other partitions still go through
 * ({@code couch_db_updater:is_overflowed}, {@code chttpd:error_info}; the cases of
 * {@code partition_size_limit_test.exs}).
 */
class PartitionSizeLimitTest {
    static HttpTestServer s;
    static final long MAX = 10_240;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.docs.maxPartitionSize(MAX);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /** partition_size_limit_test.exs's fill_partition: 15 documents of a kilobyte. */
    private static void fill(String db, String partition) throws Exception {
        s.asAdmin("PUT", "/" + db + "?partitioned=true", null).status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 1; i <= 15; i++) {
            if (i > 1) docs.append(',');
            docs.append("{\"_id\":\"").append(partition).append(":").append(String.format("%04d", i)).append("\",\"value\":\"")
                    .append(" ".repeat(1023)).append("0\"}");
        }
        s.asAdmin("POST", "/" + db + "/_bulk_docs", docs.append("]}").toString()).status(201);
        assertTrue(s.asAdmin("GET", "/" + db + "/_partition/" + partition, null).status(200).json().path("sizes").path("external").asLong() >= MAX);
    }

    @Test
    void aFullPartitionRefusesWhatWouldGrowIt() throws Exception {
        fill("full", "foo");
        s.asAdmin("POST", "/full", "{\"_id\":\"foo:bar\",\"value\":\"stuff\"}")
                .error(403, "partition_overflow", "Partition limit exceeded due to update on 'foo:bar'");
        s.asAdmin("PUT", "/full/foo:bar", "{\"value\":\"stuff\"}").error(403, "partition_overflow", "Partition limit exceeded due to update on 'foo:bar'");
        JsonNode rows = s.asAdmin("POST", "/full/_bulk_docs", "{\"docs\":[{\"_id\":\"foo:bar\"},{\"_id\":\"baz:bang\"}]}").status(201).json();
        assertEquals("partition_overflow", rows.path(0).path("error").asText());
        assertEquals("Partition limit exceeded due to update on 'foo:bar'", rows.path(0).path("reason").asText());
        assertTrue(rows.path(1).path("ok").asBoolean(), rows.toString());
        // an update that grows a document in it too
        JsonNode doc = s.asAdmin("GET", "/full/foo:0002", null).status(200).json();
        s.asAdmin("PUT", "/full/foo:0002", "{\"_rev\":\"" + doc.path("_rev").asText() + "\",\"value\":\"" + " ".repeat(2000) + "\"}")
                .error(403, "partition_overflow", "Partition limit exceeded due to update on 'foo:0002'");
    }

    @Test
    void whatDoesNotGrowAFullPartitionGoesThrough() throws Exception {
        fill("shrink", "foo");
        s.asAdmin("GET", "/shrink/foo:0001", null).status(200);
        JsonNode one = s.asAdmin("GET", "/shrink/foo:0001", null).status(200).json();
        s.asAdmin("DELETE", "/shrink/foo:0001?rev=" + one.path("_rev").asText(), null).status(200);
        JsonNode two = s.asAdmin("GET", "/shrink/foo:0002", null).status(200).json();
        s.asAdmin("PUT", "/shrink/foo:0002", "{\"_rev\":\"" + two.path("_rev").asText() + "\",\"value\":\"\"}").status(201);
        s.asAdmin("POST", "/shrink", "{\"_id\":\"bar:foo\",\"value\":\"stuff\"}").status(201);
        String rev = s.asAdmin("POST", "/shrink", "{\"_id\":\"_design/foo\",\"value\":\"stuff\"}").status(201).json().path("rev").asText();
        s.asAdmin("POST", "/shrink", "{\"_id\":\"_design/foo\",\"_rev\":\"" + rev + "\",\"value\":\"hi\"}").status(201);
    }

    @Test
    void replicatedWritesAndPurgesAndTheLimitItself() throws Exception {
        fill("repl", "foo");
        s.asAdmin("POST", "/repl", "{\"_id\":\"foo:bar\",\"value\":\"stuff\"}").status(403);
        s.asAdmin("PUT", "/repl/foo:bar?new_edits=false", "{\"_id\":\"foo:bar\",\"_rev\":\"1-23202479633c2b380f79507a776743d5\",\"value\":\"stuff\"}")
                .status(201);
        // purging brings the partition under the limit again
        for (int i = 1; i <= 15; i++) {
            String id = String.format("foo:%04d", i);
            String rev = s.asAdmin("GET", "/repl/" + id, null).status(200).json().path("_rev").asText();
            s.asAdmin("POST", "/repl/_purge", "{\"" + id + "\":[\"" + rev + "\"]}").status(201);
        }
        s.asAdmin("POST", "/repl", "{\"_id\":\"foo:more\",\"value\":\"stuff\"}").status(201);
        // a limit of 0 is none
        fill("nolimit", "foo");
        s.docs.maxPartitionSize(0);
        try {
            s.asAdmin("POST", "/nolimit", "{\"_id\":\"foo:bar\",\"value\":\"stuff\"}").status(201);
        } finally {
            s.docs.maxPartitionSize(MAX);
        }
    }
}

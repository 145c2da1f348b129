package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DbPolicy;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentValidator;
import dev.chaise.storage.SecuredDb;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every write path runs the database's rules exactly once per document: a policy registered with
 * storage, as the system databases' rules and validate_doc_update are, records each call of its
 * {@code beforeUpdate} and of its validator's check, and each path of HTTP and of the replicator
 * must show one of each for each document it wrote.
 */
class PolicyHooksTest {
    static HttpTestServer s;
    static final Recorder recorder = new Recorder();

    /** Counts, per database and document id, the calls the door makes to a policy. */
    static final class Recorder implements DbPolicy {
        final Map<String, Integer> before = new TreeMap<>();
        final Map<String, Integer> checked = new TreeMap<>();

        synchronized void count(Map<String, Integer> m, String key) {
            m.merge(key, 1, Integer::sum);
        }

        synchronized void clear() {
            before.clear();
            checked.clear();
        }

        @Override
        public DocUpdate beforeUpdate(SecuredDb db, DocUpdate doc, boolean newEdits) {
            if (db.name().startsWith("hooks")) count(before, db.name() + "/" + doc.id());
            return doc;
        }

        @Override
        public DocumentValidator validator(SecuredDb db) {
            if (!db.name().startsWith("hooks")) return null;
            return snapshot -> new DocumentValidator.Checks() {
                @Override
                public void check(ObjectNode newDoc, Supplier<ObjectNode> oldDoc) {
                    count(checked, db.name() + "/" + newDoc.path("_id").asText());
                }

                @Override
                public void close() {}
            };
        }
    }

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.docs.addPolicy(recorder);
        s.asAdmin("PUT", "/hooks", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static String rev(HttpTestServer.Resp r) {
        return r.json().path("rev").asText();
    }

    /** Both counts of every document written since the last clear: exactly {@code expected}. */
    static void assertOnce(String... expected) {
        Map<String, Integer> want = new TreeMap<>();
        for (String k : expected) want.put(k, 1);
        synchronized (recorder) {
            assertEquals(want, recorder.before, "beforeUpdate calls");
            assertEquals(want, recorder.checked, "validator checks");
        }
        recorder.clear();
    }

    @Test
    void everyHttpWritePathOncePerDocument() throws Exception {
        recorder.clear();
        String r1 = rev(s.asAdmin("PUT", "/hooks/put", "{\"a\":1}").status(201));
        assertOnce("hooks/put");
        s.asAdmin("POST", "/hooks", "{\"_id\":\"post\"}").status(201);
        assertOnce("hooks/post");
        s.send("COPY", "/hooks/put", null, "Authorization", HttpTestServer.ADMIN, "Destination", "copied").status(201);
        assertOnce("hooks/copied");
        s.asAdmin("DELETE", "/hooks/put?rev=" + r1, null).status(200);
        assertOnce("hooks/put");
        s.asAdmin("POST", "/hooks/_bulk_docs", "{\"docs\":[{\"_id\":\"b1\"},{\"_id\":\"b2\"}]}").status(201);
        assertOnce("hooks/b1", "hooks/b2");
        s.asAdmin("POST", "/hooks/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"r1\",\"_rev\":\"1-abc\"}]}").status(201);
        assertOnce("hooks/r1");
        s.asAdmin("POST", "/hooks/_bulk_docs", "{\"all_or_nothing\":true,\"docs\":[{\"_id\":\"n1\"},{\"_id\":\"n2\"}]}").status(201);
        assertOnce("hooks/n1", "hooks/n2");
        s.asAdmin("PUT", "/hooks/ne?new_edits=false", "{\"_rev\":\"1-abc\"}").status(201);
        assertOnce("hooks/ne");
        s.asAdmin("PUT", "/hooks/batched?batch=ok", "{}").status(202);
        assertOnce("hooks/batched");
        String a = rev(s.send("PUT", "/hooks/att/x.txt", "hello", "Authorization", HttpTestServer.ADMIN, "Content-Type", "text/plain").status(201));
        assertOnce("hooks/att");
        s.asAdmin("DELETE", "/hooks/att/x.txt?rev=" + a, null).status(200);
        assertOnce("hooks/att");
        String boundary = "xyz";
        String multipart = "--" + boundary + "\r\nContent-Type: application/json\r\n\r\n"
                + "{\"_attachments\":{\"f.txt\":{\"follows\":true,\"content_type\":\"text/plain\",\"length\":5}}}\r\n--" + boundary
                + "\r\n\r\nhello\r\n--" + boundary + "--";
        s.send("PUT", "/hooks/multi", multipart, "Authorization", HttpTestServer.ADMIN, "Content-Type", "multipart/related;boundary=\"" + boundary + "\"")
                .status(201);
        assertOnce("hooks/multi");
        // _local documents meet no document rules, in CouchDB as here.
        s.asAdmin("PUT", "/hooks/_local/l", "{}").status(201);
        assertOnce();
    }

    @Test
    void theReplicatorsWritesOncePerDocument() throws Exception {
        s.asAdmin("PUT", "/hooks_src", null).status(201);
        s.asAdmin("POST", "/hooks_src/_bulk_docs", "{\"docs\":[{\"_id\":\"x1\"},{\"_id\":\"x2\"},{\"_id\":\"x3\",\"_deleted\":true}]}").status(201);
        String d = rev(s.asAdmin("PUT", "/hooks_src/x4", "{}").status(201));
        s.asAdmin("PUT", "/hooks_src/x4", "{\"_rev\":\"" + d + "\",\"v\":2}").status(201);
        recorder.clear();
        HttpTestServer.Resp r = s.asAdmin("POST", "/_replicate", "{\"source\":\"hooks_src\",\"target\":\"hooks_dst\",\"create_target\":true}");
        r.status(200);
        assertTrue(r.json().path("ok").asBoolean(), r.text());
        // The source is only read; each document reaches the target once, through the same door.
        assertOnce("hooks_dst/x1", "hooks_dst/x2", "hooks_dst/x3", "hooks_dst/x4");
    }
}

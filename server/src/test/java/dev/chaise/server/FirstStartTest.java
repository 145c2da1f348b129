package dev.chaise.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.SecurityObject;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

class FirstStartTest {
    @Test
    void systemDatabasesAreCreatedOnceWithAdminOnlySecurity() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            Storage dbs = new Storage(kv, SecurityObject.ADMIN_ONLY_JSON);
            assertEquals(List.of("_users", "_replicator"), SystemDatabases.ensure(dbs));
            for (String name : SystemDatabases.NAMES) {
                SecurityObject sec = SecurityObject.parse(dbs.open(name).securityJson());
                assertEquals(SecurityObject.parse(SecurityObject.ADMIN_ONLY_JSON), sec, name);
            }
            assertEquals(List.of(), SystemDatabases.ensure(dbs), "a restart creates nothing");
            dbs.delete("_replicator");
            assertEquals(List.of("_replicator"), SystemDatabases.ensure(dbs), "a missing one comes back");
        }
    }

    @Test
    void maxDocumentSizeFollowsTheLiveConfig() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            Storage docs = new Storage(kv, SecurityObject.ADMIN_ONLY_JSON);
            var db = docs.create("db");
            IniConfigStore live = new IniConfigStore(ConfigFiles.defaults(), null);
            live.addListener((s, k, v) -> Main.applyLive(live, docs, s, k));
            ObjectNode body = Json.NODES.objectNode().put("text", "x".repeat(500));
            assertTrue(db.updateUnchecked(List.of(DocUpdate.edit("a", null, false, body.deepCopy())), true).get(0).ok());
            live.set("couchdb", "max_document_size", "100", false);
            var r = db.updateUnchecked(List.of(DocUpdate.edit("b", null, false, body.deepCopy())), true).get(0);
            assertEquals(StorageException.Kind.DOCUMENT_TOO_LARGE, r.error() == null ? null : r.error().kind());
            live.delete("couchdb", "max_document_size", false);
            assertTrue(db.updateUnchecked(List.of(DocUpdate.edit("c", null, false, body.deepCopy())), true).get(0).ok(),
                    "deleting the key goes back to the default");
        }
    }

    /** [attachments] compression_level and compressible_types follow the live config, as CouchDB reads them per write. */
    @Test
    void attachmentCompressionFollowsTheLiveConfig() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            Storage docs = new Storage(kv, SecurityObject.ADMIN_ONLY_JSON);
            var db = docs.create("db");
            IniConfigStore live = new IniConfigStore(ConfigFiles.defaults(), null);
            live.addListener((s, k, v) -> Main.applyLive(live, docs, s, k));
            java.util.function.Function<String, Boolean> gzipped = id -> {
                ObjectNode body = Json.NODES.objectNode();
                body.putObject("_attachments").putObject("a").put("content_type", "text/plain").put("data", "aGVsbG8=");
                assertTrue(db.updateUnchecked(List.of(DocUpdate.edit(id, null, false, body)), true).get(0).ok());
                return db.get(id, null, false).body().at("/_attachments/a").has("encoding");
            };
            assertTrue(gzipped.apply("a"), "text/* by default");
            live.set("attachments", "compression_level", "0", false);
            assertTrue(!gzipped.apply("b"), "level 0 stores as sent");
            live.set("attachments", "compression_level", "8", false);
            live.set("attachments", "compressible_types", "application/json", false);
            assertTrue(!gzipped.apply("c"), "text/plain is no longer compressible");
        }
    }
}

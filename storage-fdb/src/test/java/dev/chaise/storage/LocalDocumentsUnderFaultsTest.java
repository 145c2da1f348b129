package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.Test;

/**
 * {@code _local} documents (replication checkpoints) written while commits fail: a 1021 whose
 * commit landed must not reach the caller as an error, or its retry with the same rev gets a 409
 * for a write that succeeded. CouchDB on FoundationDB guards every write transaction with a
 * transaction id (fabric2_fdb:transactional); so must putLocal.
 */
class LocalDocumentsUnderFaultsTest {

    @Test
    void aCheckpointWriterNeverSeesAnUnknownResult() {
        // Every third commit ends with 1021, every one of which really committed.
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(new FaultInjection(0, 0, 0.33, 1.0, 5L)))) {
            try (Storage store = new Storage(kv, "{}")) {
                createRetrying(store.directory(), "local");
                String rev = null;
                for (int i = 1; i <= 30; i++) {
                    ObjectNode b = Json.NODES.objectNode().put("seq", i);
                    rev = store.open("local").putLocal("_local/checkpoint", rev, false, b).rev();
                    assertEquals("0-" + i, rev);
                }
                assertEquals(30, store.open("local").getLocal("_local/checkpoint").body().get("seq").intValue());
                assertTrue(kv.timer().count(dev.chaise.kv.StoreTimer.Counts.INJECTED_FAULTS) > 5, "faults were injected");
                store.open("local").putLocal("_local/checkpoint", rev, true, Json.NODES.objectNode());
                assertEquals("missing", org.junit.jupiter.api.Assertions.assertThrows(StorageException.class,
                        () -> store.open("local").getLocal("_local/checkpoint")).reason());
            }
        }
    }

    static void createRetrying(DatabaseDirectory dirs, String name) {
        createRetrying(dirs, name, false);
    }

    /** Creates {@code name} (an access database if {@code access}) while commits may end with 1021. */
    static void createRetrying(DatabaseDirectory dirs, String name, boolean access) {
        for (int i = 0; i < 50; i++) {
            try {
                dirs.create(name, new DbProps(false, access));
                return;
            } catch (dev.chaise.kv.KvException e) {
                if (!e.maybeCommitted()) throw e;
            } catch (StorageException e) {
                if (e.kind() == StorageException.Kind.FILE_EXISTS) return;
                throw e;
            }
        }
    }
}

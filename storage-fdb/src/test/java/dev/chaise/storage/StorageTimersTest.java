package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.StoreTimer;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The document layer's counts and waits land in the one StoreTimer, by name, ready for metrics. */
class StorageTimersTest {

    @Test
    void writesReadsConflictsAndScansAreCounted() {
        try (StoreFixture f = StoreFixture.open()) {
            Database db = f.store.open(f.newDb("timers", 0));
            StoreTimer t = f.store.timer();
            List<DocUpdate> docs = new ArrayList<>();
            for (int i = 0; i < 30; i++) docs.add(DocUpdate.edit("d" + i, null, false, Json.NODES.objectNode().put("i", i)));
            db.update(docs, true);
            assertEquals(30, t.count(StorageCounts.DOCUMENTS_WRITTEN));
            db.update(List.of(DocUpdate.edit("d0", null, false, Json.NODES.objectNode())), true); // no rev: 409
            assertEquals(1, t.count(StorageCounts.DOCUMENT_CONFLICTS));
            assertEquals(30, t.count(StorageCounts.DOCUMENTS_WRITTEN));

            long readBefore = t.count(StorageCounts.DOCUMENTS_READ);
            db.get("d1", null, false);
            assertEquals(readBefore + 1, t.count(StorageCounts.DOCUMENTS_READ));

            long scanned = t.count(StorageCounts.CURSOR_ROWS_SCANNED);
            long txs = t.count(StorageCounts.CURSOR_TRANSACTIONS);
            db.allDocs(Database.IdRange.ALL, ScanProperties.FORWARD.rowsPerTransaction(7), null, (r, d) -> d).forEachRemaining(d -> { });
            assertEquals(scanned + 30, t.count(StorageCounts.CURSOR_ROWS_SCANNED));
            assertEquals(txs + 5, t.count(StorageCounts.CURSOR_TRANSACTIONS), "30 rows at 7 a transaction: 4 full ones and one that runs out");

            var snapshot = t.snapshot();
            assertEquals(30, snapshot.get("count.DOCUMENTS_WRITTEN").count());
            assertEquals(2, snapshot.get("wait.SAVE_DOCUMENTS").count());
            assertTrue(snapshot.get("wait.SAVE_DOCUMENTS").totalNanos() > 0);
            assertTrue(snapshot.containsKey("wait.COMMIT"), "the seam's own waits are in the same snapshot");
        }
    }

    @Test
    void retriedWriteAttemptsAreCounted() {
        try (StoreFixture f = StoreFixture.withFaults(0.3, 7)) {
            Database db = f.store.open(f.newDb("retries", 0));
            for (int i = 0; i < 40; i++) {
                for (UpdateResult r : db.update(List.of(DocUpdate.edit("d" + i, null, false, Json.NODES.objectNode())), true)) {
                    assertTrue(r.ok(), String.valueOf(r.error()));
                }
            }
            assertTrue(f.injectedFaults() > 0);
            assertTrue(f.store.timer().count(StorageCounts.WRITE_ATTEMPTS_RETRIED) > 0, "faults made attempts run again");
            assertEquals(40, f.store.timer().count(StorageCounts.DOCUMENTS_WRITTEN));
        }
    }
}

package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The _db_updates subspace: one row per database at its last event, updates flushed by the server on its own. */
class DbUpdatesFeedTest {

    private static List<String> feed(Storage s) {
        List<String> out = new ArrayList<>();
        s.dbUpdates(null, ScanProperties.FORWARD).forEachRemaining(u -> out.add(u.dbName() + ":" + u.type()));
        return out;
    }

    @Test
    void writesBecomeOneUpdatedEventWithoutAnyoneAsking() throws Exception {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory()); Storage s = new Storage(kv, "{}")) {
            Database a = s.create("a");
            s.create("b");
            for (int i = 0; i < 20; i++) a.update(List.of(DocUpdate.edit("d" + i, null, false, Json.NODES.objectNode())), true);
            long deadline = System.nanoTime() + 10_000_000_000L;
            List<String> want = List.of("a:created", "b:created", "a:updated");
            while (!feed(s).equals(want) && System.nanoTime() < deadline) Thread.sleep(50);
            assertEquals(want, feed(s), "twenty writes, one event, after b's creation; a's creation keeps its place");
            String now = s.dbUpdatesNow();
            s.delete("a");
            List<DbUpdate> after = new ArrayList<>();
            s.dbUpdates(now, ScanProperties.FORWARD).forEachRemaining(after::add);
            assertEquals(1, after.size());
            assertEquals("deleted", after.getFirst().type());
            assertTrue(after.getFirst().seq().compareTo(now) > 0, "seqs sort as the feed does");
        }
    }

    @Test
    void closingRecordsWhatWasMarked() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory())) {
            try (Storage s = new Storage(kv, "{}")) {
                Database c = s.create("c");
                c.update(List.of(DocUpdate.edit("x", null, false, Json.NODES.objectNode())), true);
            }
            try (Storage again = new Storage(kv, "{}")) {
                assertEquals(List.of("c:created", "c:updated"), feed(again));
            }
        }
    }
}

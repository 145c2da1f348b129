package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.kv.embedded.FaultInjection;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Database creation, deletion and metadata edits under 1021 (commit_unknown_result), half of which
 * did commit: the caller sees each call succeed once, never a spurious file_exists or not_found.
 */
class DatabaseDirectoryFaultsTest {

    @Test
    void createAndDeleteSurviveUnknownResults() {
        try (KvStore kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory().withFaults(new FaultInjection(0, 0, 0.4, 0.5, 42)));
             Storage store = new Storage(kv, "{}")) {
            DatabaseDirectory dirs = store.directory();
            List<String> names = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String n = "db" + i;
                dirs.create(n);
                store.open(n).setRevsLimit(7 + i);
                names.add(n);
            }
            assertEquals(names.stream().sorted().toList(), dirs.list(null, null, false, 0, 0));
            for (int i = 0; i < 40; i++) assertEquals(7 + i, dirs.open("db" + i).revsLimit());
            for (String n : names) dirs.delete(n);
            for (String n : names) assertFalse(dirs.exists(n));
        }
    }
}

package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lowering {@code _revs_limit} on a database with long histories: a cached handle must see the
 * new limit at once, a new edit stems only its own branch (RFC C writes just that KV), a
 * replicated write restems every branch of its document, and the invariants hold throughout.
 */
class RevsLimitChangeTest {

    static ObjectNode body(int n) {
        return Json.NODES.objectNode().put("n", n);
    }

    @Test
    void loweringTheLimitStemsAsDocumentsAreWritten() {
        try (StoreFixture f = StoreFixture.open()) {
            String db = f.newDb("limit", 0);
            RevId rev = null;
            for (int i = 0; i < 12; i++) rev = f.store.open(db).update(List.of(DocUpdate.edit("d", rev, false, body(i))), true).getFirst().rev();
            String a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
            assertTrue(f.store.open(db).update(List.of(DocUpdate.replicated("d", EditBranch.fromRevisions(2, List.of("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", a), false), body(-1))), false).getFirst().ok());
            assertEquals(12, f.store.open(db).get("d", null, true).branches().stream().mapToInt(EditBranch::length).max().orElseThrow());

            f.store.open(db).setRevsLimit(3);
            assertEquals(3, f.dirs.open(db).revsLimit());
            UpdateResult next = f.store.open(db).update(List.of(DocUpdate.edit("d", rev, false, body(99))), true).getFirst();
            assertTrue(next.ok());
            EditBranch winner = f.store.open(db).branches("d").getLast();
            assertEquals(next.rev(), winner.leaf());
            assertEquals(3, winner.length(), "the new branch is stemmed to the new limit");
            f.checkInvariants(db, 0);

            // A replicated write restems every branch of the document.
            assertTrue(f.store.open(db).update(List.of(DocUpdate.replicated("d", EditBranch.fromRevisions(3, List.of("cccccccccccccccccccccccccccccccc", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", a), false), body(-2))), false).getFirst().ok());
            for (EditBranch b : f.store.open(db).branches("d")) assertTrue(b.length() <= 3, b.toString());
            f.checkInvariants(db, 3);
        }
    }
}

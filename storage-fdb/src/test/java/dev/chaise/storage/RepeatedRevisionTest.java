package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Interactive revision ids are deterministic, so editing a parent again with the same body gives
 * the same revision. That can only happen once the parent's link to its child was lost (stemming,
 * or a history replicated in without its parent) and the parent came back as a leaf. CouchDB and
 * {@code RevTreeModel} then answer 409: a revision is stored once. Found by
 * {@link DocumentStoreModelProperties}; these are the shrunk cases.
 */
class RepeatedRevisionTest {
    static final String Z = "ffffffffffffffffffffffffffffffff";
    StoreFixture f;

    @BeforeEach
    void open() {
        f = StoreFixture.open();
    }

    @AfterEach
    void close() {
        f.close();
    }

    static ObjectNode body(String json) {
        try {
            return (ObjectNode) Json.MAPPER.readTree(json);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    UpdateResult edit(String db, RevId base, boolean deleted, ObjectNode b) {
        return f.store.open(db).update(List.of(DocUpdate.edit("d", base, deleted, b)), true).getFirst();
    }

    void replicate(String db, EditBranch path, ObjectNode b) {
        assertTrue(f.store.open(db).update(List.of(DocUpdate.replicated("d", path, b)), false).getFirst().ok());
    }

    /**
     * revs_limit 1 keeps no ancestors: 1-a is edited to 2-b, 1-a is replicated back in as a leaf,
     * a third branch wins, and 1-a is edited with the same body again. 2-b exists as a leaf the
     * edit does not read (only the base and the winner); writing it again overwrote its KV and left
     * BranchCount and sizes wrong.
     */
    @Test
    void editingALeafIntoAnExistingLeafIsAConflict() {
        String db = f.newDb("rep", 1);
        ObjectNode b = body("{\"v\":1}");
        RevId a = edit(db, null, false, body("{}")).rev();
        RevId two = edit(db, a, false, b).rev();
        replicate(db, EditBranch.root(a, false), body("{}"));
        replicate(db, EditBranch.root(RevId.of(3, Z), false), body("{\"w\":3}"));
        assertEquals(3, f.store.open(db).branches("d").size());

        UpdateResult again = edit(db, a, false, b);
        assertEquals(two, RevHasher.newRevId(a, false, b, List.of()));
        assertEquals(StorageException.Kind.CONFLICT, again.error() == null ? null : again.error().kind(), "got " + again);
        assertEquals(3, f.store.open(db).branches("d").size());
        f.checkInvariants(db, 1);
    }

    /** The same with a deletion: the existing tombstone is not the runner-up the deletion reads. */
    @Test
    void deletingALeafIntoAnExistingTombstoneIsAConflict() {
        String db = f.newDb("rep", 1);
        RevId a = edit(db, null, false, body("{}")).rev();
        RevId gone = edit(db, a, true, body("{}")).rev();
        replicate(db, EditBranch.root(a, false), body("{}"));
        replicate(db, EditBranch.root(RevId.of(3, Z), true), body("{}"));

        UpdateResult again = edit(db, a, true, body("{}"));
        assertEquals(gone, RevHasher.newRevId(a, true, body("{}"), List.of()));
        assertEquals(StorageException.Kind.CONFLICT, again.error() == null ? null : again.error().kind(), "got " + again);
        assertEquals(3, f.store.open(db).branches("d").size());
        f.checkInvariants(db, 1);
    }

    /**
     * A replication that sent the revision with the other deleted flag (a client that lies, or a
     * bug elsewhere) left it as a tombstone; the same live edit must still be a 409, not a second
     * leaf with the same revision. Found by the model test's soak.
     */
    @Test
    void editingALeafIntoAnExistingLeafWithTheOtherDeletedFlagIsAConflict() {
        String db = f.newDb("rep", 1);
        ObjectNode b = body("{\"v\":1}");
        RevId a = edit(db, null, false, body("{}")).rev();
        RevId two = edit(db, a, false, b).rev();
        edit(db, two, false, body("{\"v\":3}")); // revs_limit 1: 2-b is forgotten
        replicate(db, EditBranch.root(two, true), body("{}"));
        replicate(db, EditBranch.root(a, false), body("{}"));
        assertEquals(3, f.store.open(db).branches("d").size());

        UpdateResult again = edit(db, a, false, b);
        assertEquals(StorageException.Kind.CONFLICT, again.error() == null ? null : again.error().kind(), "got " + again);
        assertEquals(3, f.store.open(db).branches("d").size());
        f.checkInvariants(db, 1);
    }

    /**
     * The repeated revision is an ancestor kept in the path of a branch the edit does not read:
     * an edit of a document with conflicts reads every branch to find it (it used to be kept
     * both as a leaf and as an ancestor).
     */
    @Test
    void editingALeafIntoAnExistingStemmedAncestorIsAConflict() {
        String db = f.newDb("rep", 2);
        ObjectNode b = body("{\"v\":1}");
        RevId a = edit(db, null, false, body("{}")).rev();
        RevId two = edit(db, a, false, b).rev();
        RevId three = edit(db, two, false, body("{\"v\":3}")).rev(); // stems 1-a away: [3, 2]
        replicate(db, EditBranch.root(a, false), body("{}"));
        replicate(db, EditBranch.fromRevisions(4, List.of(Z, "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"), false), body("{}"));
        assertEquals(List.of(three, two), f.store.open(db).branches("d").stream().filter(x -> x.leaf().equals(three)).findFirst().orElseThrow().revs());

        UpdateResult again = edit(db, a, false, b);
        assertEquals(StorageException.Kind.CONFLICT, again.error() == null ? null : again.error().kind(), "got " + again);
        f.checkInvariants(db, 2);
    }
}

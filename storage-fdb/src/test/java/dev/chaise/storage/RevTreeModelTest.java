package dev.chaise.storage;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The reference model on its own, so it is trusted independently of the branch code. */
class RevTreeModelTest {

    static RevId r(long pos, String hash) {
        return RevId.of(pos, hash);
    }

    @Test
    void interactiveLifecycle() {
        RevTreeModel m = new RevTreeModel(10);
        assertNull(m.winner());
        m.update(null, false, r(1, "a"));
        m.update(r(1, "a"), false, r(2, "b"));
        assertConflict(() -> m.update(r(1, "a"), false, r(2, "x")));
        assertConflict(() -> m.update(null, false, r(1, "x")));
        m.update(r(2, "b"), true, r(3, "c"));
        assertTrue(m.winnerDeleted());
        assertConflict(() -> m.update(r(3, "c"), false, r(4, "x")));
        assertConflict(() -> m.update(null, true, r(4, "x")));
        assertEquals(4, m.positionFor(null, false));
        assertThrows(IllegalArgumentException.class, () -> m.update(null, false, r(1, "x")));
        m.update(null, false, r(4, "d"));
        assertEquals(List.of(r(4, "d"), r(3, "c"), r(2, "b"), r(1, "a")), m.revsOfWinner());
        assertFalse(m.winnerDeleted());
    }

    @Test
    void replicatedConflictAndItsResolution() {
        RevTreeModel m = new RevTreeModel(10);
        m.mergePath(List.of(r(2, "1a"), r(1, "1")), false);
        m.mergePath(List.of(r(3, "1aa")), false);
        assertEquals(List.of(r(2, "1a")), m.conflicts());
        m.mergePath(List.of(r(3, "1aa"), r(2, "1a"), r(1, "1")), false);
        assertEquals(List.of(), m.conflicts());
        assertEquals(List.of(r(3, "1aa"), r(2, "1a"), r(1, "1")), m.revsOfWinner());
    }

    @Test
    void deletedLeavesAreDeletedConflicts() {
        RevTreeModel m = new RevTreeModel(10);
        m.mergePath(List.of(r(2, "b"), r(1, "a")), false);
        m.mergePath(List.of(r(3, "d"), r(2, "c"), r(1, "a")), true);
        assertEquals(r(2, "b"), m.winner());
        assertEquals(List.of(r(3, "d")), m.deletedConflicts());
        assertEquals(2, m.leaves().size());
    }

    @Test
    void stemmingKeepsTheNewestRevisionsOfEachLeaf() {
        RevTreeModel m = new RevTreeModel(3);
        m.mergePath(List.of(r(3, "e"), r(2, "b"), r(1, "a")), false);
        m.mergePath(List.of(r(4, "d"), r(3, "c"), r(2, "b"), r(1, "a")), false);
        assertEquals(List.of(r(4, "d"), r(3, "c"), r(2, "b")), m.revsOf(r(4, "d")));
        assertEquals(List.of(r(3, "e"), r(2, "b"), r(1, "a")), m.revsOf(r(3, "e")));
        // b is one step from its nearest leaf, so two revisions are visible from it.
        assertEquals(List.of(r(2, "b"), r(1, "a")), m.revsOf(r(2, "b")));
        m.update(r(3, "e"), false, r(4, "f"));
        assertFalse(m.contains(r(1, "a")));
        assertEquals(List.of(r(4, "f"), r(3, "e"), r(2, "b")), m.revsOf(r(4, "f")));
    }

    @Test
    void stemmedAwayRevisionsComeBackAsALeaf() {
        RevTreeModel m = new RevTreeModel(2);
        m.mergePath(List.of(r(3, "c"), r(2, "b"), r(1, "a")), false);
        assertEquals(java.util.Set.of(r(3, "c"), r(2, "b")), m.allRevs());
        m.mergePath(List.of(r(1, "a")), false);
        assertEquals(List.of(r(1, "a")), m.conflicts());
    }

    @Test
    void contradictingPathKeepsTheKnownParent() {
        RevTreeModel m = new RevTreeModel(10);
        m.mergePath(List.of(r(3, "c"), r(2, "b")), false);
        m.mergePath(List.of(r(4, "x"), r(3, "c"), r(2, "z"), r(1, "y")), false);
        assertEquals(List.of(r(4, "x"), r(3, "c"), r(2, "b")), m.revsOfWinner());
        assertFalse(m.contains(r(2, "z")));
    }

    @Test
    void copyIsIndependent() {
        RevTreeModel m = new RevTreeModel(5);
        m.update(null, false, r(1, "a"));
        RevTreeModel c = m.copy();
        m.update(r(1, "a"), false, r(2, "b"));
        assertEquals(r(1, "a"), c.winner());
        assertEquals(r(2, "b"), m.winner());
    }

    static void assertConflict(Runnable r) {
        StorageException e = assertThrows(StorageException.class, r::run);
        assertEquals(StorageException.Kind.CONFLICT, e.kind());
    }
}

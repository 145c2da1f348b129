package dev.chaise.storage;



import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Concrete behaviours. The merge cases restate couch_key_tree's own test scenarios (CouchDB
 * counts depth from 0 in some of them; here positions start at 1).
 */
class EditBranchesTest {

    static final int LIMIT = 10;

    static RevId r(long pos, String hash) {
        return RevId.of(pos, hash);
    }

    /** A path written oldest first, as couch_key_tree writes {Start, Key -> Key …}. */
    static EditBranch p(long start, String... oldestFirst) {
        List<String> newestFirst = new ArrayList<>(Arrays.asList(oldestFirst));
        java.util.Collections.reverse(newestFirst);
        RevId leaf = r(start + oldestFirst.length - 1, newestFirst.getFirst());
        return new EditBranch(leaf, false, newestFirst.subList(1, newestFirst.size()));
    }

    static EditBranch dead(EditBranch b) {
        return new EditBranch(b.leaf(), true, b.ancestors());
    }

    static List<EditBranch> tree(EditBranch... branches) {
        return EditBranches.sorted(List.of(branches));
    }

    static BranchUpdate merge(List<EditBranch> tree, EditBranch path) {
        return EditBranches.merge(tree, path, LIMIT);
    }

    static void assertSameBranches(List<EditBranch> expected, List<EditBranch> actual) {
        assertEquals(new HashSet<>(expected), new HashSet<>(actual));
    }

    @Nested
    class MergeLikeCouchKeyTree {

        @Test
        void pathIntoEmptyDocumentIsItsOnlyBranch() {
            BranchUpdate u = merge(List.of(), p(1, "1"));
            assertEquals(List.of(p(1, "1")), u.branches());
            assertEquals(List.of(p(1, "1")), u.added());
            assertTrue(u.changed());
            assertFalse(u.leafAlreadyKnown());
        }

        @Test
        void mergingAKnownLeafAgainChangesNothing() {
            BranchUpdate u = merge(tree(p(1, "1")), p(1, "1"));
            assertFalse(u.changed());
            assertTrue(u.leafAlreadyKnown());
        }

        @Test
        void oneOfTwoRootsAgainChangesNothing() {
            assertFalse(merge(tree(p(1, "1"), p(1, "2")), p(1, "1")).changed());
        }

        @Test
        void unrelatedRootAddsAConflict() {
            BranchUpdate u = merge(tree(p(1, "1"), p(1, "2")), p(1, "3"));
            assertSameBranches(List.of(p(1, "1"), p(1, "2"), p(1, "3")), u.branches());
            assertEquals(r(1, "3"), u.winner().leaf());
            assertEquals(List.of(r(1, "2"), r(1, "1")), EditBranches.conflicts(u.branches()));
        }

        @Test
        void aTreeMergedWithItsOwnPathsStaysTheSame() {
            List<EditBranch> t = tree(p(1, "1", "1a", "1aa"));
            assertFalse(merge(t, p(1, "1", "1a", "1aa")).changed());
            List<EditBranch> forked = tree(p(1, "1", "1a"), p(1, "1", "1b"));
            for (EditBranch leafPath : forked) assertFalse(merge(forked, leafPath).changed());
        }

        @Test
        void longerPathExtendsOneSideOfAFork() {
            List<EditBranch> forked = tree(p(1, "1", "1a"), p(1, "1", "1b"));
            BranchUpdate u = merge(forked, p(1, "1", "1a", "1aa"));
            assertSameBranches(List.of(p(1, "1", "1a", "1aa"), p(1, "1", "1b")), u.branches());
            assertEquals(List.of(p(1, "1", "1a")), u.removed());
            assertEquals(List.of(p(1, "1", "1a", "1aa")), u.added());
        }

        @Test
        void stemmedPathsOfKnownRevisionsChangeNothing() {
            assertFalse(merge(tree(p(1, "1", "1a"), p(1, "1", "1b")), p(2, "1a")).changed());
            assertFalse(merge(tree(p(1, "1", "1a"), p(1, "1", "1b", "1bb")), p(3, "1bb")).changed());
            assertFalse(merge(tree(p(2, "1a"), p(2, "1b", "1bb")), p(3, "1bb")).changed());
            assertFalse(merge(tree(p(1, "1", "1a", "1aa")), p(3, "1aa")).changed());
            assertFalse(merge(tree(p(1, "1", "1a", "1aa")), p(2, "1a", "1aa")).changed());
            assertFalse(merge(tree(p(2, "1a", "1aa")), p(3, "1aa")).changed());
        }

        @Test
        void stemmedRevisionBelowALeafWithoutItsParentIsAConflict() {
            // The path does not say 1aa descends from 1a, so 1a stays a leaf.
            BranchUpdate u = merge(tree(p(1, "1", "1a")), p(3, "1aa"));
            assertSameBranches(List.of(p(1, "1", "1a"), p(3, "1aa")), u.branches());
            assertEquals(r(3, "1aa"), u.winner().leaf());
            assertEquals(List.of(r(2, "1a")), EditBranches.conflicts(u.branches()));
        }

        @Test
        void fullPathJoinsAStemmedLeafToItsAncestorsAndResolvesTheConflict() {
            // couch_key_tree reports new_leaf here; the known leaf 1aa gains its history.
            BranchUpdate u = merge(tree(p(1, "1", "1a"), p(3, "1aa")), p(1, "1", "1a", "1aa"));
            assertEquals(List.of(p(1, "1", "1a", "1aa")), u.branches());
            assertTrue(u.leafAlreadyKnown());
            assertTrue(u.changed());
            assertTrue(EditBranches.conflicts(u.branches()).isEmpty());
        }

        @Test
        void extendingOneSideOfAReplicatedConflictKeepsTheOther() {
            // COUCHDB-902: foo -> (foo2 | foo3), then foo -> foo3 -> foo4 arrives.
            BranchUpdate u = merge(tree(p(1, "foo", "foo2"), p(1, "foo", "foo3")), p(1, "foo", "foo3", "foo4"));
            assertSameBranches(List.of(p(1, "foo", "foo2"), p(1, "foo", "foo3", "foo4")), u.branches());
            assertEquals(r(3, "foo4"), u.winner().leaf());
            assertEquals(List.of(r(2, "foo2")), EditBranches.conflicts(u.branches()));
        }

        @Test
        void stemmingKeepsTheNewestRevisions() {
            EditBranch full = p(1, "1", "1a", "1aa");
            assertEquals(full, full.stem(3));
            assertEquals(p(3, "1aa"), full.stem(1));
            assertEquals(p(2, "1a", "1aa"), full.stem(2));
            assertEquals(List.of(p(3, "1aa")), EditBranches.merge(List.of(), full, 1).branches());
        }

        @Test
        void existingLeafKeepsItsDeletedFlag() {
            List<EditBranch> t = tree(dead(p(1, "a")));
            assertFalse(merge(t, p(1, "a")).changed());
            assertFalse(merge(tree(p(1, "a")), dead(p(1, "a"))).changed());
        }
    }

    @Nested
    class MissingRevisions {

        final List<EditBranch> forked = tree(p(1, "1", "1a"), p(1, "1", "1b"));

        @Test
        void knownRevisionsAreNotMissing() {
            assertEquals(List.of(), EditBranches.missing(forked, List.of(r(1, "1"), r(2, "1a"))));
        }

        @Test
        void unknownOrStemmedRevisionsAreMissingInAscendingOrder() {
            assertEquals(
                    List.of(r(1, "10"), r(101, "x")),
                    EditBranches.missing(forked, List.of(r(101, "x"), r(1, "1"), r(1, "10"), r(2, "1a"))));
            assertEquals(
                    List.of(r(1, "1"), r(101, "x")),
                    EditBranches.missing(tree(p(2, "1a", "1aa")), List.of(r(1, "1"), r(2, "1a"), r(101, "x"))));
            assertEquals(
                    List.of(r(1, "1"), r(2, "1a"), r(101, "x")),
                    EditBranches.missing(tree(p(3, "1aa")), List.of(r(1, "1"), r(2, "1a"), r(101, "x"))));
        }

        @Test
        void possibleAncestorsAreLeavesBelowTheHighestMissingPosition() {
            List<EditBranch> t = tree(p(1, "1", "1a", "1aa"), dead(p(1, "1", "1b")), p(1, "1", "1c"));
            assertEquals(List.of(), EditBranches.possibleAncestors(t, List.of()));
            assertEquals(List.of(r(2, "1c"), r(2, "1b")), EditBranches.possibleAncestors(t, List.of(r(3, "x"))));
            assertEquals(
                    List.of(r(3, "1aa"), r(2, "1c"), r(2, "1b")),
                    EditBranches.possibleAncestors(t, List.of(r(2, "y"), r(4, "x"))));
            assertEquals(List.of(), EditBranches.possibleAncestors(List.of(), List.of(r(4, "x"))));
        }
    }

    @Nested
    class StemmingAndPartialOverlap {

        @Test
        void branchHoldsAtMostRevsLimitEvenWhenASiblingKeepsOlderAncestors() {
            // CouchDB's tree would show d's history as d,c,b,a because e keeps a alive.
            List<EditBranch> t = EditBranches.merge(List.of(), p(1, "a", "b", "e"), 3).branches();
            t = EditBranches.merge(t, p(1, "a", "b", "c", "d"), 3).branches();
            assertSameBranches(List.of(p(1, "a", "b", "e"), p(2, "b", "c", "d")), t);
        }

        @Test
        void stemmedAwayRevisionsComeBackAsAConflict() {
            // As in CouchDB: once 1..3 are stemmed away, a resent 1-a..3-c is a separate branch.
            List<EditBranch> t = tree(p(4, "d", "e", "f"));
            BranchUpdate u = EditBranches.merge(t, p(1, "a", "b", "c"), 3);
            assertSameBranches(List.of(p(4, "d", "e", "f"), p(1, "a", "b", "c")), u.branches());
            assertEquals(List.of(r(3, "c")), EditBranches.conflicts(u.branches()));
        }

        @Test
        void pathOverlappingTheTopOfAStemmedBranchLinksUp() {
            // Known: 3-c <- 4-d. Incoming 1-a..4-d..5-x: x extends d, and c learns its parents.
            BranchUpdate u = merge(tree(p(3, "c", "d")), p(1, "a", "b", "c", "d", "x"));
            assertEquals(List.of(p(1, "a", "b", "c", "d", "x")), u.branches());
        }

        @Test
        void knownRevisionWithOlderHistoryLengthensTheBranch() {
            BranchUpdate u = merge(tree(p(3, "c", "d")), p(1, "a", "b", "c"));
            assertTrue(u.leafAlreadyKnown());
            assertEquals(List.of(p(1, "a", "b", "c", "d")), u.branches());
            assertEquals(List.of(p(3, "c", "d")), u.removed());
        }

        @Test
        void branchOffTheMiddleOfAStemmedWindow() {
            // Window 3-c..5-e, incoming 2-b..4-d..5-y: y is a sibling of e under d.
            BranchUpdate u = EditBranches.merge(tree(p(3, "c", "d", "e")), p(2, "b", "c", "d", "y"), 3);
            assertSameBranches(List.of(p(3, "c", "d", "e"), p(3, "c", "d", "y")), u.branches());
            assertEquals(List.of(p(3, "c", "d", "y")), u.added());
            assertTrue(u.removed().isEmpty());
        }

        @Test
        void pathThatDisagreesWithKnownHistoryKeepsTheKnownOne() {
            // 4-d's parent is 3-c; a path claiming 3-z cannot rewrite that, and 3-z is not kept.
            BranchUpdate u = merge(tree(p(2, "b", "c", "d")), p(3, "z", "d", "x"));
            assertEquals(List.of(p(2, "b", "c", "d", "x")), u.branches());
            assertFalse(EditBranches.contains(u.branches(), r(3, "z")));
        }

        @Test
        void mergeStemsEveryBranchToTheCurrentLimit() {
            List<EditBranch> t = tree(p(1, "a", "b", "c", "d", "e"));
            BranchUpdate u = EditBranches.merge(t, p(1, "x"), 3);
            assertSameBranches(List.of(p(3, "c", "d", "e"), p(1, "x")), u.branches());
            assertEquals(List.of(p(1, "a", "b", "c", "d", "e")), u.removed());
        }
    }

    @Nested
    class InteractiveEdits {

        final RevId x = r(1, "x");

        @Test
        void newDocumentStartsAtPositionOne() {
            EditPlan plan = EditBranches.planEdit(List.of(), null, false);
            assertNull(plan.parent());
            assertEquals(1, plan.newPos());
            BranchUpdate u = plan.apply(x, LIMIT);
            assertEquals(List.of(EditBranch.root(x, false)), u.branches());
            assertEquals(1, u.branchCount());
            assertThrows(IllegalArgumentException.class, () -> plan.apply(r(2, "y"), LIMIT));
        }

        @Test
        void deletionWithoutRevOnAMissingDocumentCreatesATombstone() {
            BranchUpdate u = EditBranches.planEdit(List.of(), null, true).apply(x, LIMIT);
            assertTrue(u.winner().deleted());
        }

        @Test
        void baseRevOnAMissingDocumentConflicts() {
            assertConflict(List.of(), r(1, "a"), false);
        }

        @Test
        void extendingALiveLeafReplacesItsBranch() {
            List<EditBranch> t = tree(p(1, "a", "b"), p(1, "a", "c"));
            EditPlan plan = EditBranches.planEdit(t, r(2, "b"), false);
            BranchUpdate u = plan.apply(r(3, "d"), LIMIT);
            assertEquals(List.of(p(1, "a", "b")), u.removed());
            assertEquals(List.of(p(1, "a", "b", "d")), u.added());
            assertEquals(2, u.branchCount());
            assertEquals(r(3, "d"), u.winner().leaf());
        }

        @Test
        void extendingALosingLeafIsAllowed() {
            List<EditBranch> t = tree(p(1, "a", "b"), p(1, "a", "c"));
            BranchUpdate u = EditBranches.planEdit(t, r(2, "b"), false).apply(r(3, "z"), LIMIT);
            assertEquals(r(3, "z"), u.winner().leaf());
        }

        @Test
        void staleOrUnknownBaseConflicts() {
            List<EditBranch> t = tree(p(1, "a", "b"));
            assertConflict(t, r(1, "a"), false); // inner revision
            assertConflict(t, r(2, "zz"), false); // unknown
            assertConflict(t, r(3, "b"), true);
        }

        @Test
        void deletedLeafAsBaseConflictsEvenWithALiveBranch() {
            // RFC C departs from CouchDB 2.3, which accepted this.
            List<EditBranch> t = tree(p(1, "a", "b"), dead(p(1, "a", "c")));
            assertConflict(t, r(2, "c"), false);
            assertConflict(t, r(2, "c"), true);
        }

        @Test
        void noBaseOnALiveDocumentConflicts() {
            assertConflict(tree(p(1, "a"), dead(p(1, "b"))), null, false);
            assertConflict(tree(p(1, "a")), null, true);
        }

        @Test
        void recreatingADeletedDocumentExtendsTheWinningTombstone() {
            List<EditBranch> t = tree(dead(p(1, "a", "b")), dead(p(1, "a", "c", "d")));
            EditPlan plan = EditBranches.planEdit(t, null, false);
            assertEquals(r(3, "d"), plan.parent());
            assertEquals(4, plan.newPos());
            BranchUpdate u = plan.apply(r(4, "e"), LIMIT);
            assertEquals(List.of(dead(p(1, "a", "c", "d"))), u.removed());
            assertEquals(p(1, "a", "c", "d", "e"), u.winner());
            assertEquals(List.of(r(2, "b")), EditBranches.deletedConflicts(u.branches()));
        }

        @Test
        void deletingADeletedDocumentWithoutRevConflicts() {
            assertConflict(tree(dead(p(1, "a"))), null, true);
        }

        @Test
        void deletingTheWinnerPromotesTheRunnerUp() {
            List<EditBranch> t = tree(p(1, "a", "b"), p(1, "a", "c"));
            BranchUpdate u = EditBranches.planEdit(t, r(2, "c"), true).apply(r(3, "d"), LIMIT);
            assertEquals(p(1, "a", "b"), u.winner());
            assertEquals(List.of(r(3, "d")), EditBranches.deletedConflicts(u.branches()));
        }

        @Test
        void newRevisionIsStemmedToTheLimit() {
            BranchUpdate u = EditBranches.planEdit(tree(p(1, "a", "b", "c")), r(3, "c"), false).apply(r(4, "d"), 3);
            assertEquals(List.of(p(2, "b", "c", "d")), u.added());
        }

        @Test
        void newRevisionAlreadyInTheBranchesConflicts() {
            List<EditBranch> t = tree(p(1, "a", "b"), p(3, "c"));
            EditPlan plan = EditBranches.planEdit(t, r(2, "b"), false);
            assertThrows(StorageException.class, () -> plan.apply(r(3, "c"), LIMIT));
        }

        void assertConflict(List<EditBranch> t, RevId base, boolean deleted) {
            StorageException e = assertThrows(StorageException.class, () -> EditBranches.planEdit(t, base, deleted));
            assertEquals(StorageException.Kind.CONFLICT, e.kind());
        }
    }

    @Nested
    class Views {

        @Test
        void winnerPrefersLiveThenPositionThenHash() {
            assertEquals(r(1, "a"), EditBranches.winner(tree(p(1, "a"), dead(p(5, "z")))).leaf());
            assertEquals(r(3, "a"), EditBranches.winner(tree(p(2, "z"), p(3, "a"))).leaf());
            assertEquals(r(10, "a"), EditBranches.winner(tree(p(9, "z"), p(10, "a"))).leaf());
            assertEquals(r(2, "b"), EditBranches.winner(tree(p(2, "a"), p(2, "b"))).leaf());
            assertEquals(r(4, "a"), EditBranches.winner(tree(dead(p(4, "a")), dead(p(3, "z")))).leaf());
            assertNull(EditBranches.winner(List.of()));
            // Winner sorts last in RFC C key order.
            List<EditBranch> t = tree(p(1, "a"), dead(p(5, "z")), p(2, "b"));
            assertEquals(EditBranches.winner(t), t.getLast());
        }

        @Test
        void conflictListsFollowCouchDbOrder() {
            List<EditBranch> t = tree(p(3, "a"), p(2, "z"), p(3, "b"), dead(p(4, "x")), dead(p(1, "y")));
            assertEquals(r(3, "b"), EditBranches.winner(t).leaf());
            assertEquals(List.of(r(3, "a"), r(2, "z")), EditBranches.conflicts(t));
            assertEquals(List.of(r(4, "x"), r(1, "y")), EditBranches.deletedConflicts(t));
            assertEquals(
                    List.of(r(3, "b"), r(3, "a"), r(2, "z"), r(4, "x"), r(1, "y")),
                    EditBranches.leaves(t).stream().map(EditBranch::leaf).toList());
            List<EditBranch> allDead = tree(dead(p(3, "a")), dead(p(2, "z")));
            assertEquals(List.of(), EditBranches.conflicts(allDead));
            assertEquals(List.of(r(2, "z")), EditBranches.deletedConflicts(allDead));
        }

        @Test
        void revsInfoAndRevisionsOfTheWinner() {
            EditBranch w = p(2, "b", "c", "d");
            assertEquals(new Revisions(4, List.of("d", "c", "b")), w.revisions());
            assertEquals(
                    List.of(
                            new RevInfo(r(4, "d"), RevInfo.Status.AVAILABLE),
                            new RevInfo(r(3, "c"), RevInfo.Status.MISSING),
                            new RevInfo(r(2, "b"), RevInfo.Status.MISSING)),
                    EditBranches.revsInfo(w));
            assertEquals(RevInfo.Status.DELETED, EditBranches.revsInfo(dead(w)).getFirst().status());
            assertEquals("deleted", RevInfo.Status.DELETED.json());
        }

        @Test
        void historyOfAnyKnownRevisionTakesTheLongestBranch() {
            List<EditBranch> t = tree(p(2, "b", "c", "d"), p(1, "a", "b", "c", "e"));
            assertEquals(new Revisions(3, List.of("c", "b", "a")), EditBranches.history(t, r(3, "c")));
            assertEquals(new Revisions(4, List.of("d", "c", "b")), EditBranches.history(t, r(4, "d")));
            assertNull(EditBranches.history(t, r(3, "q")));
        }
    }

    @Nested
    class Branches {

        @Test
        void fromRevisionsReadsCouchDbsRevisionsObject() {
            EditBranch b = EditBranch.fromRevisions(3, List.of("c", "b", "a"), true);
            assertEquals(r(3, "c"), b.leaf());
            assertTrue(b.deleted());
            assertEquals(List.of(r(3, "c"), r(2, "b"), r(1, "a")), b.revs());
            assertEquals(new Revisions(3, List.of("c", "b", "a")), b.revisions());
            assertEquals(1, b.startPos());
            assertEquals(r(2, "b"), b.parent());
            assertTrue(b.contains(r(1, "a")));
            assertTrue(b.hasAncestor(r(2, "b")));
            assertFalse(b.hasAncestor(r(3, "c")));
            assertFalse(b.contains(r(2, "a")));
            assertFalse(b.contains(r(4, "c")));
        }

        @Test
        void badRevisionsObjectsAreBadRequests() {
            for (Runnable bad : List.<Runnable>of(
                    () -> EditBranch.fromRevisions(2, List.of("c", "b", "a"), false),
                    () -> EditBranch.fromRevisions(0, List.of("a"), false),
                    () -> EditBranch.fromRevisions(3, List.of(), false),
                    () -> EditBranch.fromRevisions(3, Arrays.asList("c", null), false))) { // "" is an id: CouchDB's "1-"
                StorageException e = assertThrows(StorageException.class, bad::run);
                assertEquals(StorageException.Kind.BAD_REQUEST, e.kind());
            }
        }

        @Test
        void constructorRejectsImpossibleBranches() {
            assertThrows(IllegalArgumentException.class, () -> EditBranch.of(r(1, "a"), false, "b"));
            assertThrows(IllegalArgumentException.class, () -> p(1, "a").extend(r(3, "c"), false, LIMIT));
            assertThrows(IllegalArgumentException.class, () -> p(1, "a").stem(0));
            assertThrows(IllegalArgumentException.class, () -> p(1, "a").stem(EditBranches.MAX_REVS_LIMIT + 1));
        }
    }
}

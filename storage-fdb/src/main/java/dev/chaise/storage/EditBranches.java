package dev.chaise.storage;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A document's revision tree held as RFC C edit branches: one {@link EditBranch} per leaf.
 * Everything here is pure; the store reads and writes the KVs.
 *
 * <h2>Model</h2>
 * The revisions named by the branches form a forest: a node is a {@link RevId}; a parent link
 * exists where some branch lists the two consecutively. This is what couch_key_tree's tree holds
 * for consistent histories (every revision has one true parent). A branch keeps at most
 * {@code revsLimit} revisions (leaf included), as RFC C stores one bounded list per branch.
 */
final class EditBranches {

    public static final int DEFAULT_REVS_LIMIT = 1000;
    /** RFC C: keeps a branch's ancestor list within one FoundationDB value. */
    public static final int MAX_REVS_LIMIT = 4000;

    private EditBranches() {}

    public static void checkRevsLimit(int revsLimit) {
        if (revsLimit < 1 || revsLimit > MAX_REVS_LIMIT) {
            throw new IllegalArgumentException("revsLimit must be in [1, " + MAX_REVS_LIMIT + "], was " + revsLimit);
        }
    }

    /** The branches in {@link EditBranch#KEY_ORDER}, the order of their KVs; winner last. */
    public static List<EditBranch> sorted(Collection<EditBranch> branches) {
        List<EditBranch> out = new ArrayList<>(branches);
        out.sort(EditBranch.KEY_ORDER);
        return out;
    }

    /** CouchDB's winner: live beats deleted, then higher pos, then higher hash. Null if none. */
    public static EditBranch winner(Collection<EditBranch> branches) {
        EditBranch best = null;
        for (EditBranch b : branches) {
            if (best == null || EditBranch.KEY_ORDER.compare(b, best) > 0) best = b;
        }
        return best;
    }

    public static int branchCount(Collection<EditBranch> branches) {
        return branches.size();
    }

    /** All leaves, winner first then descending as CouchDB lists them ({@code open_revs=all}). */
    public static List<EditBranch> leaves(Collection<EditBranch> branches) {
        return sorted(branches).reversed();
    }

    /** {@code _conflicts}: live leaves other than the winner, in CouchDB's order. */
    public static List<RevId> conflicts(Collection<EditBranch> branches) {
        return nonWinningLeaves(branches, false);
    }

    /** {@code _deleted_conflicts}: deleted leaves other than the winner, in CouchDB's order. */
    public static List<RevId> deletedConflicts(Collection<EditBranch> branches) {
        return nonWinningLeaves(branches, true);
    }

    private static List<RevId> nonWinningLeaves(Collection<EditBranch> branches, boolean deleted) {
        List<EditBranch> leaves = leaves(branches);
        List<RevId> out = new ArrayList<>();
        for (int i = 1; i < leaves.size(); i++) {
            if (leaves.get(i).deleted() == deleted) out.add(leaves.get(i).leaf());
        }
        return out;
    }

    /** The branch whose leaf is {@code leaf}, or null. */
    public static EditBranch findLeaf(Collection<EditBranch> branches, RevId leaf) {
        for (EditBranch b : branches) {
            if (b.leaf().equals(leaf)) return b;
        }
        return null;
    }

    /** Whether {@code rev} is any known revision (leaf or ancestor). */
    public static boolean contains(Collection<EditBranch> branches, RevId rev) {
        for (EditBranch b : branches) {
            if (b.contains(rev)) return true;
        }
        return false;
    }

    /** The longest known history of any known revision ({@code revs=true} on a given rev), or null. */
    public static Revisions history(Collection<EditBranch> branches, RevId rev) {
        Revisions best = null;
        for (EditBranch b : branches) {
            int i = b.indexOf(rev);
            if (i < 0) continue;
            List<String> ids = b.revisions().ids().subList(i, b.length());
            if (best == null || ids.size() > best.ids().size()) best = new Revisions(rev.pos(), ids);
        }
        return best;
    }

    /**
     * {@code _revs_info} for a branch: the leaf is available or deleted; ancestors are missing,
     * as only leaves keep a body in RFC A/C storage (the store may know better).
     */
    public static List<RevInfo> revsInfo(EditBranch branch) {
        List<RevInfo> out = new ArrayList<>(branch.length());
        out.add(new RevInfo(branch.leaf(), branch.deleted() ? RevInfo.Status.DELETED : RevInfo.Status.AVAILABLE));
        for (int i = 1; i < branch.length(); i++) out.add(new RevInfo(branch.revAt(i), RevInfo.Status.MISSING));
        return out;
    }

    /** {@code _revs_diff} "missing": the distinct unknown revs, ascending. */
    public static List<RevId> missing(Collection<EditBranch> branches, Collection<RevId> revs) {
        TreeSet<RevId> out = new TreeSet<>();
        for (RevId r : revs) {
            if (!contains(branches, r)) out.add(r);
        }
        return new ArrayList<>(out);
    }

    /**
     * {@code _revs_diff} "possible_ancestors": as CouchDB, every leaf (deleted ones too) whose
     * position is below the highest missing position, winner-first order.
     */
    public static List<RevId> possibleAncestors(Collection<EditBranch> branches, Collection<RevId> missing) {
        if (missing.isEmpty()) return List.of();
        long max = 0;
        for (RevId r : missing) max = Math.max(max, r.pos());
        List<RevId> out = new ArrayList<>();
        for (EditBranch b : leaves(branches)) {
            if (b.leaf().pos() < max) out.add(b.leaf());
        }
        return out;
    }

    /**
     * Checks an interactive edit ({@code new_edits=true}) and says what it extends. Throws
     * {@link StorageException#conflict()} when CouchDB (with RFC C's rule on deleted leaves) would:
     * <ul>
     *   <li>with a base rev: it must be a live leaf; an inner revision, a deleted leaf (even if
     *       another branch is live) or an unknown rev (also on a missing document) conflicts;
     *   <li>without: fine on a missing document (new root at pos 1); on a document whose every
     *       branch is deleted a live edit extends the winning deleted leaf, a deletion conflicts;
     *       any live branch conflicts.
     * </ul>
     * {@code branches} may be the subset the store read: the branch of the base rev when it is a
     * live leaf, the winner, and (when the base is the winner) the runner-up. The plan's update
     * then holds that subset, which is enough to get the new winner right.
     */
    public static EditPlan planEdit(Collection<EditBranch> branches, RevId baseRev, boolean deleted) {
        List<EditBranch> list = List.copyOf(branches);
        if (baseRev == null) {
            EditBranch w = winner(list);
            if (w == null) return new EditPlan(list, null, null, deleted);
            if (!w.deleted() || deleted) throw StorageException.conflict();
            return new EditPlan(list, w.leaf(), w, false);
        }
        EditBranch base = null;
        for (EditBranch b : list) {
            if (b.leaf().equals(baseRev) && !b.deleted()) base = b;
        }
        if (base == null) throw StorageException.conflict();
        return new EditPlan(list, baseRev, base, deleted);
    }

    /**
     * Merges a path ({@code new_edits=false}: a leaf, its deleted flag and ancestors as sent in
     * {@code _revisions}) and stems every branch to {@code revsLimit} revisions.
     *
     * <p>Semantics, as couch_key_tree for consistent histories:
     * <ul>
     *   <li>a new leaf extending a leaf replaces that leaf's branch; one branching off an
     *       ancestor adds a branch (a conflict); one sharing no revision adds a separate root;
     *   <li>a known leaf (leaf or ancestor) adds no branch, but ancestors it brings are learned:
     *       a branch whose oldest known revision gains a parent gets a longer history, and a leaf
     *       that turns out to be an ancestor of another leaf stops being a leaf;
     *   <li>an existing leaf keeps its deleted flag;
     *   <li>if the path gives a revision a different parent than the one already known (only
     *       possible with a hash collision or a lying client) the known history wins and the
     *       rest of the path is ignored.
     * </ul>
     * Then every branch keeps its newest {@code revsLimit} revisions. Unlike couch_key_tree, which
     * keeps links between retained nodes, a branch never holds more than {@code revsLimit}.
     */
    public static BranchUpdate merge(Collection<EditBranch> branches, EditBranch incoming, int revsLimit) {
        checkRevsLimit(revsLimit);
        List<EditBranch> old = sorted(branches);
        Forest f = new Forest();
        for (EditBranch b : old) f.addChain(b.revs());
        boolean known = f.nodes.contains(incoming.leaf());
        f.addChain(incoming.revs());

        // Leaves and their flags: existing leaves first (an existing leaf keeps its flag).
        Map<RevId, Boolean> leaves = new LinkedHashMap<>();
        for (EditBranch b : old) {
            if (!f.hasChild.contains(b.leaf())) leaves.putIfAbsent(b.leaf(), b.deleted());
        }
        if (!known) leaves.put(incoming.leaf(), incoming.deleted());

        List<EditBranch> after = new ArrayList<>(leaves.size());
        for (Map.Entry<RevId, Boolean> e : leaves.entrySet()) {
            List<String> anc = new ArrayList<>();
            RevId cur = e.getKey();
            RevId p;
            while (anc.size() < revsLimit - 1 && (p = f.parent.get(cur)) != null) {
                anc.add(p.hash());
                cur = p;
            }
            after.add(new EditBranch(e.getKey(), e.getValue(), anc));
        }
        after.sort(EditBranch.KEY_ORDER);

        Set<EditBranch> oldSet = new HashSet<>(old);
        Set<EditBranch> newSet = new HashSet<>(after);
        List<EditBranch> removed = new ArrayList<>();
        for (EditBranch b : old) {
            if (!newSet.contains(b)) removed.add(b);
        }
        List<EditBranch> added = new ArrayList<>();
        for (EditBranch b : after) {
            if (!oldSet.contains(b)) added.add(b);
        }
        return new BranchUpdate(after, removed, added, known);
    }

    /** The union of known parent links. */
    private static final class Forest {
        final Set<RevId> nodes = new LinkedHashSet<>();
        final Map<RevId, RevId> parent = new HashMap<>();
        final Set<RevId> hasChild = new HashSet<>();

        /** Adds a chain, leaf first; stops where it contradicts a known parent. */
        void addChain(List<RevId> chain) {
            for (int i = 0; i < chain.size(); i++) {
                RevId node = chain.get(i);
                nodes.add(node);
                if (i + 1 == chain.size()) return;
                RevId p = chain.get(i + 1);
                RevId known = parent.putIfAbsent(node, p);
                if (known != null && !known.equals(p)) return;
                hasChild.add(p);
            }
        }
    }
}

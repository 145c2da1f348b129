package dev.chaise.storage;

import java.util.List;

/**
 * The outcome of an edit on a set of edit branches.
 *
 * @param branches the branches after the edit, in {@link EditBranch#KEY_ORDER} (winner last)
 * @param removed branches whose KV must be cleared (a rewritten branch appears in both lists)
 * @param added branches whose KV must be written
 * @param leafAlreadyKnown the incoming leaf was already a revision of the document (leaf or
 *     ancestor); only meaningful for {@link EditBranches#merge}
 */
record BranchUpdate(
        List<EditBranch> branches, List<EditBranch> removed, List<EditBranch> added, boolean leafAlreadyKnown) {

    public BranchUpdate {
        branches = List.copyOf(branches);
        removed = List.copyOf(removed);
        added = List.copyOf(added);
    }

    /** Whether any KV must be written; false means the edit is a no-op. */
    public boolean changed() {
        return !removed.isEmpty() || !added.isEmpty();
    }

    /** The winning branch after the edit, or null if there are no branches. */
    public EditBranch winner() {
        return branches.isEmpty() ? null : branches.getLast();
    }

    /** RFC C/D BranchCount after the edit. */
    public int branchCount() {
        return branches.size();
    }
}

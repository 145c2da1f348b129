package dev.chaise.storage;

import java.util.ArrayList;
import java.util.List;

/**
 * An accepted interactive edit whose new revision id is not computed yet: the caller hashes the
 * edit against {@link #parent()} (see {@link RevHasher}) and then calls {@link #apply}.
 *
 * @param branches the branches the plan was made from
 * @param parent the revision the new one extends, or null for a brand-new document
 * @param replaced the branch whose leaf is {@code parent} (it stops being a leaf), or null
 * @param deleted whether the new revision is a deletion
 */
record EditPlan(List<EditBranch> branches, RevId parent, EditBranch replaced, boolean deleted) {

    public EditPlan {
        branches = List.copyOf(branches);
    }

    public long newPos() {
        return parent == null ? 1 : parent.pos() + 1;
    }

    /** The edit with its new revision; only the new branch is stemmed, as RFC C writes just it. */
    public BranchUpdate apply(RevId newRev, int revsLimit) {
        EditBranches.checkRevsLimit(revsLimit);
        if (newRev.pos() != newPos()) {
            throw new IllegalArgumentException("new revision " + newRev + " must be at position " + newPos());
        }
        for (EditBranch b : branches) {
            // Only possible if the same edit was replicated in and its path stemmed away; refuse
            // rather than store one revision twice.
            if (b.contains(newRev)) throw StorageException.conflict();
        }
        EditBranch added = replaced == null
                ? EditBranch.root(newRev, deleted)
                : replaced.extend(newRev, deleted, revsLimit);
        List<EditBranch> after = new ArrayList<>(branches);
        if (replaced != null) after.remove(replaced);
        after.add(added);
        return new BranchUpdate(
                EditBranches.sorted(after), replaced == null ? List.of() : List.of(replaced), List.of(added), false);
    }
}

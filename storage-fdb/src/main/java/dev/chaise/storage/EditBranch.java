package dev.chaise.storage;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * One edit branch as RFC C stores it: a leaf, its deleted flag, and the hashes of its known
 * ancestors, parent first. Ancestor {@code i} (0-based) sits at position {@code leaf.pos - 1 - i};
 * the list may have been stemmed, so the oldest known revision need not be at position 1.
 *
 * <p>The same record also carries an incoming path ({@code new_edits=false}, {@code _revisions}).
 */
public record EditBranch(RevId leaf, boolean deleted, List<String> ancestors) {

    /**
     * RFC C's key order (NotDeleted, RevPos, RevHash): the winning branch sorts last. This is
     * CouchDB's winner rule: live beats deleted, then higher position, then higher hash bytes.
     */
    public static final Comparator<EditBranch> KEY_ORDER =
            Comparator.comparing((EditBranch b) -> !b.deleted).thenComparing(EditBranch::leaf);

    public EditBranch {
        if (leaf == null) throw new IllegalArgumentException("leaf is required");
        ancestors = List.copyOf(ancestors);
        if (ancestors.size() > leaf.pos() - 1) {
            throw new IllegalArgumentException(
                    "leaf " + leaf + " cannot have " + ancestors.size() + " ancestors");
        }
        for (String h : ancestors) {
            if (!RevId.isValidHash(h)) throw new IllegalArgumentException("invalid rev hash: " + h);
        }
    }

    public static EditBranch of(RevId leaf, boolean deleted, String... ancestors) {
        return new EditBranch(leaf, deleted, Arrays.asList(ancestors));
    }

    /** A single revision with no known history. */
    public static EditBranch root(RevId leaf, boolean deleted) {
        return new EditBranch(leaf, deleted, List.of());
    }

    /**
     * The path a client sends as {@code _revisions: {start, ids}} (ids newest first). Malformed
     * input is a BAD_REQUEST, as CouchDB rejects it.
     */
    public static EditBranch fromRevisions(long start, List<String> ids, boolean deleted) {
        if (ids == null || ids.isEmpty() || start < 1) throw StorageException.badRequest(RevId.INVALID);
        if (ids.size() > start) {
            throw StorageException.badRequest("_revisions.start is lower than the number of ids");
        }
        List<String> hashes = new ArrayList<>(ids.size());
        for (String id : ids) hashes.add(RevId.parseHash(id));
        return new EditBranch(new RevId(start, hashes.getFirst()), deleted, hashes.subList(1, hashes.size()));
    }

    /** Number of revisions on this branch, leaf included. */
    public int length() {
        return 1 + ancestors.size();
    }

    /** Position of the oldest revision this branch knows. */
    public long startPos() {
        return leaf.pos() - ancestors.size();
    }

    /** Revision {@code i} counting from the leaf (0 = leaf, 1 = parent, …). */
    public RevId revAt(int i) {
        if (i == 0) return leaf;
        return new RevId(leaf.pos() - i, ancestors.get(i - 1));
    }

    /** The parent revision, or null if none is known. */
    public RevId parent() {
        return ancestors.isEmpty() ? null : revAt(1);
    }

    /** All revisions, leaf first. */
    public List<RevId> revs() {
        List<RevId> out = new ArrayList<>(length());
        for (int i = 0; i < length(); i++) out.add(revAt(i));
        return out;
    }

    /** The {@code _revisions} value of the leaf (all known revisions, newest first). */
    public Revisions revisions() {
        List<String> ids = new ArrayList<>(length());
        ids.add(leaf.hash());
        ids.addAll(ancestors);
        return new Revisions(leaf.pos(), ids);
    }

    /** Index of {@code rev} counting from the leaf, or -1. */
    public int indexOf(RevId rev) {
        long i = leaf.pos() - rev.pos();
        if (i < 0 || i >= length()) return -1;
        String h = i == 0 ? leaf.hash() : ancestors.get((int) i - 1);
        return h.equals(rev.hash()) ? (int) i : -1;
    }

    public boolean contains(RevId rev) {
        return indexOf(rev) >= 0;
    }

    public boolean hasAncestor(RevId rev) {
        return indexOf(rev) > 0;
    }

    /** Keeps the newest {@code revsLimit} revisions. */
    public EditBranch stem(int revsLimit) {
        EditBranches.checkRevsLimit(revsLimit);
        if (length() <= revsLimit) return this;
        return new EditBranch(leaf, deleted, ancestors.subList(0, revsLimit - 1));
    }

    /** This branch with a new child leaf on top, stemmed to {@code revsLimit}. */
    public EditBranch extend(RevId child, boolean childDeleted, int revsLimit) {
        if (child.pos() != leaf.pos() + 1) {
            throw new IllegalArgumentException(child + " cannot be a child of " + leaf);
        }
        List<String> anc = new ArrayList<>(length());
        anc.add(leaf.hash());
        anc.addAll(ancestors);
        return new EditBranch(child, childDeleted, anc).stem(revsLimit);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(leaf.toString());
        if (deleted) sb.append("(deleted)");
        if (!ancestors.isEmpty()) sb.append(" <- ").append(String.join(" <- ", ancestors));
        return sb.toString();
    }
}

package dev.chaise.storage;


import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Reference model of a document's revision tree for tests: plain nodes with parent and child
 * links, several roots allowed, a deleted flag on each revision, and stemming by distance to the
 * nearest leaf. Deliberately built unlike {@link EditBranches} (no branch lists) so the two check
 * each other; the store's model-based tests reuse it.
 *
 * <p>Semantics it pins down (see {@link EditBranches#merge} for the rationale):
 * <ul>
 *   <li>a revision is a node, identified by its {@link RevId}; a leaf is a node without children;
 *   <li>merging a path adds its nodes and parent links; where the path gives a node another
 *       parent than the known one, the known one stays and the rest of the path is dropped;
 *       a leaf's deleted flag is the one it was created with;
 *   <li>stemming with limit L: a node stays while some leaf is fewer than L steps below it; its
 *       parent link stays while some leaf is fewer than L-1 steps below it, i.e. while the
 *       link lies within the newest L revisions of some leaf's history;
 *   <li>a leaf's history is its newest L revisions (CouchDB's tree may show more when a sibling
 *       keeps shared ancestors alive; RFC C's bounded per-branch lists cannot);
 *   <li>interactive updates follow CouchDB with RFC C's rule: the base must be a live leaf; with
 *       no base the document must have no live leaf, and then a live revision extends the
 *       winning deleted leaf (a deletion conflicts); a brand-new document starts at pos 1.
 * </ul>
 */
public final class RevTreeModel {

    private static final class Node {
        final RevId rev;
        final boolean deleted;
        Node parent;
        final Map<RevId, Node> children = new LinkedHashMap<>();

        Node(RevId rev, boolean deleted) {
            this.rev = rev;
            this.deleted = deleted;
        }

        boolean isLeaf() {
            return children.isEmpty();
        }
    }

    /** A leaf as the model reports it. */
    public record Leaf(RevId rev, boolean deleted) {}

    private static final Comparator<Leaf> WINNER_ORDER =
            Comparator.comparing((Leaf l) -> !l.deleted()).thenComparing(Leaf::rev);

    private final Map<RevId, Node> nodes = new HashMap<>();
    private final int revsLimit;

    public RevTreeModel(int revsLimit) {
        if (revsLimit < 1) throw new IllegalArgumentException("revsLimit must be >= 1");
        this.revsLimit = revsLimit;
    }

    public int revsLimit() {
        return revsLimit;
    }

    public RevTreeModel copy() {
        RevTreeModel m = new RevTreeModel(revsLimit);
        for (Node n : nodes.values()) m.nodes.put(n.rev, new Node(n.rev, n.deleted));
        for (Node n : nodes.values()) {
            if (n.parent != null) m.link(m.nodes.get(n.rev), m.nodes.get(n.parent.rev));
        }
        return m;
    }

    /**
     * Interactive edit; returns the position the new revision must have (for callers that need
     * it before hashing). Throws CONFLICT like the real thing.
     */
    public long positionFor(RevId baseRev, boolean deleted) {
        Node parent = parentFor(baseRev, deleted);
        return parent == null ? 1 : parent.rev.pos() + 1;
    }

    /** Interactive edit of {@code baseRev} (null: none) creating {@code newRev}. */
    public void update(RevId baseRev, boolean deleted, RevId newRev) {
        Node parent = parentFor(baseRev, deleted);
        long pos = parent == null ? 1 : parent.rev.pos() + 1;
        if (newRev.pos() != pos) throw new IllegalArgumentException(newRev + " must be at pos " + pos);
        if (nodes.containsKey(newRev)) throw StorageException.conflict();
        Node n = new Node(newRev, deleted);
        nodes.put(newRev, n);
        if (parent != null) link(n, parent);
        stem();
    }

    private Node parentFor(RevId baseRev, boolean deleted) {
        if (baseRev == null) {
            Leaf w = winnerLeaf();
            if (w == null) return null;
            if (!w.deleted() || deleted) throw StorageException.conflict();
            return nodes.get(w.rev());
        }
        Node base = nodes.get(baseRev);
        if (base == null || !base.isLeaf() || base.deleted) throw StorageException.conflict();
        return base;
    }

    /** Replicated edit ({@code new_edits=false}): {@code path} is leaf first, positions consecutive. */
    public void mergePath(List<RevId> path, boolean deleted) {
        for (int i = 1; i < path.size(); i++) {
            if (path.get(i).pos() != path.get(i - 1).pos() - 1) throw new IllegalArgumentException("gap in " + path);
        }
        Node child = null;
        for (int i = 0; i < path.size(); i++) {
            RevId r = path.get(i);
            // The known history wins over a contradicting path.
            if (child != null && child.parent != null && !child.parent.rev.equals(r)) break;
            Node n = nodes.get(r);
            if (n == null) {
                n = new Node(r, i == 0 && deleted);
                nodes.put(r, n);
            }
            if (child != null && child.parent == null) link(child, n);
            child = n;
        }
        stem();
    }

    /**
     * CouchDB's purge ({@code couch_key_tree:remove_leafs}): the named leaves go, and with them
     * every revision no remaining leaf descends from; revisions named that are not leaves are
     * ignored. Returns the leaves removed, in revision order.
     */
    public List<RevId> purge(java.util.Collection<RevId> revs) {
        TreeSet<RevId> removed = new TreeSet<>();
        for (RevId r : revs) {
            Node n = nodes.get(r);
            if (n != null && n.isLeaf()) removed.add(r);
        }
        if (removed.isEmpty()) return List.of();
        Set<Node> keep = new java.util.HashSet<>();
        for (Node n : nodes.values()) {
            if (!n.isLeaf() || removed.contains(n.rev)) continue;
            for (Node a = n; a != null && keep.add(a); a = a.parent) { }
        }
        for (Node n : new ArrayList<>(nodes.values())) {
            if (keep.contains(n)) continue;
            nodes.remove(n.rev);
            unlinkParent(n);
        }
        stem();
        return new ArrayList<>(removed);
    }

    private void link(Node child, Node parent) {
        child.parent = parent;
        parent.children.put(child.rev, child);
    }

    private void stem() {
        Map<Node, Integer> dist = new HashMap<>();
        for (Node n : nodes.values()) {
            if (!n.isLeaf()) continue;
            int d = 0;
            for (Node a = n; a != null; a = a.parent, d++) {
                Integer known = dist.get(a);
                if (known != null && known <= d) break;
                dist.put(a, d);
            }
        }
        for (Node n : new ArrayList<>(nodes.values())) {
            int d = dist.get(n);
            if (d >= revsLimit) {
                nodes.remove(n.rev);
                unlinkParent(n);
                for (Node c : new ArrayList<>(n.children.values())) unlinkParent(c);
            } else if (d == revsLimit - 1) {
                unlinkParent(n);
            }
        }
    }

    private static void unlinkParent(Node n) {
        if (n.parent != null) {
            n.parent.children.remove(n.rev);
            n.parent = null;
        }
    }

    // ---- queries ----

    public boolean isEmpty() {
        return nodes.isEmpty();
    }

    public boolean contains(RevId rev) {
        return nodes.containsKey(rev);
    }

    public Set<RevId> allRevs() {
        return new TreeSet<>(nodes.keySet());
    }

    /** All leaves, winner first, then in CouchDB's descending order. */
    public List<Leaf> leaves() {
        List<Leaf> out = new ArrayList<>();
        for (Node n : nodes.values()) {
            if (n.isLeaf()) out.add(new Leaf(n.rev, n.deleted));
        }
        out.sort(WINNER_ORDER.reversed());
        return out;
    }

    private Leaf winnerLeaf() {
        List<Leaf> l = leaves();
        return l.isEmpty() ? null : l.getFirst();
    }

    public RevId winner() {
        Leaf w = winnerLeaf();
        return w == null ? null : w.rev();
    }

    public boolean winnerDeleted() {
        Leaf w = winnerLeaf();
        return w != null && w.deleted();
    }

    public List<RevId> conflicts() {
        return others(false);
    }

    public List<RevId> deletedConflicts() {
        return others(true);
    }

    private List<RevId> others(boolean deleted) {
        List<Leaf> l = leaves();
        List<RevId> out = new ArrayList<>();
        for (int i = 1; i < l.size(); i++) {
            if (l.get(i).deleted() == deleted) out.add(l.get(i).rev());
        }
        return out;
    }

    /**
     * A revision and its known ancestors, newest first, as far as the newest {@code revsLimit}
     * revisions of the nearest leaf below it reach (for a leaf: its newest {@code revsLimit}).
     * Empty if unknown.
     */
    public List<RevId> revsOf(RevId rev) {
        Node start = nodes.get(rev);
        List<RevId> out = new ArrayList<>();
        if (start == null) return out;
        int max = revsLimit - distanceToLeaf(start);
        for (Node n = start; n != null && out.size() < max; n = n.parent) out.add(n.rev);
        return out;
    }

    private static int distanceToLeaf(Node n) {
        int best = Integer.MAX_VALUE;
        for (Node c : n.children.values()) best = Math.min(best, 1 + distanceToLeaf(c));
        return n.isLeaf() ? 0 : best;
    }

    public List<RevId> revsOfWinner() {
        RevId w = winner();
        return w == null ? List.of() : revsOf(w);
    }

    public List<RevId> missing(List<RevId> revs) {
        TreeSet<RevId> out = new TreeSet<>();
        for (RevId r : revs) {
            if (!nodes.containsKey(r)) out.add(r);
        }
        return new ArrayList<>(out);
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("RevTreeModel(limit=" + revsLimit + ")");
        for (Leaf l : leaves()) sb.append("\n  ").append(l.deleted() ? "x " : "  ").append(revsOf(l.rev()));
        return sb.toString();
    }
}

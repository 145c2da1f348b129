package dev.chaise.storage;



import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;

/**
 * Random histories run against {@link EditBranches} and {@link RevTreeModel} side by side; after
 * every step both must describe the same document. Revisions come from one consistent "universe"
 * (every revision has one true parent), as real replicas produce.
 */
class EditBranchesPropertyTest {

    /** One step; the ints pick among the options the current state offers. */
    record Op(int kind, int a, int b, int c) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Integer> kind = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(5, Arbitraries.just(0)), // edit a live leaf
                net.jqwik.api.Tuple.of(2, Arbitraries.just(1)), // delete a live leaf
                net.jqwik.api.Tuple.of(2, Arbitraries.just(2)), // create without base rev
                net.jqwik.api.Tuple.of(2, Arbitraries.just(3)), // stale base rev
                net.jqwik.api.Tuple.of(4, Arbitraries.just(4)), // remote edit replicated in
                net.jqwik.api.Tuple.of(3, Arbitraries.just(5)), // re-send a known history
                net.jqwik.api.Tuple.of(1, Arbitraries.just(6)), // unrelated stemmed root
                net.jqwik.api.Tuple.of(1, Arbitraries.just(7))); // a path that lies about a parent
        Arbitrary<Integer> n = Arbitraries.integers().between(0, 999);
        return Combinators.combine(kind, n, n, n).as(Op::new).list().ofMinSize(1).ofMaxSize(50);
    }

    @Property(tries = 600)
    void smallRevsLimits(@ForAll @IntRange(min = 1, max = 5) int revsLimit, @ForAll("ops") List<Op> ops) {
        run(revsLimit, ops);
    }

    @Property(tries = 150)
    void defaultRevsLimit(@ForAll("ops") List<Op> ops) {
        run(EditBranches.DEFAULT_REVS_LIMIT, ops);
    }

    private void run(int revsLimit, List<Op> ops) {
        Sim sim = new Sim(revsLimit);
        for (Op op : ops) {
            sim.step(op);
            sim.check();
        }
        Statistics.label("branches").collect(Math.min(sim.impl.size(), 4));
        Statistics.label("merge no-op with news").collect(sim.knownButChanged > 0);
    }

    /** Both implementations plus the universe of every revision ever made. */
    static final class Sim {
        final int limit;
        final RevTreeModel model;
        List<EditBranch> impl = List.of();
        final Map<RevId, RevId> trueParent = new HashMap<>();
        final Map<RevId, Boolean> trueDeleted = new HashMap<>();
        final List<RevId> universe = new ArrayList<>();
        int counter;
        int knownButChanged;

        Sim(int limit) {
            this.limit = limit;
            this.model = new RevTreeModel(limit);
        }

        void step(Op op) {
            switch (op.kind()) {
                case 0, 1 -> {
                    List<RevId> live = new ArrayList<>();
                    for (RevTreeModel.Leaf l : model.leaves()) if (!l.deleted()) live.add(l.rev());
                    if (live.isEmpty()) interactive(null, op.kind() == 1, op.b());
                    else interactive(live.get(op.a() % live.size()), op.kind() == 1, op.b());
                }
                case 2 -> interactive(null, op.b() % 4 == 0, op.c());
                case 3 -> stale(op);
                case 4 -> remoteEdit(op);
                case 5 -> {
                    if (universe.isEmpty()) remoteEdit(op);
                    else {
                        RevId r = universe.get(op.a() % universe.size());
                        List<RevId> h = history(r);
                        merge(h.subList(0, 1 + op.c() % h.size()), trueDeleted.get(r));
                    }
                }
                case 6 -> {
                    RevId top = fresh(1 + op.a() % 8, op.c(), null, false);
                    List<RevId> chain = new ArrayList<>(List.of(top));
                    for (int i = 0; i < op.b() % 3; i++) chain.add(fresh(chain.getLast().pos() + 1, op.c() + i, chain.getLast(), false));
                    List<RevId> path = history(chain.getLast());
                    merge(path, false);
                }
                case 7 -> {
                    if (universe.isEmpty()) return;
                    List<RevId> h = new ArrayList<>(history(universe.get(op.a() % universe.size())));
                    if (h.size() < 2) return;
                    int i = 1 + op.b() % (h.size() - 1);
                    h.set(i, new RevId(h.get(i).pos(), "lie" + counter++)); // not part of the universe
                    merge(h.subList(0, 1 + Math.max(i, op.c() % h.size())), op.c() % 3 == 0);
                }
                default -> throw new IllegalStateException();
            }
        }

        /** A new revision of the universe; hash flavours mix canonical and arbitrary texts. */
        RevId fresh(long pos, int flavour, RevId parent, boolean deleted) {
            int n = counter++;
            String hex = md5Hex("rev" + n);
            String hash = switch (flavour % 10) {
                case 7 -> "r" + n; // short, non-hex
                case 8 -> hex.toUpperCase(Locale.ROOT); // non-canonical 32 chars
                case 9 -> hex + "12345678"; // 40 hex, like a SHA-1 rev
                default -> hex;
            };
            RevId r = new RevId(pos, hash);
            universe.add(r);
            if (parent != null) trueParent.put(r, parent);
            trueDeleted.put(r, deleted);
            return r;
        }

        List<RevId> history(RevId r) {
            List<RevId> out = new ArrayList<>();
            for (RevId x = r; x != null; x = trueParent.get(x)) out.add(x);
            return out;
        }

        void interactive(RevId base, boolean deleted, int flavour) {
            long pos;
            try {
                pos = model.positionFor(base, deleted);
            } catch (StorageException e) {
                assertEquals(StorageException.Kind.CONFLICT, e.kind());
                expectConflict(base, deleted);
                return;
            }
            EditPlan plan = EditBranches.planEdit(impl, base, deleted);
            assertEquals(pos, plan.newPos());
            RevId newRev = fresh(pos, flavour, plan.parent(), deleted);
            BranchUpdate u = plan.apply(newRev, limit);

            // The store only reads the base branch, the winner and the runner-up.
            List<EditBranch> sorted = EditBranches.sorted(impl);
            Set<EditBranch> subset = new LinkedHashSet<>();
            if (base != null) subset.add(EditBranches.findLeaf(impl, base));
            if (!sorted.isEmpty()) subset.add(sorted.getLast());
            if (sorted.size() > 1 && plan.replaced() != null && plan.replaced().equals(sorted.getLast())) {
                subset.add(sorted.get(sorted.size() - 2));
            }
            BranchUpdate partial = EditBranches.planEdit(subset, base, deleted).apply(newRev, limit);
            assertEquals(u.removed(), partial.removed());
            assertEquals(u.added(), partial.added());
            assertEquals(u.winner(), partial.winner());

            model.update(base, deleted, newRev);
            assertTrue(u.changed());
            assertEquals(u.branchCount() - impl.size(), plan.replaced() == null ? 1 : 0);
            checkBookkeeping(impl, u);
            impl = u.branches();
        }

        void expectConflict(RevId base, boolean deleted) {
            try {
                EditBranches.planEdit(impl, base, deleted);
                fail("expected a conflict for base " + base + " deleted=" + deleted + " on\n" + model);
            } catch (StorageException e) {
                assertEquals(StorageException.Kind.CONFLICT, e.kind());
            }
        }

        void stale(Op op) {
            List<RevId> candidates = new ArrayList<>();
            Set<RevId> live = new HashSet<>();
            for (RevTreeModel.Leaf l : model.leaves()) if (!l.deleted()) live.add(l.rev());
            for (RevId r : universe) if (!live.contains(r)) candidates.add(r);
            candidates.add(new RevId(1 + op.a() % 5, "never-made-" + op.a()));
            RevId base = candidates.get(op.b() % candidates.size());
            boolean deleted = op.c() % 2 == 0;
            try {
                model.positionFor(base, deleted);
                fail("model accepted stale base " + base);
            } catch (StorageException e) {
                assertEquals(StorageException.Kind.CONFLICT, e.kind());
            }
            expectConflict(base, deleted);
        }

        void remoteEdit(Op op) {
            RevId parent = universe.isEmpty() ? null : universe.get(op.a() % universe.size());
            RevId leaf = parent;
            int len = 1 + op.b() % 3;
            for (int i = 0; i < len; i++) {
                boolean del = i == len - 1 && op.c() % 5 == 0;
                leaf = fresh(leaf == null ? 1 : leaf.pos() + 1, op.b() + i, leaf, del);
            }
            List<RevId> h = history(leaf);
            merge(h.subList(0, 1 + (op.c() / 5) % h.size()), trueDeleted.get(leaf));
        }

        void merge(List<RevId> path, boolean deleted) {
            EditBranch incoming = new EditBranch(
                    path.getFirst(), deleted, path.subList(1, path.size()).stream().map(RevId::hash).toList());
            Set<EditBranch> before = modelBranches(model);
            boolean known = model.contains(path.getFirst());
            BranchUpdate u = EditBranches.merge(impl, incoming, limit);
            model.mergePath(path, deleted);
            assertEquals(known, u.leafAlreadyKnown(), "leafAlreadyKnown");
            assertEquals(!before.equals(modelBranches(model)), u.changed(), "changed");
            if (known && u.changed()) knownButChanged++;
            checkBookkeeping(impl, u);
            impl = u.branches();
        }

        static void checkBookkeeping(List<EditBranch> old, BranchUpdate u) {
            Set<EditBranch> expect = new HashSet<>(old);
            assertTrue(expect.containsAll(u.removed()), "removed must be old branches");
            u.removed().forEach(expect::remove);
            for (EditBranch a : u.added()) assertTrue(expect.add(a), "added must be new: " + a);
            assertEquals(expect, new HashSet<>(u.branches()));
            assertEquals(EditBranches.sorted(u.branches()), u.branches());
        }

        static Set<EditBranch> modelBranches(RevTreeModel m) {
            Set<EditBranch> out = new HashSet<>();
            for (RevTreeModel.Leaf l : m.leaves()) {
                List<RevId> revs = m.revsOf(l.rev());
                out.add(new EditBranch(l.rev(), l.deleted(), revs.subList(1, revs.size()).stream().map(RevId::hash).toList()));
            }
            return out;
        }

        void check() {
            String ctx = "\n" + model + "\nimpl: " + impl;
            assertEquals(modelBranches(model), new HashSet<>(impl), "branches" + ctx);
            EditBranch w = EditBranches.winner(impl);
            assertEquals(model.winner(), w == null ? null : w.leaf(), "winner" + ctx);
            if (w != null) {
                assertEquals(model.winnerDeleted(), w.deleted(), "winner deleted" + ctx);
                assertEquals(model.revsOfWinner(), w.revs(), "winner revs" + ctx);
                assertEquals(model.revsOfWinner(), EditBranches.revsInfo(w).stream().map(RevInfo::rev).toList());
            }
            assertEquals(model.conflicts(), EditBranches.conflicts(impl), "conflicts" + ctx);
            assertEquals(model.deletedConflicts(), EditBranches.deletedConflicts(impl), "deleted conflicts" + ctx);
            assertEquals(
                    model.leaves(),
                    EditBranches.leaves(impl).stream().map(b -> new RevTreeModel.Leaf(b.leaf(), b.deleted())).toList(),
                    "leaves" + ctx);
            assertEquals(model.leaves().size(), EditBranches.branchCount(impl));

            Set<RevId> implRevs = new HashSet<>();
            for (EditBranch b : impl) {
                assertTrue(b.length() <= limit, "stemmed " + b);
                implRevs.addAll(b.revs());
                for (EditBranch o : impl) assertFalse(o.hasAncestor(b.leaf()), "leaf " + b.leaf() + " inside " + o);
            }
            assertEquals(model.allRevs(), implRevs, "known revisions" + ctx);

            List<RevId> query = new ArrayList<>(universe.subList(Math.max(0, universe.size() - 6), universe.size()));
            query.add(new RevId(3, "unknown"));
            assertEquals(model.missing(query), EditBranches.missing(impl, query));
            for (RevId r : universe) {
                List<RevId> revs = model.revsOf(r);
                Revisions h = EditBranches.history(impl, r);
                if (revs.isEmpty()) {
                    assertEquals(null, h);
                } else {
                    assertEquals(revs.getFirst().pos(), h.start());
                    assertEquals(revs.stream().map(RevId::hash).toList(), h.ids(), "history of " + r + ctx);
                }
            }
        }

        static String md5Hex(String s) {
            try {
                return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(s.getBytes(StandardCharsets.UTF_8)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }
}

package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Versionstamp;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
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
import net.jqwik.api.Tag;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Model-based: random sequences of interactive creates, updates, deletes and re-creates,
 * {@code new_edits=false} merges (histories re-sent from what was made, fresh remote edits,
 * unrelated stemmed roots, paths that lie about a parent), stale-rev updates and multi-document
 * batches, on a few documents, run against the store and against {@link RevTreeModel} (one per
 * document). The model is driven with the revisions the store returns; they must be
 * {@link RevHasher}'s. After every step, for every document: the leaves in CouchDB's order (so the
 * winner, {@code _conflicts} and {@code _deleted_conflicts}), every branch's stored history, the
 * winner's revs path, the outcome of the write (ok or 409), each leaf's body, what a plain GET
 * says, the database info, and that a write that changed a document moved it to the end of the
 * changes feed while a no-op left it. {@link Invariants} holds after every step.
 */
class DocumentStoreModelProperties {
    private static StoreFixture plain;
    private static StoreFixture faulty;

    @BeforeContainer
    static void open() {
        plain = StoreFixture.open();
        faulty = StoreFixture.withFaults(0.04, 77L);
    }

    @AfterContainer
    static void close() {
        System.out.println("model with faults: " + faulty.injectedFaults() + " injected faults, " + faulty.commitsRetried() + " retries");
        plain.close();
        faulty.close();
    }

    /** One step; the ints pick among the options the current state offers. */
    record Op(int kind, int doc, int a, int b, int c) {}

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Integer> kind = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(6, Arbitraries.just(0)), // edit a live leaf
                net.jqwik.api.Tuple.of(2, Arbitraries.just(1)), // delete a live leaf
                net.jqwik.api.Tuple.of(3, Arbitraries.just(2)), // create / re-create without base rev
                net.jqwik.api.Tuple.of(2, Arbitraries.just(3)), // stale or unknown base rev
                net.jqwik.api.Tuple.of(4, Arbitraries.just(4)), // remote edit replicated in
                net.jqwik.api.Tuple.of(3, Arbitraries.just(5)), // re-send (a prefix of) a known history
                net.jqwik.api.Tuple.of(1, Arbitraries.just(6)), // unrelated stemmed root
                net.jqwik.api.Tuple.of(1, Arbitraries.just(7)), // a path that lies about a parent
                net.jqwik.api.Tuple.of(2, Arbitraries.just(8)), // one batch editing every document
                net.jqwik.api.Tuple.of(1, Arbitraries.just(9)), // one batch editing one document twice
                net.jqwik.api.Tuple.of(1, Arbitraries.just(10)), // one new_edits=false batch with repeated ids
                net.jqwik.api.Tuple.of(2, Arbitraries.just(11))); // purge leaves (and revisions that are not leaves)
        Arbitrary<Integer> n = Arbitraries.integers().between(0, 999);
        return Combinators.combine(kind, Arbitraries.integers().between(0, 2), n, n, n).as(Op::new).list().ofMinSize(1).ofMaxSize(60);
    }

    @Property(tries = 1000)
    void smallRevsLimits(@ForAll @IntRange(min = 1, max = 5) int revsLimit, @ForAll("ops") List<Op> ops) {
        run(plain, revsLimit, ops);
    }

    @Property(tries = 200)
    void defaultRevsLimit(@ForAll("ops") List<Op> ops) {
        run(plain, 0, ops);
    }

    @Property(tries = 400)
    void withCommitFaults(@ForAll @IntRange(min = 0, max = 5) int revsLimit, @ForAll("ops") List<Op> ops) {
        run(faulty, revsLimit, ops);
    }

    /** The same, much longer: about ten minutes. {@code ./mvnw -Pslow} or {@code -Dchaise.test.excludedGroups=}. */
    @Property(tries = 5_000)
    @Tag("slow")
    void soak(@ForAll @IntRange(min = 0, max = 6) int revsLimit, @ForAll boolean faults, @ForAll("ops") List<Op> ops) {
        run(faults ? faulty : plain, revsLimit, ops);
    }

    private static void run(StoreFixture f, int revsLimit, List<Op> ops) {
        Sim sim = new Sim(f, revsLimit);
        for (Op op : ops) {
            sim.step(op);
            if (sim.diverged) break;
            sim.checkAll();
        }
        int maxBranches = 0;
        for (Doc d : sim.docs) maxBranches = Math.max(maxBranches, d.model.leaves().size());
        Statistics.label("max branches").collect(Math.min(maxBranches, 5));
        Statistics.label("409s").collect(sim.conflicts == 0 ? "0" : sim.conflicts < 5 ? "<5" : ">=5");
        Statistics.label("no-op merges").collect(sim.noOps > 0);
    }

    /** One document: its model and the "universe" of every revision made for it (each with one true parent and body). */
    static final class Doc {
        final String id;
        final RevTreeModel model;
        final Map<RevId, RevId> trueParent = new HashMap<>();
        final Map<RevId, Boolean> trueDeleted = new HashMap<>();
        final Map<RevId, ObjectNode> trueBody = new HashMap<>();
        final List<RevId> universe = new ArrayList<>();
        Versionstamp lastSeq;

        Doc(String id, int limit) {
            this.id = id;
            this.model = new RevTreeModel(limit);
        }

        void record(RevId r, RevId parent, boolean deleted, ObjectNode body) {
            if (trueBody.containsKey(r)) return; // the same edit made again: same parent and body
            universe.add(r);
            if (parent != null) trueParent.put(r, parent);
            trueDeleted.put(r, deleted);
            trueBody.put(r, body);
        }

        List<RevId> history(RevId r) {
            List<RevId> out = new ArrayList<>();
            for (RevId x = r; x != null; x = trueParent.get(x)) out.add(x);
            return out;
        }

        List<RevId> liveLeaves() {
            List<RevId> live = new ArrayList<>();
            for (RevTreeModel.Leaf l : model.leaves()) if (!l.deleted()) live.add(l.rev());
            return live;
        }
    }

    /** A replicated edit: a path (leaf first) and the leaf's deleted flag. */
    record Incoming(Doc doc, List<RevId> path, boolean deleted) {}

    /** An interactive edit and what the model says must happen to it. */
    record Expect(Doc doc, RevId base, boolean deleted, ObjectNode body, RevId parent, RevId rev, boolean conflict) {}

    static final class Sim {
        /** Few bodies, so equal edits of equal parents give equal revisions. */
        static final List<ObjectNode> BODIES = List.of(
                parse("{}"), parse("{\"v\":1}"), parse("{\"v\":2}"),
                parse("{\"nested\":{\"a\":[1,2,{\"b\":null}],\"s\":\"\\u0000\\ud83d\\ude00\"},\"big\":123456789012345678901234567890}"));
        static final List<ObjectNode> TOMBSTONES = List.of(parse("{}"), parse("{}"), parse("{\"reason\":\"gone\"}"));

        final StoreFixture f;
        final String db;
        final int limit;
        final List<Doc> docs = new ArrayList<>();
        int counter;
        int conflicts;
        int noOps;
        boolean diverged;
        /** Replicated edits being collected into one request, or null. */
        List<Incoming> pending;

        Sim(StoreFixture f, int revsLimit) {
            this.f = f;
            this.limit = revsLimit == 0 ? EditBranches.DEFAULT_REVS_LIMIT : revsLimit;
            this.db = f.newDb("model", revsLimit);
            for (String id : List.of("a", "b\u0000c", "d\ud83d\ude00")) docs.add(new Doc(id, limit));
        }

        static ObjectNode parse(String json) {
            try {
                return (ObjectNode) Json.MAPPER.readTree(json);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        void step(Op op) {
            Doc d = docs.get(op.doc());
            switch (op.kind()) {
                case 0, 1 -> {
                    List<RevId> live = d.liveLeaves();
                    RevId base = live.isEmpty() ? null : live.get(op.a() % live.size());
                    boolean del = op.kind() == 1;
                    interactive(List.of(expect(d, base, del, del ? TOMBSTONES.get(op.b() % 3) : BODIES.get(op.b() % 4))));
                }
                case 2 -> {
                    boolean del = op.b() % 5 == 0;
                    interactive(List.of(expect(d, null, del, del ? TOMBSTONES.get(op.c() % 3) : BODIES.get(op.c() % 4))));
                }
                case 3 -> stale(d, op);
                case 4 -> remoteEdit(d, op);
                case 5 -> {
                    if (d.universe.isEmpty()) {
                        remoteEdit(d, op);
                    } else {
                        RevId r = d.universe.get(op.a() % d.universe.size());
                        List<RevId> h = d.history(r);
                        merge(d, h.subList(0, 1 + op.c() % h.size()), d.trueDeleted.get(r));
                    }
                }
                case 6 -> {
                    RevId top = fresh(d, 1 + op.a() % 8, op.c(), null, false);
                    RevId leaf = top;
                    for (int i = 0; i < op.b() % 3; i++) leaf = fresh(d, leaf.pos() + 1, op.c() + i, leaf, false);
                    merge(d, d.history(leaf), false);
                }
                case 7 -> {
                    if (d.universe.isEmpty()) return;
                    List<RevId> h = new ArrayList<>(d.history(d.universe.get(op.a() % d.universe.size())));
                    if (h.size() < 2) return;
                    int i = 1 + op.b() % (h.size() - 1);
                    h.set(i, new RevId(h.get(i).pos(), "lie" + counter++)); // not part of the universe
                    merge(d, h.subList(0, 1 + Math.max(i, op.c() % h.size())), op.c() % 3 == 0);
                }
                case 8 -> {
                    List<Expect> batch = new ArrayList<>();
                    for (int i = 0; i < docs.size(); i++) {
                        Doc x = docs.get((op.a() + i) % docs.size());
                        List<RevId> live = x.liveLeaves();
                        RevId base = live.isEmpty() ? null : live.get((op.b() + i) % live.size());
                        boolean del = (op.c() + i) % 4 == 0 && base != null;
                        batch.add(expect(x, base, del, del ? TOMBSTONES.get(i % 3) : BODIES.get((op.c() + i) % 4)));
                    }
                    interactive(batch);
                }
                case 9 -> {
                    // As fabric2_db: once an edit of an id succeeded in a request, later ones are 409s.
                    List<RevId> live = d.liveLeaves();
                    RevId base = live.isEmpty() ? null : live.get(op.a() % live.size());
                    Expect first = expect(d, base, false, BODIES.get(op.b() % 4));
                    ObjectNode body2 = BODIES.get(op.c() % 4);
                    Expect second = first.conflict()
                            ? expect(d, live.isEmpty() ? null : live.get(op.c() % live.size()), false, body2)
                            : new Expect(d, op.c() % 2 == 0 ? base : first.rev(), false, body2, null, null, true);
                    interactive(List.of(first, second));
                }
                case 10 -> {
                    pending = new ArrayList<>();
                    remoteEdit(d, op);
                    RevId r = d.universe.get(op.c() % d.universe.size());
                    List<RevId> h = d.history(r);
                    merge(d, h.subList(0, 1 + op.a() % h.size()), d.trueDeleted.get(r));
                    remoteEdit(docs.get((op.doc() + 1) % docs.size()), new Op(4, 0, op.b(), op.c(), op.a()));
                    remoteEdit(d, new Op(4, 0, op.c(), op.a(), op.b()));
                    List<Incoming> in = pending;
                    pending = null;
                    mergeAll(in);
                }
                case 11 -> purge(d, op);
                default -> throw new IllegalStateException();
            }
        }

        /**
         * A purge of one document, sometimes with a second in the same request: a leaf, every
         * leaf, or a leaf beside a revision that is not one (inner, or never made), which the
         * purge ignores. Afterwards the store must equal the model with the purged leaves and the
         * ancestors only they held removed, i.e. a database where they were never written; a
         * document that keeps leaves moves to the end of the changes feed, one that keeps none
         * leaves it.
         */
        void purge(Doc d, Op op) {
            List<PurgeRequest> requests = new ArrayList<>();
            List<Doc> targets = new ArrayList<>(List.of(d));
            if (op.c() % 4 == 0) targets.add(docs.get((op.doc() + 1) % docs.size()));
            for (Doc x : targets) {
                List<RevTreeModel.Leaf> leaves = x.model.leaves();
                List<RevId> asked = new ArrayList<>();
                if (!leaves.isEmpty()) {
                    switch (op.b() % 3) {
                        case 0 -> asked.add(leaves.get(op.a() % leaves.size()).rev());
                        case 1 -> leaves.forEach(l -> asked.add(l.rev()));
                        default -> {
                            asked.add(leaves.get(op.a() % leaves.size()).rev());
                            List<RevId> inner = new ArrayList<>(x.model.allRevs());
                            leaves.forEach(l -> inner.remove(l.rev()));
                            if (!inner.isEmpty()) asked.add(inner.get(op.c() % inner.size()));
                        }
                    }
                }
                if (op.c() % 3 == 0) asked.add(new RevId(1 + op.c() % 4, "never-made-" + op.c()));
                requests.add(new PurgeRequest(x.id, asked));
            }
            List<Purged> results = f.store.open(db).purge(requests);
            assertEquals(requests.size(), results.size());
            List<Doc> changed = new ArrayList<>();
            for (int i = 0; i < targets.size(); i++) {
                Doc x = targets.get(i);
                String before = x.model.toString();
                List<RevId> expected = x.model.purge(requests.get(i).revs());
                assertEquals(x.id, results.get(i).id());
                assertEquals(expected, results.get(i).revs(), "purged leaves of " + requests.get(i) + " on\n" + before);
                if (!expected.isEmpty()) {
                    Statistics.label("purges").collect(x.model.isEmpty() ? "whole document" : "some leaves");
                    if (x.model.isEmpty()) x.lastSeq = null;
                    else changed.add(x);
                }
            }
            checkChangesOrder(changed);
        }

        /** A new revision of the universe; hash flavours mix canonical and arbitrary texts. */
        RevId fresh(Doc d, long pos, int flavour, RevId parent, boolean deleted) {
            int n = counter++;
            String hex = md5Hex(d.id + "rev" + n);
            String hash = switch (flavour % 10) {
                case 7 -> "r" + n; // short, non-hex
                case 8 -> hex.toUpperCase(Locale.ROOT); // non-canonical 32 chars
                case 9 -> hex + "12345678"; // 40 hex, like a SHA-1 rev
                default -> hex;
            };
            RevId r = new RevId(pos, hash);
            ObjectNode body = deleted ? TOMBSTONES.get(n % 3) : BODIES.get(n % 4).deepCopy().put("remote", n);
            d.record(r, parent, deleted, body);
            return r;
        }

        Expect expect(Doc d, RevId base, boolean deleted, ObjectNode body) {
            try {
                d.model.positionFor(base, deleted);
            } catch (StorageException e) {
                assertEquals(StorageException.Kind.CONFLICT, e.kind());
                return new Expect(d, base, deleted, body, null, null, true);
            }
            RevId parent = base != null ? base : d.model.winner(); // re-creating extends the winning deleted leaf
            RevId rev = RevHasher.newRevId(parent, deleted, body, List.of());
            // The same edit of the same parent already made (possible once stemming dropped and a
            // replication brought back the parent): the model refuses to store a revision twice.
            return new Expect(d, base, deleted, body, parent, rev, d.model.contains(rev));
        }

        void interactive(List<Expect> expects) {
            List<DocUpdate> updates = new ArrayList<>();
            Map<Doc, List<EditBranch>> before = new HashMap<>();
            for (Expect e : expects) {
                updates.add(DocUpdate.edit(e.doc().id, e.base(), e.deleted(), e.body()));
                if (e.conflict() && e.rev() != null) before.put(e.doc(), f.store.open(db).branches(e.doc().id));
            }
            List<UpdateResult> results = f.store.open(db).update(updates, true);
            assertEquals(expects.size(), results.size());
            List<Doc> changed = new ArrayList<>();
            for (int i = 0; i < expects.size(); i++) {
                Expect e = expects.get(i);
                UpdateResult r = results.get(i);
                String ctx = "edit of " + e.doc().id + " base " + e.base() + (e.deleted() ? " (delete)" : "") + " on\n" + e.doc().model;
                assertEquals(e.doc().id, r.id());
                if (e.conflict()) {
                    if (e.rev() != null && r.ok() && knownDuplicate(e, before.get(e.doc()))) {
                        diverged = true; // the store now holds a state the model refuses; stop this run
                        return;
                    }
                    conflicts++;
                    assertEquals(StorageException.Kind.CONFLICT, r.error() == null ? null : r.error().kind(), "expected 409, got " + r + " for " + ctx);
                    continue;
                }
                assertNull(r.error(), () -> r.error() + " for " + ctx);
                assertEquals(e.rev(), r.rev(), "RevHasher's revision for " + ctx);
                e.doc().model.update(e.base(), e.deleted(), r.rev());
                e.doc().record(r.rev(), e.parent(), e.deleted(), e.body());
                changed.add(e.doc());
            }
            checkChangesOrder(changed);
        }

        /**
         * KNOWN LIMITATION (reported, not fixed): an interactive edit whose new revision already
         * exists, not as a leaf (that one point read catches) but as an ancestor inside a branch
         * the edit does not read, is accepted: RFC C's edit reads only the base branch, the winner
         * and, when deleting the winner, the runner-up. It takes the parent coming back as a leaf
         * after stemming cut it off (or a replicated path that lied about a parent), edited again
         * with the very same body. Anything else accepted where the model says 409 fails the test.
         */
        boolean knownDuplicate(Expect e, List<EditBranch> before) {
            List<EditBranch> sorted = EditBranches.sorted(before);
            Set<EditBranch> read = new HashSet<>();
            read.add(sorted.getLast());
            if (e.deleted() && e.base() != null && sorted.getLast().leaf().equals(e.base()) && sorted.size() > 1) read.add(sorted.get(sorted.size() - 2));
            for (EditBranch b : before) {
                if (b.leaf().equals(e.rev())) return false;
                if (b.leaf().equals(e.base())) read.add(b);
            }
            for (EditBranch b : before) {
                if (!read.contains(b) && b.hasAncestor(e.rev())) {
                    Statistics.label("known limitation: duplicate revision accepted").collect(true);
                    return true;
                }
            }
            return false;
        }

        void stale(Doc d, Op op) {
            Set<RevId> live = new HashSet<>(d.liveLeaves());
            List<RevId> candidates = new ArrayList<>();
            for (RevId r : d.universe) if (!live.contains(r)) candidates.add(r);
            candidates.add(new RevId(1 + op.a() % 5, "never-made-" + op.a()));
            RevId base = candidates.get(op.b() % candidates.size());
            boolean deleted = op.c() % 2 == 0;
            assertEquals(StorageException.Kind.CONFLICT,
                    assertThrows(StorageException.class, () -> d.model.positionFor(base, deleted)).kind(), "model accepted stale " + base);
            interactive(List.of(new Expect(d, base, deleted, BODIES.get(op.c() % 4), null, null, true)));
        }

        void remoteEdit(Doc d, Op op) {
            RevId parent = d.universe.isEmpty() ? null : d.universe.get(op.a() % d.universe.size());
            RevId leaf = parent;
            int len = 1 + op.b() % 3;
            for (int i = 0; i < len; i++) {
                boolean del = i == len - 1 && op.c() % 5 == 0;
                leaf = fresh(d, leaf == null ? 1 : leaf.pos() + 1, op.b() + i, leaf, del);
            }
            List<RevId> h = d.history(leaf);
            merge(d, h.subList(0, 1 + (op.c() / 5) % h.size()), d.trueDeleted.get(leaf));
        }

        /** A replicated edit; collected into {@link #pending} when a batch is being built. */
        void merge(Doc d, List<RevId> path, boolean deleted) {
            if (pending != null) pending.add(new Incoming(d, path, deleted));
            else mergeAll(List.of(new Incoming(d, path, deleted)));
        }

        /** One new_edits=false request; the store merges each in turn, as the model does. */
        void mergeAll(List<Incoming> in) {
            List<DocUpdate> updates = new ArrayList<>();
            for (Incoming i : in) {
                EditBranch incoming = new EditBranch(i.path().getFirst(), i.deleted(), i.path().subList(1, i.path().size()).stream().map(RevId::hash).toList());
                updates.add(DocUpdate.replicated(i.doc().id, incoming, i.doc().trueBody.getOrDefault(i.path().getFirst(), Json.NODES.objectNode())));
            }
            List<UpdateResult> results = f.store.open(db).update(updates, false);
            List<Doc> changedInOrder = new ArrayList<>();
            for (int k = 0; k < in.size(); k++) {
                Incoming i = in.get(k);
                UpdateResult r = results.get(k);
                assertNull(r.error(), () -> r.error() + " merging " + updates.get(results.indexOf(r)).path() + " into\n" + i.doc().model);
                assertEquals(i.path().getFirst(), r.rev());
                Set<EditBranch> before = modelBranches(i.doc().model);
                i.doc().model.mergePath(i.path(), i.deleted());
                if (before.equals(modelBranches(i.doc().model))) {
                    noOps++;
                } else {
                    changedInOrder.remove(i.doc());
                    changedInOrder.add(i.doc());
                }
            }
            checkChangesOrder(changedInOrder);
        }

        /**
         * The documents a write changed (in the order of its batch) now have the last rows of the
         * changes feed, in that order, each after its own previous row; the others keep theirs.
         */
        void checkChangesOrder(List<Doc> changed) {
            Invariants.Report rep = f.checkInvariants(db, limit);
            Versionstamp previous = null;
            for (Doc d : docs) {
                Invariants.Change c = rep.changes().get(d.id);
                if (d.model.isEmpty()) {
                    assertNull(c, "no changes row for a document that does not exist");
                    continue;
                }
                if (!changed.contains(d)) {
                    assertEquals(d.lastSeq, c.versionstamp(), "a document the write did not change keeps its changes row: " + d.id);
                    if (previous == null || previous.compareTo(c.versionstamp()) < 0) previous = c.versionstamp();
                }
            }
            for (Doc d : changed) {
                Versionstamp seq = rep.changes().get(d.id).versionstamp();
                if (previous != null) assertTrue(previous.compareTo(seq) < 0, "changed documents' rows come last, in batch order: " + d.id);
                if (d.lastSeq != null) assertTrue(d.lastSeq.compareTo(seq) < 0, "a change moves the row forward: " + d.id);
                d.lastSeq = seq;
                previous = seq;
            }
        }

        void checkAll() {
            long live = 0;
            long deleted = 0;
            for (Doc d : docs) {
                check(d);
                if (!d.model.isEmpty()) {
                    if (d.model.winnerDeleted()) deleted++;
                    else live++;
                }
            }
            DbInfo info = f.store.open(db).info();
            assertEquals(live, info.docCount(), "doc_count");
            assertEquals(deleted, info.docDelCount(), "doc_del_count");
            Invariants.Report rep = f.checkInvariants(db, limit);
            Versionstamp last = null;
            for (Invariants.Change c : rep.changes().values()) if (last == null || last.compareTo(c.versionstamp()) < 0) last = c.versionstamp();
            // A purge moves update_seq on too, as CouchDB's does (39717e8), and may take the last changes row away.
            if (info.purgeSeq() != null && (last == null || last.compareTo(info.purgeSeq().versionstamp()) < 0)) last = info.purgeSeq().versionstamp();
            assertEquals(last, info.updateSeq() == null ? null : info.updateSeq().versionstamp(), "update_seq is the last changes row or purge");
        }

        void check(Doc d) {
            RevTreeModel m = d.model;
            List<EditBranch> stored = f.store.open(db).branches(d.id);
            String ctx = "\n" + m + "\nstore: " + stored;
            assertEquals(modelBranches(m), new HashSet<>(stored), "branches" + ctx);
            assertEquals(m.leaves(), EditBranches.leaves(stored).stream().map(b -> new RevTreeModel.Leaf(b.leaf(), b.deleted())).toList(), "leaves in CouchDB's order" + ctx);
            assertEquals(m.conflicts(), EditBranches.conflicts(stored), "_conflicts" + ctx);
            assertEquals(m.deletedConflicts(), EditBranches.deletedConflicts(stored), "_deleted_conflicts" + ctx);
            if (m.isEmpty()) {
                assertEquals("missing", assertThrows(StorageException.class, () -> f.store.open(db).get(d.id, null, false)).reason());
                return;
            }
            if (m.winnerDeleted()) {
                assertEquals("deleted", assertThrows(StorageException.class, () -> f.store.open(db).get(d.id, null, false)).reason(), ctx);
            } else {
                StoredDoc w = f.store.open(db).get(d.id, null, true);
                assertEquals(m.winner(), w.rev(), "winner" + ctx);
                assertEquals(m.revsOfWinner(), EditBranches.winner(w.branches()).revs(), "winner's revs" + ctx);
                JsonArbitraries.assertSameAsStored(d.trueBody.get(m.winner()), w.body());
            }
            for (RevTreeModel.Leaf l : m.leaves()) {
                StoredDoc sd = f.store.open(db).get(d.id, l.rev(), false);
                assertEquals(l.deleted(), sd.deleted(), "deleted flag of " + l + ctx);
                ObjectNode expected = d.trueBody.get(l.rev());
                JsonArbitraries.assertSameAsStored(expected, sd.body());
            }
        }

        static Set<EditBranch> modelBranches(RevTreeModel m) {
            Set<EditBranch> out = new HashSet<>();
            for (RevTreeModel.Leaf l : m.leaves()) {
                List<RevId> revs = m.revsOf(l.rev());
                out.add(new EditBranch(l.rev(), l.deleted(), revs.subList(1, revs.size()).stream().map(RevId::hash).toList()));
            }
            return out;
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

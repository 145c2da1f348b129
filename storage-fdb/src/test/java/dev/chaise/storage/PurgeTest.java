package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A purge leaves the database as if the purged revisions had never been written: the same KVs,
 * byte for byte, in every subspace a document touches (revisions, bodies, by-id, attachment
 * chunks, counters), as a database where they never were; only what depends on when things
 * were committed (versionstamps, the changes keys) and the purge record itself differ. The
 * model-based properties ({@link DocumentStoreModelProperties}) check the same against a
 * reference tree over random histories; this pins it on the raw keys.
 */
class PurgeTest {
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

    static final byte[] BIG = new byte[150_000]; // three chunks

    static {
        new Random(7).nextBytes(BIG);
    }

    /** A document with two branches from 1-a: one extended interactively, one replicated (with an attachment). */
    private static void shared(Database db) {
        RevId r1 = db.update(List.of(DocUpdate.edit("x", null, false, body("{\"v\":1}"))), true).getFirst().rev();
        RevId r2 = db.update(List.of(DocUpdate.edit("x", r1, false, body("{\"v\":2}"))), true).getFirst().rev();
        db.update(List.of(DocUpdate.edit("x", r2, false, body("{\"v\":3}"))), true);
        db.update(List.of(DocUpdate.edit("other", null, false, body("{\"o\":true}"))), true);
    }

    private static void conflict(Database db, String... leafFirst) {
        RevId r1 = db.get("x", null, true).branches().stream().map(EditBranch::revs).filter(l -> l.getLast().pos() == 1).findFirst()
                .orElseThrow().getLast();
        List<String> ancestors = new ArrayList<>(List.of(leafFirst).subList(1, leafFirst.length));
        ancestors.add(r1.hash());
        EditBranch path = new EditBranch(new RevId(ancestors.size() + 1, leafFirst[0]), false, ancestors);
        ObjectNode b = AttachmentsTest.withData(body("{\"remote\":true}"), "big.bin", BIG);
        db.update(List.of(DocUpdate.replicated("x", path, b)), false);
    }

    /** Every KV of the database, less what depends on commit times and the purge record, keyed by hex. */
    private TreeMap<String, String> normalized(String name) {
        return f.kv.run(tx -> {
            DbHandle h = f.dirs.open(tx, name);
            TreeMap<String, String> out = new TreeMap<>();
            for (KeyValue kv : tx.getRangeAsList(h.space().begin(), h.space().end(), 0, false)) {
                Tuple k = h.space().unpack(kv.key());
                long sub = k.getLong(0);
                if (sub == KeySpace.Db.META || sub == KeySpace.Db.PURGES) continue;
                String value = HexFormat.of().formatHex(kv.value());
                if (sub == KeySpace.Db.CHANGES) {
                    // The key is a versionstamp: keep the row, keyed by its document.
                    out.put("changes " + Tuple.fromBytes(kv.value()).getString(1), value);
                    continue;
                }
                if (sub == KeySpace.Db.STATS && k.getString(1).equals("writes")) continue;
                if (sub == KeySpace.Db.STATS && DbStats.littleEndianValue(kv.value()) == 0) continue; // a counter back at 0 reads as absent
                if (sub == KeySpace.Db.REVISIONS) {
                    Tuple v = Tuple.fromBytes(kv.value());
                    if (v.get(2) != null) value = "winner " + v.getLong(3) + " " + v.getNestedTuple(4) + " " + v.getLong(5) + " " + v.getLong(6);
                }
                out.put(HexFormat.of().formatHex(kv.key()).substring(2 * h.space().prefix().length), value);
            }
            return out;
        });
    }

    /**
     * Runs {@code both} on two databases and {@code purgedOnly} on the first, purges {@code purge}
     * there (the leaves {@code purgedOnly} made, found by {@code leaves}), and compares the two.
     */
    private List<Purged> assertPurgedEqualsNeverWritten(Consumer<Database> both, Consumer<Database> purgedOnly,
                                                        java.util.function.Function<Database, List<PurgeRequest>> purge) {
        String purged = f.newDb("purged", 0);
        String never = f.newDb("never", 0);
        both.accept(f.store.open(purged));
        both.accept(f.store.open(never));
        purgedOnly.accept(f.store.open(purged));
        List<Purged> res = f.store.open(purged).purge(purge.apply(f.store.open(purged)));
        assertEquals(normalized(never), normalized(purged));
        f.checkInvariants(purged, 0);
        DbInfo a = f.store.open(purged).info();
        DbInfo b = f.store.open(never).info();
        assertEquals(List.of(b.docCount(), b.docDelCount(), b.sizeExternal(), b.sizeActive()),
                List.of(a.docCount(), a.docDelCount(), a.sizeExternal(), a.sizeActive()));
        assertTrue(a.purgeSeq() != null && b.purgeSeq() == null, "the purge record is the one difference");
        return res;
    }

    @Test
    void purgingALosingBranchWithItsAttachmentAndOwnAncestors() {
        // x: 1-a, 2, 3 (interactive) and 1-a, 2-p, 3-q, 4-r (replicated, with a 150 KB attachment).
        // The replicated branch is longer, so it wins; purging its leaf drops 2-p and 3-q too.
        String p = "22222222222222222222222222222222";
        String q = "33333333333333333333333333333333";
        String r = "44444444444444444444444444444444";
        List<Purged> res = assertPurgedEqualsNeverWritten(PurgeTest::shared, db -> conflict(db, r, q, p),
                db -> List.of(new PurgeRequest("x", List.of(new RevId(4, r), new RevId(3, q)))));
        assertEquals(List.of(new Purged("x", List.of(new RevId(4, r)))), res, "an inner revision named is ignored");
    }

    @Test
    void purgingTheWinnerKeepsTheSharedRoot() {
        String p = "ffffffffffffffffffffffffffffffff";
        List<Purged> res = assertPurgedEqualsNeverWritten(db -> {
            RevId r1 = db.update(List.of(DocUpdate.edit("x", null, false, body("{\"v\":1}"))), true).getFirst().rev();
            db.update(List.of(DocUpdate.edit("x", r1, false, body("{\"v\":2}"))), true);
            db.update(List.of(DocUpdate.edit("other", null, false, body("{\"o\":true}"))), true);
        }, db -> conflict(db, p), db -> List.of(new PurgeRequest("x", List.of(new RevId(2, p)))));
        assertEquals(List.of(new RevId(2, p)), res.getFirst().revs());
    }

    @Test
    void purgingEveryLeafLeavesNoTrace() {
        String live = "55555555555555555555555555555555";
        RevId[] deleted = new RevId[1];
        List<Purged> res = assertPurgedEqualsNeverWritten(db -> db.update(List.of(DocUpdate.edit("other", null, false, body("{\"o\":true}"))), true),
                db -> {
                    RevId r1 = db.update(List.of(DocUpdate.edit("x", null, false, AttachmentsTest.withData(body("{\"v\":1}"), "big.bin", BIG))), true)
                            .getFirst().rev();
                    deleted[0] = db.update(List.of(DocUpdate.edit("x", r1, true, body("{}"))), true).getFirst().rev();
                    db.update(List.of(DocUpdate.replicated("x", new EditBranch(new RevId(2, live), false, List.of(r1.hash())),
                            AttachmentsTest.withData(body("{\"live\":1}"), "big.bin", BIG))), false);
                    assertEquals(2, db.branches("x").size());
                },
                db -> List.of(new PurgeRequest("x", List.of(new RevId(2, live), deleted[0])), new PurgeRequest("nope", List.of(new RevId(1, "abc")))));
        assertEquals(new java.util.TreeSet<>(List.of(new RevId(2, live), deleted[0])).stream().toList(), res.get(0).revs());
        assertEquals(List.of(), res.get(1).revs());
    }

    @Test
    void purgeRecordsAreKeptUpToTheLimit() {
        String name = f.newDb("limit", 0);
        Database db = f.store.open(name);
        assertEquals(PurgedInfos.DEFAULT_LIMIT, db.purgedInfosLimit());
        db.setPurgedInfosLimit(2);
        for (String id : List.of("a", "b", "c")) db.purge(List.of(new PurgeRequest(id, List.of(new RevId(1, "abc")))));
        List<PurgedInfos.Info> infos = db.purgedInfos();
        assertEquals(List.of("b", "c"), infos.stream().map(PurgedInfos.Info::id).toList());
        assertEquals(List.of(new RevId(1, "abc")), infos.getFirst().revs());
        assertEquals(infos.getLast().seq(), db.info().purgeSeq());
        f.checkInvariants(name, 0);
    }
}

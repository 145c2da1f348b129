package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.json.Json;
import java.util.List;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/** The checker is trusted by the other suites, so it is shown to catch each kind of damage. */
class InvariantsTest {
    StoreFixture f;
    DbHandle db;

    @BeforeEach
    void open() throws Exception {
        f = StoreFixture.open();
        f.newDb("inv", 0);
        String name = f.dirs.list(null, null, false, 0, 0).getFirst();
        // a live doc with two branches, a deleted doc with a body in its tombstone, a local doc
        String a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        f.store.open(name).update(List.of(
                DocUpdate.replicated("d1", EditBranch.fromRevisions(2, List.of("bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", a), false), body("{\"v\":1}")),
                DocUpdate.replicated("d1", EditBranch.fromRevisions(2, List.of("cccccccccccccccccccccccccccccccc", a), false), body("{\"v\":2}"))), false);
        RevId r = f.store.open(name).update(List.of(DocUpdate.edit("d2", null, false, body("{\"x\":[1,{}]}"))), true).getFirst().rev();
        f.store.open(name).update(List.of(DocUpdate.edit("d2", r, true, body("{\"why\":\"gone\"}"))), true);
        f.store.open(name).putLocal("_local/l", null, false, body("{\"n\":1}"));
        db = f.dirs.open(name);
        Invariants.Report rep = Invariants.check(f.kv, f.dirs, name, 0);
        assertEquals(2, rep.docs());
        assertEquals(1, rep.liveDocs());
        assertEquals(1, rep.deletedDocs());
        assertEquals(3, rep.branches());
        assertEquals(3, rep.bodies());
        assertEquals(2, rep.changesRows());
    }

    @AfterEach
    void close() {
        f.close();
    }

    static com.fasterxml.jackson.databind.node.ObjectNode body(String json) throws Exception {
        return (com.fasterxml.jackson.databind.node.ObjectNode) Json.MAPPER.readTree(json);
    }

    private List<KeyValue> range(long sub) {
        byte[][] r = db.space().range(sub);
        return f.kv.run(tx -> tx.getRangeAsList(r[0], r[1], 0, false));
    }

    private void damage(String what, BiConsumer<Transaction, List<KeyValue>> change, long sub) {
        List<KeyValue> kvs = range(sub);
        f.kv.run(tx -> {
            change.accept(tx, kvs);
            return null;
        });
        AssertionFailedError e = assertThrows(AssertionFailedError.class, () -> Invariants.check(f.kv, f.dirs, db.name(), 0), what);
        assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
    }

    @Test
    void aMissingChangesRow() {
        damage("missing changes row", (tx, kvs) -> tx.clear(kvs.getFirst().key()), KeySpace.Db.CHANGES);
    }

    @Test
    void aDuplicateChangesRow() {
        damage("duplicate changes row", (tx, kvs) -> {
            KeyValue c = kvs.getFirst();
            byte[] k = c.key().clone();
            k[k.length - 1]++; // another user version: another sequence for the same document
            tx.set(k, c.value());
        }, KeySpace.Db.CHANGES);
    }

    @Test
    void aCounterOffByOne() {
        damage("doc_count", (tx, kvs) -> DbStats.add(tx, db, DbStats.Counter.DOC_COUNT, 1), KeySpace.Db.STATS);
    }

    @Test
    void aSizeCounterOff() {
        damage("size_active", (tx, kvs) -> DbStats.add(tx, db, DbStats.Counter.SIZE_ACTIVE, -3), KeySpace.Db.STATS);
    }

    @Test
    void anOrphanBody() {
        damage("orphan body", (tx, kvs) -> {
            byte[] p = db.space().pack(KeySpace.Db.DOCS, "d1", true, 1L, RevId.encodeHash("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
            tx.set(p, Tuple.from(0L).pack());
        }, KeySpace.Db.DOCS);
    }

    @Test
    void aLiveLeafWithoutBody() {
        damage("missing body", (tx, kvs) -> {
            for (KeyValue kv : kvs) {
                if (Tuple.fromBytes(kv.key(), db.space().prefix().length, kv.key().length - db.space().prefix().length).getString(1).equals("d1")) tx.clear(kv.key());
            }
        }, KeySpace.Db.DOCS);
    }

    @Test
    void aBodyKvChangedWithoutItsSizes() {
        damage("sizes of a body", (tx, kvs) -> tx.set(kvs.getLast().key(), Tuple.from("a longer value than before").pack()), KeySpace.Db.DOCS);
    }

    @Test
    void aLoserCarryingASequence() {
        damage("two sequences", (tx, kvs) -> {
            // the first branch of d1 is the loser: give it the winner's value
            KeyValue loser = kvs.get(0);
            KeyValue winner = kvs.get(1);
            tx.set(loser.key(), winner.value());
        }, KeySpace.Db.REVISIONS);
    }

    @Test
    void aWrongBranchCount() {
        damage("BranchCount", (tx, kvs) -> {
            KeyValue w = kvs.get(1);
            Tuple v = Tuple.fromBytes(w.value());
            Tuple bad = Tuple.from(v.get(0), v.get(1), v.get(2), 7L, v.get(4), v.get(5), v.get(6));
            tx.set(w.key(), bad.pack());
        }, KeySpace.Db.REVISIONS);
    }

    @Test
    void aByIdRowForADeletedDocument() {
        damage("BY_ID of d2", (tx, kvs) -> tx.set(db.space().pack(KeySpace.Db.BY_ID, "d2"), Tuple.from(0L, 3L, new byte[16]).pack()), KeySpace.Db.BY_ID);
    }

    @Test
    void aByIdRowWithAStaleRev() {
        damage("stale BY_ID", (tx, kvs) -> tx.set(kvs.getFirst().key(), Tuple.from(0L, 1L, RevId.encodeHash("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")).pack()), KeySpace.Db.BY_ID);
    }

    @Test
    void aKeyInAnUnknownSubspace() {
        damage("unknown subspace", (tx, kvs) -> tx.set(db.space().pack(KeySpace.Db.VIEWS, "x"), new byte[] {1}), KeySpace.Db.VIEWS);
    }

    @Test
    void theScanReadsOnlyThisDatabase() {
        f.newDb("other", 0);
        f.store.open(f.dirs.list(null, null, false, 0, 0).getLast()).update(List.of(DocUpdate.edit("z", null, false, Json.NODES.objectNode())), true);
        assertEquals(2, Invariants.check(f.kv, f.dirs, db.name(), 0).docs());
        assertTrue(Keys.compare(db.space().begin(), db.space().end()) < 0);
    }
}

package dev.chaise.storage;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvStore;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Checks a database's raw KVs, read through the seam in one transaction, against the invariants
 * that tie RFC A-D's subspaces together. It decodes every key and value with the tuple layer
 * itself rather than with the store's codecs, so it does not trust what it checks:
 * <ul>
 *   <li>REVISIONS: per document, the last branch KV in key order is the winner and is the only one
 *       with (Incarnation, Versionstamp, BranchCount); BranchCount is the number of branch KVs; no
 *       revision is a leaf twice (live and deleted) and no leaf is another branch's ancestor; with
 *       a revs limit, no branch holds more revisions than it;
 *   <li>CHANGES: each document has exactly one row (no duplicates, none for unknown documents), at
 *       the winner's Sequence, with the winner's rev, the branch count and deleted flag;
 *   <li>BY_ID: a row exactly for the documents whose winner is live, holding the winner's rev;
 *   <li>DOCS: every revision prefix belongs to a branch KV (no orphan bodies), starts with its
 *       RevisionMetadata KV, implodes to a body, and a branch's ExternalSize/ActiveSize are the
 *       body's JSON bytes and its KV bytes; live leaves always have a body, deleted ones iff they
 *       stored fields;
 *   <li>STATS: doc_count, doc_del_count, size_external and size_active equal what the scan counts;
 *   <li>PARTITIONS: in a partitioned database, each partition's four counters equal what the scan
 *       counts for the documents of that partition; a database that is not partitioned has none;
 *   <li>PURGES: PURGE_COUNT is the number of purge records.
 * </ul>
 */
public final class Invariants {
    private static final HexFormat HEX = HexFormat.of();

    /** What the scan saw, for statistics and for callers' own checks. */
    public record Report(int docs, int liveDocs, int deletedDocs, int branches, int bodies, int changesRows,
                         long sizeExternal, long sizeActive, Map<String, Change> changes) {}

    /** A decoded changes row. */
    public record Change(int incarnation, Versionstamp versionstamp, String id, RevId rev, long branchCount, boolean deleted) {}

    private record BranchKv(String id, boolean deleted, RevId leaf, List<String> ancestors, Long incarnation,
                            Versionstamp versionstamp, Long branchCount, long external, long active) {
        boolean hasSequence() {
            return incarnation != null || versionstamp != null || branchCount != null;
        }

        EditBranch branch() {
            return new EditBranch(leaf, deleted, ancestors);
        }
    }

    private Invariants() {}

    /** All invariants; {@code revsLimit} 0 skips the stemming check (e.g. after the limit was lowered). */
    public static Report check(KvStore kv, DatabaseDirectory dirs, String dbName, int revsLimit) {
        DbHandle db = dirs.open(dbName);
        List<KeyValue> all = kv.run(tx -> tx.getRangeAsList(db.space().begin(), db.space().end(), 0, false));
        return check(db, all, revsLimit);
    }

    static Report check(DbHandle db, List<KeyValue> all, int revsLimit) {
        byte[] prefix = db.space().prefix();
        // (DocID) -> branch KVs in key order
        Map<String, List<BranchKv>> branches = new TreeMap<>();
        Map<String, RevId> byId = new HashMap<>();
        List<Change> changes = new ArrayList<>();
        Map<String, Long> stats = new HashMap<>();
        Map<String, Map<String, Long>> partitionStats = new TreeMap<>();
        // revision prefix (hex of the packed tuple) -> its KVs in key order
        Map<String, List<KeyValue>> bodies = new LinkedHashMap<>();
        Map<String, Tuple> bodyOwner = new HashMap<>();
        byte[] previous = null;
        long purgeInfos = 0;
        long purgeCount = 0;
        for (KeyValue e : all) {
            assertTrue(Keys.startsWith(e.key(), prefix), "key outside the database prefix");
            if (previous != null) assertTrue(Keys.compare(previous, e.key()) < 0, "scan in key order");
            previous = e.key();
            Tuple k = Tuple.fromBytes(e.key(), prefix.length, e.key().length - prefix.length);
            long sub = k.getLong(0);
            if (sub == KeySpace.Db.META) {
                assertEquals(2, k.size(), "META key " + k);
                k.getString(1);
            } else if (sub == KeySpace.Db.DOCS) {
                assertTrue(k.size() >= 5, "DOCS key " + k);
                Tuple owner = Tuple.from(k.getString(1), k.getBoolean(2), k.getLong(3), k.getBytes(4));
                String hex = HEX.formatHex(owner.pack());
                bodies.computeIfAbsent(hex, x -> new ArrayList<>()).add(e);
                bodyOwner.put(hex, owner);
            } else if (sub == KeySpace.Db.REVISIONS) {
                assertEquals(5, k.size(), "REVISIONS key " + k);
                BranchKv b = decodeBranch(k, e.value());
                branches.computeIfAbsent(b.id(), x -> new ArrayList<>()).add(b);
            } else if (sub == KeySpace.Db.BY_ID) {
                assertEquals(2, k.size(), "BY_ID key " + k);
                Tuple v = Tuple.fromBytes(e.value());
                assertEquals(3, v.size(), "BY_ID value");
                assertEquals(0L, v.getLong(0), "BY_ID ValueFormat");
                assertNull(byId.put(k.getString(1), RevId.fromKey(v.getLong(1), v.getBytes(2))));
            } else if (sub == KeySpace.Db.CHANGES) {
                assertEquals(3, k.size(), "CHANGES key " + k);
                Tuple v = Tuple.fromBytes(e.value());
                assertEquals(6, v.size(), "CHANGES value");
                assertEquals(0L, v.getLong(0), "SeqFormat");
                changes.add(new Change((int) k.getLong(1), k.getVersionstamp(2), v.getString(1),
                        RevId.fromKey(v.getLong(2), v.getBytes(3)), v.getLong(4), !v.getBoolean(5)));
            } else if (sub == KeySpace.Db.STATS) {
                assertEquals(2, k.size(), "STATS key " + k);
                assertEquals(8, e.value().length, "counters are int64 LE");
                stats.put(k.getString(1), ByteBuffer.wrap(e.value()).order(ByteOrder.LITTLE_ENDIAN).getLong());
            } else if (sub == KeySpace.Db.PARTITIONS) {
                assertTrue(db.partitioned(), "PARTITIONS key in a database that is not partitioned: " + k);
                assertEquals(3, k.size(), "PARTITIONS key " + k);
                assertEquals(8, e.value().length, "counters are int64 LE");
                partitionStats.computeIfAbsent(k.getString(1), x -> new HashMap<>())
                        .put(k.getString(2), ByteBuffer.wrap(e.value()).order(ByteOrder.LITTLE_ENDIAN).getLong());
            } else if (sub == KeySpace.Db.LOCAL) {
                k.getString(1);
            } else if (sub == KeySpace.Db.PURGES) {
                long kind = k.getLong(1);
                if (kind == KeySpace.Purges.PURGE_INFO) {
                    assertEquals(4, k.size(), "PURGE_INFO key " + k);
                    assertTrue(k.getVersionstamp(3).isComplete(), "PURGE_INFO versionstamp");
                    Tuple v = Tuple.fromBytes(e.value());
                    v.getString(0);
                    v.getNestedTuple(1);
                    purgeInfos++;
                } else if (kind == KeySpace.Purges.PURGE_COUNT) {
                    purgeCount = ByteBuffer.wrap(e.value()).order(ByteOrder.LITTLE_ENDIAN).getLong();
                } else {
                    assertEquals(KeySpace.Purges.PURGE_LIMIT, kind, "PURGES key " + k);
                }
            } else {
                fail("unexpected subspace " + sub + " in key " + k);
            }
        }

        // ---- REVISIONS, per document
        int live = 0;
        int deletedDocs = 0;
        int branchCount = 0;
        long external = 0;
        long active = 0;
        Map<String, BranchKv> winners = new HashMap<>();
        Map<String, BranchKv> branchByOwner = new HashMap<>();
        Map<String, Map<String, Long>> partitionScan = new TreeMap<>();
        for (Map.Entry<String, List<BranchKv>> d : branches.entrySet()) {
            String id = d.getKey();
            List<BranchKv> bs = d.getValue();
            String ctx = "doc " + id + " " + bs;
            BranchKv w = bs.getLast();
            winners.put(id, w);
            assertTrue(w.hasSequence(), "the last branch KV is the winner and carries the Sequence: " + ctx);
            assertNotNull(w.incarnation(), ctx);
            assertNotNull(w.versionstamp(), ctx);
            assertTrue(w.versionstamp().isComplete(), ctx);
            assertEquals(db.incarnation(), w.incarnation().intValue(), ctx);
            assertEquals((long) bs.size(), w.branchCount(), "BranchCount: " + ctx);
            for (int i = 0; i < bs.size() - 1; i++) assertFalse(bs.get(i).hasSequence(), "only the winner has a Sequence: " + ctx);
            Set<RevId> leaves = new HashSet<>();
            for (BranchKv b : bs) {
                assertTrue(leaves.add(b.leaf()), "a revision is a leaf once: " + ctx);
                if (revsLimit > 0) assertTrue(b.ancestors().size() <= revsLimit - 1, "stemmed to " + revsLimit + ": " + ctx);
            }
            for (BranchKv b : bs) {
                EditBranch eb = b.branch();
                for (RevId l : leaves) assertFalse(eb.hasAncestor(l), "leaf " + l + " is inside " + eb + ": " + ctx);
                branchByOwner.put(HEX.formatHex(Tuple.from(id, !b.deleted(), b.leaf().pos(), b.leaf().hashBytes()).pack()), b);
                external += b.external();
                active += b.active();
            }
            branchCount += bs.size();
            if (w.deleted()) deletedDocs++;
            else live++;
            String partition = db.partitioned() ? Partitions.of(id) : null;
            if (partition != null) {
                Map<String, Long> c = partitionScan.computeIfAbsent(partition, x -> new HashMap<>());
                c.merge(w.deleted() ? "doc_del_count" : "doc_count", 1L, Long::sum);
                for (BranchKv b : bs) {
                    c.merge("size_external", b.external(), Long::sum);
                    c.merge("size_active", b.active(), Long::sum);
                }
            }

            RevId row = byId.get(id);
            if (w.deleted()) assertNull(row, "no BY_ID row for a deleted document: " + ctx);
            else assertEquals(w.leaf(), row, "BY_ID holds the winner: " + ctx);
        }
        for (String id : byId.keySet()) assertTrue(branches.containsKey(id), "BY_ID row without revisions: " + id);

        // ---- CHANGES: one row per document, at the winner's sequence
        Map<String, Change> changeById = new HashMap<>();
        for (Change c : changes) {
            assertNull(changeById.put(c.id(), c), "duplicate changes row for " + c.id() + ": " + changes);
            BranchKv w = winners.get(c.id());
            assertNotNull(w, "changes row for a document without revisions: " + c);
            assertEquals(w.incarnation().intValue(), c.incarnation(), "changes key incarnation " + c.id());
            assertEquals(w.versionstamp(), c.versionstamp(), "the winner's Sequence is the changes key: " + c.id());
            assertEquals(w.leaf(), c.rev(), "changes rev " + c.id());
            assertEquals(w.branchCount().longValue(), c.branchCount(), "changes BranchCount " + c.id());
            assertEquals(w.deleted(), c.deleted(), "changes deleted " + c.id());
        }
        assertEquals(branches.keySet(), changeById.keySet(), "every document has a changes row");

        // ---- DOCS: bodies belong to branches, and sizes add up
        Set<String> withBody = new HashSet<>();
        for (Map.Entry<String, List<KeyValue>> e : bodies.entrySet()) {
            Tuple owner = bodyOwner.get(e.getKey());
            BranchKv b = branchByOwner.get(e.getKey());
            assertNotNull(b, "orphan body KVs of " + owner + " (no branch with that leaf)");
            List<KeyValue> kvs = e.getValue();
            byte[] revPrefix = Keys.concat(prefix, Tuple.from(KeySpace.Db.DOCS).addAll(owner).pack());
            assertArrayEquals(revPrefix, kvs.getFirst().key(), "a body starts with its RevisionMetadata KV: " + owner);
            assertEquals(Tuple.from(0L), Tuple.fromBytes(kvs.getFirst().value()), "RevisionMetadata: " + owner);
            long kvBytes = 0;
            for (KeyValue kv : kvs) kvBytes += kv.key().length + kv.value().length;
            ObjectNode body = ExplodedJson.implode(revPrefix, kvs.iterator());
            assertEquals(b.active(), kvBytes, "ActiveSize of " + owner);
            assertEquals(b.external(), ExplodedJson.externalSize(body), "ExternalSize of " + owner + ": " + body);
            withBody.add(e.getKey());
        }
        for (Map.Entry<String, BranchKv> e : branchByOwner.entrySet()) {
            BranchKv b = e.getValue();
            boolean has = withBody.contains(e.getKey());
            if (!b.deleted()) assertTrue(has, "a live leaf has a body: " + b);
            else assertEquals(b.external() > 0, has, "a deleted leaf has a body iff it stored fields: " + b);
            if (!has) {
                assertEquals(0, b.external(), "sizes of a leaf without body: " + b);
                assertEquals(0, b.active(), "sizes of a leaf without body: " + b);
            }
        }

        // ---- PURGES: the count is the records kept
        assertEquals(purgeInfos, purgeCount, "PURGE_COUNT is the number of PURGE_INFO records");

        // ---- STATS
        assertEquals(live, stats.getOrDefault("doc_count", 0L), "doc_count");
        assertEquals(deletedDocs, stats.getOrDefault("doc_del_count", 0L), "doc_del_count");
        assertEquals(external, stats.getOrDefault("size_external", 0L), "size_external");
        assertEquals(active, stats.getOrDefault("size_active", 0L), "size_active");
        assertEquals(live, byId.size(), "BY_ID rows");

        // ---- PARTITIONS: a counter at zero may be kept or not
        Set<String> partitions = new TreeSet<>(partitionScan.keySet());
        partitions.addAll(partitionStats.keySet());
        for (String p : partitions) {
            for (String c : List.of("doc_count", "doc_del_count", "size_external", "size_active")) {
                assertEquals(partitionScan.getOrDefault(p, Map.of()).getOrDefault(c, 0L), partitionStats.getOrDefault(p, Map.of()).getOrDefault(c, 0L),
                        "partition " + p + " " + c);
            }
        }
        return new Report(branches.size(), live, deletedDocs, branchCount, bodies.size(), changes.size(), external, active, changeById);
    }

    private static BranchKv decodeBranch(Tuple k, byte[] value) {
        String id = k.getString(1);
        boolean deleted = !k.getBoolean(2);
        RevId leaf = RevId.fromKey(k.getLong(3), k.getBytes(4));
        Tuple v = Tuple.fromBytes(value);
        assertEquals(7, v.size(), "branch value " + v);
        assertEquals(0L, v.getLong(0), "RevFormat");
        Tuple anc = v.getNestedTuple(4);
        List<String> ancestors = new ArrayList<>(anc.size());
        for (int i = 0; i < anc.size(); i++) ancestors.add(RevId.decodeHash(anc.getBytes(i)));
        Long inc = v.get(1) == null ? null : v.getLong(1);
        Versionstamp vs = v.get(2) == null ? null : v.getVersionstamp(2);
        Long count = v.get(3) == null ? null : v.getLong(3);
        return new BranchKv(id, deleted, leaf, ancestors, inc, vs, count, v.getLong(5), v.getLong(6));
    }
}

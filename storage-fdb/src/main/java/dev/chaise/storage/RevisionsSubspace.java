package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.TupleBytes;
import dev.chaise.kv.Versionstamps;
import java.util.ArrayList;
import java.util.List;

/**
 * RFC C: one KV per edit branch, keyed so the winner sorts last.
 *
 * <pre>
 * (1, DbId, 2 REVISIONS, DocID, NotDeleted, RevPos, RevHash)
 *     winner = (RevFormat, Incarnation, Versionstamp, BranchCount, (Ancestors...), ExternalSize, ActiveSize)
 *     other  = (RevFormat, null,        null,         null,        (Ancestors...), ExternalSize, ActiveSize)
 * </pre>
 *
 * The winner's Incarnation and Versionstamp form the document's Sequence (RFC D), written with
 * {@code set_versionstamped_value}. Ancestors are RevHash bytes, parent first. The two sizes are
 * those of the leaf's stored body, so a write can compute RFC B's size deltas without reading
 * the body. RevHash is {@link RevId#hashBytes()}: 16 raw bytes for CouchDB's 32-hex hashes.
 */
public final class RevisionsSubspace {
    static final long FORMAT = 0;

    /** A stored edit branch: the branch, and for the winner the document's sequence and branch count. */
    public record Branch(EditBranch branch, Sequence sequence, int branchCount, long externalSize, long activeSize) {
        public boolean isWinnerRecord() {
            return sequence != null;
        }
    }

    private RevisionsSubspace() {}

    static byte[] key(DbHandle db, String docId, EditBranch b) {
        return key(db, docId, b.leaf(), !b.deleted());
    }

    static byte[] key(DbHandle db, String docId, RevId leaf, boolean notDeleted) {
        return db.space().pack(KeySpace.Db.REVISIONS, docId, notDeleted, leaf.pos(), leaf.hashBytes());
    }

    /** The branch whose leaf is {@code leaf} and is live, or null. */
    static Branch getLive(ReadTransaction tx, DbHandle db, String docId, RevId leaf) {
        byte[] v = tx.get(key(db, docId, leaf, true));
        return v == null ? null : decode(leaf, false, v);
    }

    static Branch get(ReadTransaction tx, DbHandle db, String docId, RevId leaf, boolean deleted) {
        byte[] v = tx.get(key(db, docId, leaf, !deleted));
        return v == null ? null : decode(leaf, deleted, v);
    }

    /** The last {@code n} branches in key order, winner first; one range read. */
    static List<Branch> lastBranches(ReadTransaction tx, DbHandle db, String docId, int n) {
        byte[][] r = db.space().range(KeySpace.Db.REVISIONS, docId);
        List<Branch> out = new ArrayList<>(n);
        try (var it = tx.getRange(r[0], r[1], n, true)) {
            while (it.hasNext()) out.add(decode(db, it.next()));
        }
        return out;
    }

    /** Every branch, in key order (winner last). */
    public static List<Branch> all(ReadTransaction tx, DbHandle db, String docId) {
        byte[][] r = db.space().range(KeySpace.Db.REVISIONS, docId);
        List<Branch> out = new ArrayList<>();
        try (var it = tx.getRange(r[0], r[1], 0, false)) {
            while (it.hasNext()) out.add(decode(db, it.next()));
        }
        return out;
    }

    /**
     * As {@link #all}, without the live branch {@code leaf}: for a reader in the transaction that
     * just wrote that winner, whose key holds a versionstamp and is unreadable until commit (FDB's
     * 1036). Two range reads, around its key.
     */
    static List<Branch> allBut(ReadTransaction tx, DbHandle db, String docId, RevId leaf) {
        byte[][] r = db.space().range(KeySpace.Db.REVISIONS, docId);
        byte[] skip = key(db, docId, leaf, true);
        List<Branch> out = new ArrayList<>();
        for (byte[][] part : List.of(new byte[][] {r[0], skip}, new byte[][] {dev.chaise.kv.Keys.keyAfter(skip), r[1]})) {
            try (var it = tx.getRange(part[0], part[1], 0, false)) {
                while (it.hasNext()) out.add(decode(db, it.next()));
            }
        }
        return out;
    }

    /**
     * For each document, {@link #lastBranches} ({@code n > 0}) or {@link #all} ({@code n == 0}),
     * in one batched read: a bulk write reads every document of its batch this way.
     */
    static List<List<Branch>> branchesOfEach(ReadTransaction tx, DbHandle db, List<String> docIds, int n) {
        List<byte[][]> ranges = new ArrayList<>(docIds.size());
        for (String id : docIds) ranges.add(db.space().range(KeySpace.Db.REVISIONS, id));
        List<List<Branch>> out = new ArrayList<>(docIds.size());
        for (List<KeyValue> rows : tx.getRanges(ranges, n, n > 0)) {
            List<Branch> branches = new ArrayList<>(rows.size());
            for (KeyValue kv : rows) branches.add(decode(db, kv));
            out.add(branches);
        }
        return out;
    }

    /** Rows a span read may hold beyond one per document before it gives way to a read per document. */
    static final int SPAN_SLACK = 16;

    /**
     * Each document's last branch ({@link #lastBranches} with 1, winner first) for a write
     * transaction. First one snapshot read over the span from the first document's range to the
     * last's: a bulk load of new documents with increasing ids finds that span empty, and answers
     * every document with one seek rather than one each, a seek that searched the memtable and
     * every level for each document. Each document's range is then a read-conflict range, as its
     * own read would have made it (a conflict on its whole range instead of from its last branch
     * on: any write of a branch rewrites the winner, which is last). Where other documents' rows
     * lie between (more than {@link #SPAN_SLACK} beyond one per document), the documents are read
     * each by itself, as {@link #branchesOfEach}.
     *
     * @param docIds distinct, each of a key within the limit
     */
    static List<List<Branch>> lastBranchOfEach(Transaction tx, DbHandle db, List<String> docIds) {
        int count = docIds.size();
        byte[][][] ranges = new byte[count][][];
        Integer[] order = new Integer[count];
        for (int i = 0; i < count; i++) {
            ranges[i] = db.space().range(KeySpace.Db.REVISIONS, docIds.get(i));
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> Keys.compare(ranges[a][0], ranges[b][0]));
        int limit = count + SPAN_SLACK;
        List<KeyValue> rows = tx.snapshot().getRangeAsList(ranges[order[0]][0], ranges[order[count - 1]][1], limit + 1, false);
        if (rows.size() > limit) return branchesOfEach(tx, db, docIds, 1);
        KeyValue[] last = new KeyValue[count];
        int j = 0; // ranges are disjoint (an id's tuple string is prefix-free), so each row is in at most one
        for (KeyValue kv : rows) {
            while (j < count && Keys.compare(kv.key(), ranges[order[j]][1]) >= 0) j++;
            if (j == count) break;
            if (Keys.compare(kv.key(), ranges[order[j]][0]) >= 0) last[order[j]] = kv; // rows come in key order: the last is the winner
        }
        for (byte[][] r : ranges) tx.addReadConflictRange(r[0], r[1]);
        List<List<Branch>> out = new ArrayList<>(count);
        for (KeyValue kv : last) out.add(kv == null ? List.of() : List.of(decode(db, kv)));
        return out;
    }

    static Branch decode(DbHandle db, KeyValue kv) {
        Tuple k = db.space().unpack(kv.key());
        // (REVISIONS, DocID, NotDeleted, RevPos, RevHash)
        RevId leaf = RevId.fromKey(k.getLong(3), k.getBytes(4));
        return decode(leaf, !k.getBoolean(2), kv.value());
    }

    static Branch decode(RevId leaf, boolean deleted, byte[] value) {
        Tuple v = Tuple.fromBytes(value);
        if (v.getLong(0) != FORMAT) throw new IllegalStateException("unknown revision format " + v.getLong(0));
        Sequence seq = v.get(1) == null ? null : new Sequence((int) v.getLong(1), v.getVersionstamp(2));
        int count = v.get(3) == null ? 0 : (int) v.getLong(3);
        Tuple anc = v.getNestedTuple(4);
        List<String> ancestors = new ArrayList<>(anc.size());
        for (int i = 0; i < anc.size(); i++) ancestors.add(RevId.decodeHash(anc.getBytes(i)));
        return new Branch(new EditBranch(leaf, deleted, ancestors), seq, count, v.getLong(5), v.getLong(6));
    }

    private static Tuple ancestors(EditBranch b) {
        List<Object> hashes = new ArrayList<>(b.ancestors().size());
        for (String h : b.ancestors()) hashes.add(RevId.encodeHash(h));
        return Tuple.fromList(hashes);
    }

    /** Writes the winner: its value carries this commit's sequence (user version {@code userVersion}). */
    static void writeWinner(Transaction tx, DbHandle db, String docId, EditBranch b, int branchCount, long ext, long active, int userVersion) {
        Tuple v = Tuple.from(FORMAT, (long) db.incarnation(), Versionstamp.incomplete(userVersion), (long) branchCount, ancestors(b), ext, active);
        tx.setVersionstampedValue(key(db, docId, b), Versionstamps.packWithVersionstamp(new byte[0], v));
    }

    static void writeOther(Transaction tx, DbHandle db, String docId, EditBranch b, long ext, long active) {
        tx.set(key(db, docId, b), TupleBytes.pack(FORMAT, null, null, null, ancestors(b), ext, active));
    }

    static void clear(Transaction tx, DbHandle db, String docId, EditBranch b) {
        tx.clear(key(db, docId, b));
    }
}

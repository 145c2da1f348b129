package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import dev.chaise.kv.KeySelector;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.TupleBytes;
import dev.chaise.kv.Versionstamps;

/**
 * RFC D: the changes feed, one key per document at the sequence of its last change.
 *
 * <pre>
 * (1, DbId, 4 CHANGES, Incarnation, Versionstamp) = (SeqFormat, DocID, RevPos, RevHash, BranchCount, NotDeleted)
 * </pre>
 *
 * A write clears the document's previous row (found through the winner's Sequence in the
 * revisions subspace) and adds one with {@code set_versionstamped_key}; no reads here. The
 * database's update_seq is the last key (a {@code last_less_than} selector).
 */
public final class ChangesSubspace {
    static final long FORMAT = 0;

    private ChangesSubspace() {}

    static byte[] key(DbHandle db, Sequence seq) {
        return db.space().pack(KeySpace.Db.CHANGES, (long) seq.incarnation(), seq.versionstamp());
    }

    static void add(Transaction tx, DbHandle db, String docId, RevId winner, int branchCount, boolean deleted, int userVersion) {
        Tuple k = Tuple.from(KeySpace.Db.CHANGES, (long) db.incarnation(), Versionstamp.incomplete(userVersion));
        tx.nextWriteNoWriteConflictRange(); // the revision KV serializes writers; feeds read snapshots
        tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(db.space().prefix(), k),
                TupleBytes.pack(FORMAT, docId, winner.pos(), winner.hashBytes(), (long) branchCount, !deleted));
    }

    static void remove(Transaction tx, DbHandle db, Sequence seq) {
        tx.nextWriteNoWriteConflictRange();
        tx.clear(key(db, seq));
    }

    static byte[][] range(DbHandle db) {
        return db.space().range(KeySpace.Db.CHANGES);
    }

    /** What a changes cursor's continuations are relative to: they are then (Incarnation, Versionstamp), a {@link Sequence}. */
    static byte[] prefix(DbHandle db) {
        return db.space().pack(KeySpace.Db.CHANGES);
    }

    /** The first key after {@code since} (exclusive), or the start of the feed for null. */
    static byte[] after(DbHandle db, Sequence since) {
        return since == null ? range(db)[0] : Keys.keyAfter(key(db, since));
    }

    /** The tuple layer's type code of a 96-bit versionstamp, the last element of a key here, and its length. */
    private static final byte VERSIONSTAMP_CODE = 0x33;
    private static final int VERSIONSTAMP_BYTES = 12;

    /**
     * A row of the feed. Read with {@link TupleBytes#decodeSimple}, the versionstamp's bytes taken
     * as they are: through {@link Tuple} this was a sixth of a {@code _changes} response's CPU
     * (issue 27). A row of any other shape goes through {@link Tuple}.
     */
    static Change decode(DbHandle db, KeyValue kv) {
        Change simple = decodeSimple(db, kv.key(), kv.value());
        if (simple != null) return simple;
        Tuple k = db.space().unpack(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        Sequence seq = new Sequence((int) k.getLong(1), k.getVersionstamp(2));
        return new Change(seq, v.getString(1), RevId.fromKey(v.getLong(2), v.getBytes(3)), (int) v.getLong(4), !v.getBoolean(5));
    }

    /** {@link #decode}'s fast path: null unless the key is (CHANGES, Incarnation, Versionstamp) and the value RFC D's six elements. */
    private static Change decodeSimple(DbHandle db, byte[] key, byte[] value) {
        int stamp = key.length - VERSIONSTAMP_BYTES;
        java.util.List<Object> k = new java.util.ArrayList<>(2);
        if (stamp < 1 || key[stamp - 1] != VERSIONSTAMP_CODE || !TupleBytes.decodeSimple(key, db.space().prefix().length, stamp - 1, k)
                || k.size() != 2 || !(k.get(1) instanceof Long incarnation)) {
            return null;
        }
        java.util.List<Object> v = new java.util.ArrayList<>(6);
        if (!TupleBytes.decodeSimple(value, 0, value.length, v) || v.size() != 6) return null;
        if (v.get(1) instanceof String id && v.get(2) instanceof Long pos && v.get(3) instanceof byte[] hash
                && v.get(4) instanceof Long branches && v.get(5) instanceof Boolean notDeleted) {
            Sequence seq = new Sequence(incarnation.intValue(), Versionstamp.fromBytes(java.util.Arrays.copyOfRange(key, stamp, key.length)));
            return new Change(seq, id, RevId.fromKey(pos, hash), branches.intValue(), !notDeleted);
        }
        return null;
    }

    /** The database's update_seq: the last change's sequence, or null for an empty feed. One key selector read. */
    static Sequence lastSequence(ReadTransaction tx, DbHandle db) {
        byte[][] r = range(db);
        byte[] k = tx.getKey(KeySelector.lastLessThan(r[1]));
        if (Keys.compare(k, r[0]) < 0) return null;
        Tuple t = db.space().unpack(k);
        return new Sequence((int) t.getLong(1), t.getVersionstamp(2));
    }

    /** Changes after {@code after} and up to {@code through} (null: that end open), counted up to {@code cap}. */
    static long count(ReadTransaction tx, DbHandle db, Sequence after, Sequence through, long cap) {
        byte[][] r = range(db);
        byte[] lo = after == null ? r[0] : after(db, after);
        byte[] hi = through == null ? r[1] : after(db, through);
        if (Keys.compare(lo, hi) >= 0) return 0;
        long n = 0;
        try (var it = tx.getRange(lo, hi, (int) Math.min(cap + 1, Integer.MAX_VALUE), false)) {
            while (it.hasNext() && n < cap) {
                it.next();
                n++;
            }
        }
        return n;
    }
}

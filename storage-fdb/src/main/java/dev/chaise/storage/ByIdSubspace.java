package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.rev.RevId;

/**
 * RFC B: one key per live document, for {@code _all_docs}. Written blind on every update (the
 * revisions subspace already serializes writers of one document).
 *
 * <pre>
 * (1, DbId, 3 BY_ID, DocID) = (ValueFormat, RevPos, RevHash)
 * </pre>
 */
public final class ByIdSubspace {
    static final long FORMAT = 0;

    public record Row(String id, RevId rev) {}

    private ByIdSubspace() {}

    static byte[] key(DbHandle db, String docId) {
        return db.space().pack(DatabaseSubspace.BY_ID, docId);
    }

    static void set(Transaction tx, DbHandle db, String docId, RevId winner) {
        tx.nextWriteNoWriteConflictRange(); // blind, as the RFC says
        tx.set(key(db, docId), Tuple.from(FORMAT, winner.pos(), winner.hashBytes()).pack());
    }

    static void clear(Transaction tx, DbHandle db, String docId) {
        tx.nextWriteNoWriteConflictRange();
        tx.clear(key(db, docId));
    }

    /** The range of every document id from {@code begin} (inclusive) to {@code end} (exclusive); null means open. */
    public static byte[][] range(DbHandle db) {
        return db.space().range(DatabaseSubspace.BY_ID);
    }

    public static Row decode(DbHandle db, KeyValue kv) {
        String id = db.space().unpack(kv.key()).getString(1);
        Tuple v = Tuple.fromBytes(kv.value());
        return new Row(id, RevId.fromKey(v.getLong(1), v.getBytes(2)));
    }
}

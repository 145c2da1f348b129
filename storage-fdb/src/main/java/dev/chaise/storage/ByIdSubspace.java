package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.TupleBytes;

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

    private ByIdSubspace() {}

    static byte[] key(DbHandle db, String docId) {
        return db.space().pack(KeySpace.Db.BY_ID, docId);
    }

    static void set(Transaction tx, DbHandle db, String docId, RevId winner) {
        tx.nextWriteNoWriteConflictRange(); // blind, as the RFC says
        tx.set(key(db, docId), TupleBytes.pack(FORMAT, winner.pos(), winner.hashBytes()));
        if (docId.startsWith(DocumentJson.DESIGN_PREFIX)) DatabaseDirectory.designChanged(tx, db);
    }

    static void clear(Transaction tx, DbHandle db, String docId) {
        tx.nextWriteNoWriteConflictRange();
        tx.clear(key(db, docId));
        if (docId.startsWith(DocumentJson.DESIGN_PREFIX)) DatabaseDirectory.designChanged(tx, db);
    }

    /** Every document id. */
    static byte[][] range(DbHandle db) {
        return db.space().range(KeySpace.Db.BY_ID);
    }

    static DocInfo decode(DbHandle db, KeyValue kv) {
        String id = db.space().unpack(kv.key()).getString(1);
        Tuple v = Tuple.fromBytes(kv.value());
        return new DocInfo(id, RevId.fromKey(v.getLong(1), v.getBytes(2)), false);
    }
}

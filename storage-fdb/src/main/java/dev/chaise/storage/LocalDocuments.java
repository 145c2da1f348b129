package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import java.util.List;

/**
 * {@code _local} documents: no revision tree, no changes row, revisions {@code 0-N} as in CouchDB.
 *
 * <pre>
 * (1, DbId, 6 LOCAL, DocID) = (Format, N)
 * (1, DbId, 6 LOCAL, DocID, Path...) = Leaf     see ExplodedJson
 * </pre>
 */
public final class LocalDocuments {
    static final long FORMAT = 0;

    private LocalDocuments() {}

    static byte[] prefix(DbHandle db, String docId) {
        return db.space().pack(KeySpace.Db.LOCAL, docId);
    }

    static LocalDoc read(ReadTransaction tx, DbHandle db, String docId) {
        byte[] prefix = prefix(db, docId);
        try (var it = tx.getRange(prefix, DocumentBodies.end(prefix), 0, false)) {
            if (!it.hasNext()) return null;
            KeyValue first = it.next();
            long n = Tuple.fromBytes(first.value()).getLong(1);
            return new LocalDoc(docId, n, ExplodedJson.implode(prefix, it));
        }
    }

    /**
     * Writes a new revision only if {@code baseRev} is the current one (null, "0" or "0-0" for a
     * new document): a compare-and-set for internal writers. Clients' writes check nothing, as in
     * CouchDB ({@link #overwrite}). Returns the new revision.
     */
    static LocalDoc write(Transaction tx, DbHandle db, String docId, String baseRev, boolean deleted, ObjectNode body) {
        byte[] prefix = prefix(db, docId);
        byte[] cur = tx.get(prefix);
        long n = cur == null ? 0 : Tuple.fromBytes(cur).getLong(1);
        if (cur != null && (baseRev == null || !baseRev.equals("0-" + n))) throw StorageException.conflict();
        if (cur == null && baseRev != null && !baseRev.equals("0") && !baseRev.equals("0-0")) {
            if (deleted) throw StorageException.notFound("missing");
            throw StorageException.conflict();
        }
        if (deleted && cur == null) throw StorageException.notFound("missing");
        return overwrite(tx, db, docId, n + 1, deleted, body);
    }

    /** CouchDB's next revision number for a write naming {@code clientRev} ({@code 0-N} or null): N + 1, or 1. */
    static long nextRevNumber(String clientRev) {
        if (clientRev == null) return 1;
        int dash = clientRev.indexOf('-');
        try {
            long n = Long.parseLong(dash < 0 ? clientRev : clientRev.substring(dash + 1));
            if (n < 0 || n == Long.MAX_VALUE) throw StorageException.badRequest(RevId.INVALID);
            return n + 1;
        } catch (NumberFormatException e) {
            throw StorageException.badRequest(RevId.INVALID);
        }
    }

    /** Replaces the document whatever is stored: revision {@code n}, or nothing for a deletion. */
    static LocalDoc overwrite(Transaction tx, DbHandle db, String docId, long n, boolean deleted, ObjectNode body) {
        byte[] prefix = prefix(db, docId);
        List<KeyValue> kvs = deleted ? List.of() : ExplodedJson.explode(prefix, body);
        tx.clear(prefix, DocumentBodies.end(prefix));
        if (deleted) return new LocalDoc(docId, 0, body);
        tx.set(prefix, Tuple.from(FORMAT, n).pack());
        for (KeyValue kv : kvs) tx.set(kv.key(), kv.value());
        return new LocalDoc(docId, n, body);
    }

    /** A row of the LOCAL range as {@code _local_docs} lists it: the document's own key, not its body's KVs (null for those). */
    static LocalDoc decodeRow(DbReader reader, KeyValue row, boolean includeBodies) {
        Tuple t = reader.handle().space().unpack(row.key());
        if (t.size() != 2) return null;
        String id = t.getString(1);
        return includeBodies ? reader.local(id) : new LocalDoc(id, Tuple.fromBytes(row.value()).getLong(1), null);
    }
}

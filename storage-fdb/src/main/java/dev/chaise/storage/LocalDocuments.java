package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.json.ExplodedJson;
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
     * Writes a new revision: {@code baseRev} must be the current one (null, "0" or "0-0" for a new
     * document), as CouchDB checks for local documents. Returns the new revision.
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
        List<KeyValue> kvs = deleted ? List.of() : ExplodedJson.explode(prefix, body);
        tx.clear(prefix, DocumentBodies.end(prefix));
        if (deleted) {
            if (cur == null) throw StorageException.notFound("missing");
            return new LocalDoc(docId, 0, body);
        }
        tx.set(prefix, Tuple.from(FORMAT, n + 1).pack());
        for (KeyValue kv : kvs) tx.set(kv.key(), kv.value());
        return new LocalDoc(docId, n + 1, body);
    }

    /** A row of the LOCAL range as {@code _local_docs} lists it: the document's own key, not its body's KVs (null for those). */
    static LocalDoc decodeRow(DbReader reader, KeyValue row, boolean includeBodies) {
        Tuple t = reader.handle().space().unpack(row.key());
        if (t.size() != 2) return null;
        String id = t.getString(1);
        return includeBodies ? reader.local(id) : new LocalDoc(id, Tuple.fromBytes(row.value()).getLong(1), null);
    }
}

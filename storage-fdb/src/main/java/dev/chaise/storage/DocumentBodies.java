package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import java.util.ArrayList;
import java.util.List;

/**
 * RFC A: each leaf revision's body, exploded into one KV per JSON leaf.
 *
 * <pre>
 * (1, DbId, 1 DOCS, DocID, NotDeleted, RevPos, RevHash) = (RevFormat)     RevisionMetadata
 * (1, DbId, 1 DOCS, DocID, NotDeleted, RevPos, RevHash, Path...) = Leaf  see ExplodedJson
 * </pre>
 *
 * Only leaf revisions keep a body. A deletion without fields stores nothing here, as the RFC
 * says; one with fields stores them under NotDeleted = false. Writes here add no write-conflict
 * ranges: the document's revision KV already serializes its writers.
 */
public final class DocumentBodies {
    static final long FORMAT = 0;
    /** A body's KV bytes, at most: leaves room in a 10 MB transaction for the rest of the write. */
    static final long MAX_KV_BYTES = 8_000_000;

    /** Sizes of a stored body: JSON bytes and KV bytes (RFC B). */
    public record Sizes(long external, long active) {
        public static final Sizes NONE = new Sizes(0, 0);
    }

    private DocumentBodies() {}

    static byte[] prefix(DbHandle db, String docId, RevId rev, boolean deleted) {
        return db.space().pack(KeySpace.Db.DOCS, docId, !deleted, rev.pos(), rev.hashBytes());
    }

    /**
     * The longest prefix a new revision at {@code pos} can have: its hash is not known until its
     * leaves are, and 16 hash bytes take at most 34 as a tuple byte string (each 00 escaped).
     * Checking paths against it makes the key limit independent of the hash.
     */
    static int longestPrefix(DbHandle db, String docId, long pos, boolean deleted) {
        return db.space().pack(KeySpace.Db.DOCS, docId, !deleted, pos).length + 34;
    }

    private static final byte[] META = Tuple.from(FORMAT).pack();

    /** A body exploded and checked, ready to write. */
    record Prepared(byte[] prefix, ExplodedJson.Leaves leaves, long externalSize) {
        Sizes write(Transaction tx) {
            if (prefix == null) return Sizes.NONE;
            List<KeyValue> kvs = new ArrayList<>(leaves.size() + 1);
            kvs.add(new KeyValue(prefix, META));
            kvs.addAll(leaves.withPrefix(prefix));
            tx.nextWriteNoWriteConflictRange();
            tx.setAll(kvs);
            return new Sizes(externalSize, leaves.activeSize(prefix.length) + prefix.length + META.length);
        }
    }

    /**
     * Checks the body's leaves and returns them ready to write; a bare deletion stores nothing.
     * {@code leaves} are the body's, exploded for the revision's hash, or null to explode here.
     */
    static Prepared prepare(DbHandle db, String docId, RevId rev, boolean deleted, ObjectNode body, ExplodedJson.Leaves leaves, long externalSize) {
        if (deleted && body.isEmpty()) return new Prepared(null, ExplodedJson.Leaves.NONE, 0);
        byte[] prefix = prefix(db, docId, rev, deleted);
        ExplodedJson.Leaves l = leaves != null ? leaves : ExplodedJson.explode(prefix.length, body);
        // Under the JSON size limit a body of many small fields can still need more KV bytes than
        // one FDB transaction takes (10 MB); refuse it here, before anything is written.
        if (l.activeSize(prefix.length) > MAX_KV_BYTES) {
            throw new StorageException(StorageException.Kind.DOCUMENT_TOO_LARGE,
                    "Document is too large to store: its fields need more than " + MAX_KV_BYTES + " bytes of keys and values");
        }
        return new Prepared(prefix, l, externalSize);
    }

    /** The end of a body's keys: {@link DatabaseSubspace#subtreeEnd}. */
    static byte[] end(byte[] prefix) {
        return DatabaseSubspace.subtreeEnd(prefix);
    }

    static void clear(Transaction tx, DbHandle db, String docId, RevId rev, boolean deleted) {
        byte[] prefix = prefix(db, docId, rev, deleted);
        tx.nextWriteNoWriteConflictRange();
        tx.clear(prefix, end(prefix));
    }

    /**
     * Only the named top-level members of the body (RFC A keeps each member's leaves under one key
     * prefix): one range per member, read together. Members the body lacks are left out.
     */
    static ObjectNode readMembers(ReadTransaction tx, DbHandle db, String docId, RevId rev, boolean deleted, java.util.Collection<String> members) {
        byte[] prefix = prefix(db, docId, rev, deleted);
        List<byte[][]> ranges = memberRanges(prefix, members);
        List<KeyValue> kvs = new ArrayList<>();
        for (List<KeyValue> part : tx.getRanges(ranges, 0, false)) kvs.addAll(part);
        return ExplodedJson.implode(prefix, kvs.iterator());
    }

    /** The ranges of a body's top-level {@code members}, in key order (as implode reads them); names no body can hold are left out. */
    static List<byte[][]> memberRanges(byte[] prefix, java.util.Collection<String> members) {
        List<byte[][]> ranges = new ArrayList<>(members.size());
        for (String m : members) {
            if (!dev.chaise.kv.TupleBytes.wellFormed(m)) continue; // no stored body has such a name
            byte[] key = Keys.concat(prefix, dev.chaise.kv.TupleBytes.wellFormedString(m));
            ranges.add(new byte[][] {key, end(key)});
        }
        ranges.sort((a, b) -> Keys.compare(a[0], b[0]));
        return ranges;
    }

    /** The body, or null if none is stored (a non-leaf revision, or a bare deletion). One range read. */
    static ObjectNode read(ReadTransaction tx, DbHandle db, String docId, RevId rev, boolean deleted) {
        byte[] prefix = prefix(db, docId, rev, deleted);
        try (var it = tx.getRange(prefix, end(prefix), 0, false)) {
            if (!it.hasNext()) return null;
            return ExplodedJson.implode(prefix, it);
        }
    }
}

package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A per-document access database's listings by principal (a user or role name that a document's
 * {@code _access} names, {@link AccessRules}): what one user's {@code _all_docs} and
 * {@code _changes} are served from, at a cost proportional to that user's documents.
 *
 * <pre>
 * (1, DbId, 12 ACCESS)
 *     ├── 0 ACCESS_DOC, DocID = (Principal, Visible, Principal, Visible, ...)   who has rows for the document
 *     ├── 1 ACCESS_BY_ID, Principal, DocID = (Format, Visible, NotDeleted, RevPos, RevHash, Incarnation, Versionstamp)
 *     └── 2 ACCESS_BY_SEQ, Principal, Incarnation, Versionstamp = (Format, DocID, RevPos, RevHash, NotDeleted, Visible)
 * </pre>
 *
 * Written in the document's own transaction ({@link DocumentWriter}), blind but for the one
 * {@code ACCESS_DOC} read (the revision KV already serializes a document's writers). For every
 * principal of the new winner's {@code _access}, its by-id row and a by-seq row at the document's
 * new sequence (the one RFC D's changes row has), the old one cleared. A principal the write takes
 * out of {@code _access} keeps a row that is not {@code Visible}: its by-seq row moves to this
 * write's sequence and says the document was taken away, so that principal's feed tells a replica
 * to drop it ({@link #revokedRev}); it stays there until the principal gets the document back.
 * {@code ACCESS_BY_ID} holds each row's sequence, so such a row can be found and moved again.
 */
public final class AccessIndex {
    static final long FORMAT = 0;

    private AccessIndex() {}

    /** One principal's row for a document: as listed by id, or as its change. */
    record Row(String principal, String docId, RevId rev, boolean deleted, boolean visible, Sequence seq) {}

    /** A change in one user's feed: {@code revoked} if the user lost the document there. */
    public record AccessChange(Sequence seq, String id, RevId rev, boolean deleted, boolean revoked) {
        /** The revision the row names: the document's, or for a revoked one the deletion a replica applies ({@link #revokedRev}). */
        public RevId feedRev() {
            return revoked ? revokedRev(id, rev) : rev;
        }
    }

    private static byte[] docKey(DbHandle db, String docId) {
        return db.space().pack(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_DOC, docId);
    }

    private static byte[] byIdKey(DbHandle db, String principal, String docId) {
        return db.space().pack(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_ID, principal, docId);
    }

    private static byte[] bySeqKey(DbHandle db, String principal, Sequence seq) {
        return db.space().pack(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_SEQ, principal, (long) seq.incarnation(), seq.versionstamp());
    }

    /**
     * A document's winner changed ({@link DocumentWriter}): its principals' rows follow, in the
     * write's transaction, at the sequence of user version {@code userVersion}.
     *
     * @param oldSeq the document's sequence before this write, null for a new document
     * @param oldWinner the winner before this write (what a principal it takes the document from last saw), null for a new document
     * @param access the new winner's principals
     */
    static void onWrite(Transaction tx, DbHandle db, String docId, Sequence oldSeq, RevId oldWinner, RevId winner, boolean deleted,
                        List<String> access, int userVersion) {
        byte[] dk = docKey(db, docId);
        byte[] was = tx.snapshot().get(dk);
        Map<String, Boolean> before = new LinkedHashMap<>();
        if (was != null) {
            Tuple t = Tuple.fromBytes(was);
            for (int i = 0; i + 1 < t.size(); i += 2) before.put(t.getString(i), t.getBoolean(i + 1));
        }
        Map<String, Boolean> after = new LinkedHashMap<>();
        for (String p : access) {
            Boolean vis = before.get(p);
            if (vis != null) clearBySeq(tx, db, p, vis ? oldSeq : rowSeq(tx, db, p, docId));
            write(tx, db, p, docId, winner, deleted, true, userVersion);
            after.put(p, true);
        }
        for (Map.Entry<String, Boolean> e : before.entrySet()) {
            if (after.containsKey(e.getKey())) continue;
            if (e.getValue()) { // taken away by this write
                clearBySeq(tx, db, e.getKey(), oldSeq);
                write(tx, db, e.getKey(), docId, oldWinner, deleted, false, userVersion);
            }
            after.put(e.getKey(), false);
        }
        List<Object> v = new ArrayList<>(after.size() * 2);
        after.forEach((p, vis) -> {
            v.add(p);
            v.add(vis);
        });
        tx.nextWriteNoWriteConflictRange();
        if (v.isEmpty()) tx.clear(dk);
        else tx.set(dk, Tuple.fromList(v).pack());
    }

    private static Sequence rowSeq(Transaction tx, DbHandle db, String principal, String docId) {
        byte[] v = tx.snapshot().get(byIdKey(db, principal, docId));
        if (v == null) return null;
        Tuple t = Tuple.fromBytes(v);
        return new Sequence((int) t.getLong(5), t.getVersionstamp(6));
    }

    private static void clearBySeq(Transaction tx, DbHandle db, String principal, Sequence seq) {
        if (seq == null) return;
        tx.nextWriteNoWriteConflictRange();
        tx.clear(bySeqKey(db, principal, seq));
    }

    private static void write(Transaction tx, DbHandle db, String p, String docId, RevId rev, boolean deleted, boolean visible, int uv) {
        Tuple seqKey = Tuple.from(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_SEQ, p, (long) db.incarnation(), Versionstamp.incomplete(uv));
        tx.nextWriteNoWriteConflictRange();
        tx.setVersionstampedKey(Versionstamps.packWithVersionstamp(db.space().prefix(), seqKey),
                Tuple.from(FORMAT, docId, rev.pos(), rev.hashBytes(), !deleted, visible).pack());
        Tuple idValue = Tuple.from(FORMAT, visible, !deleted, rev.pos(), rev.hashBytes(), (long) db.incarnation(), Versionstamp.incomplete(uv));
        tx.nextWriteNoWriteConflictRange();
        tx.setVersionstampedValue(byIdKey(db, p, docId), Versionstamps.packWithVersionstamp(new byte[0], idValue));
    }

    /** A purge took the document away: every row of it goes. */
    static void onPurge(Transaction tx, DbHandle db, String docId) {
        byte[] dk = docKey(db, docId);
        byte[] was = tx.get(dk);
        if (was == null) return;
        Tuple t = Tuple.fromBytes(was);
        for (int i = 0; i + 1 < t.size(); i += 2) {
            String p = t.getString(i);
            clearBySeq(tx, db, p, rowSeq(tx, db, p, docId));
            tx.clear(byIdKey(db, p, docId));
        }
        tx.clear(dk);
    }

    // ---------------------------------------------------------------- reads

    /** Ids in the order of the keys that hold them (their UTF-8 bytes), as {@code _all_docs} lists them. */
    static final Comparator<String> ID_ORDER = (a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));

    private static <T> List<T> scan(Database db, long tag, String principal, Cursor.RowMapper<T> mapper, byte[] begin) {
        DbHandle h = db.handle();
        byte[][] all = h.space().range(KeySpace.Db.ACCESS, tag, principal);
        Cursor<T> c = new Cursor<>(db, new Cursor.Range(h.space().pack(KeySpace.Db.ACCESS, tag, principal),
                begin == null ? all[0] : max(all[0], begin), all[1]), ScanProperties.FORWARD, null, mapper);
        List<T> out = new ArrayList<>();
        c.forEachRemaining(out::add);
        return out;
    }

    /**
     * The documents {@code principals} may read, deleted ones included, each once, in id order:
     * the union of each principal's by-id range.
     */
    static List<DocInfo> documents(Database db, List<String> principals) {
        TreeMap<String, DocInfo> out = new TreeMap<>(ID_ORDER);
        for (String p : principals) {
            for (DocInfo d : scan(db, KeySpace.Access.ACCESS_BY_ID, p, (r, kv) -> decodeById(r.handle(), kv), null)) {
                if (d != null) out.putIfAbsent(d.id(), d);
            }
        }
        return new ArrayList<>(out.values());
    }

    private static DocInfo decodeById(DbHandle db, KeyValue kv) {
        Tuple v = Tuple.fromBytes(kv.value());
        if (!v.getBoolean(1)) return null;
        return new DocInfo(db.space().unpack(kv.key()).getString(3), RevId.fromKey(v.getLong(3), v.getBytes(4)), !v.getBoolean(2));
    }

    /**
     * {@code principals}' changes after {@code since} (null: all), in sequence order, each document
     * once at its last change among them: visible if any of them may still read it, else revoked.
     */
    static List<AccessChange> changes(Database db, List<String> principals, Sequence since) {
        Map<String, AccessChange> last = new HashMap<>();
        for (String p : principals) {
            byte[] begin = since == null ? null : dev.chaise.kv.Keys.keyAfter(bySeqKey(db.handle(), p, since));
            for (AccessChange c : scan(db, KeySpace.Access.ACCESS_BY_SEQ, p, (r, kv) -> decodeBySeq(r.handle(), kv), begin)) {
                AccessChange had = last.get(c.id());
                int cmp = had == null ? 1 : c.seq().compareTo(had.seq());
                if (cmp > 0 || cmp == 0 && had.revoked() && !c.revoked()) last.put(c.id(), c);
            }
        }
        List<AccessChange> out = new ArrayList<>(last.values());
        out.sort(Comparator.comparing(AccessChange::seq));
        return out;
    }

    private static AccessChange decodeBySeq(DbHandle db, KeyValue kv) {
        Tuple k = db.space().unpack(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        return new AccessChange(new Sequence((int) k.getLong(3), k.getVersionstamp(4)), v.getString(1), RevId.fromKey(v.getLong(2), v.getBytes(3)),
                !v.getBoolean(4), !v.getBoolean(5));
    }

    /**
     * The revision a feed names for a document its reader lost: a deletion one step past the
     * revision they last could read, its hash derived from the document and that revision, so
     * every server computes the same one. A replica that gets it ({@code _revs_diff} says it is
     * missing, {@code _bulk_get} serves it) deletes its copy, as PouchDB does with any tombstone;
     * the server itself never stores it.
     */
    public static RevId revokedRev(String docId, RevId lost) {
        try {
            MessageDigest md5 = MessageDigest.getInstance("MD5");
            md5.update(("chaise-access-revoked\0" + docId + "\0" + lost).getBytes(StandardCharsets.UTF_8));
            return RevId.fromDigest(lost.pos() + 1, md5.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * For {@code principals}, who cannot read document {@code docId}: the revision they lost it
     * at, if one of them had it, or null. What {@code _bulk_get} and {@code open_revs} serve
     * {@link #revokedRev} from.
     */
    static RevId lostAt(DbReader r, List<String> principals, String docId) {
        RevId best = null;
        for (String p : principals) {
            byte[] v = r.tx().get(byIdKey(r.handle(), p, docId));
            if (v == null) continue;
            Tuple t = Tuple.fromBytes(v);
            if (t.getBoolean(1)) continue;
            RevId rev = RevId.fromKey(t.getLong(3), t.getBytes(4));
            if (best == null || rev.pos() > best.pos()) best = rev;
        }
        return best;
    }

    /**
     * The tombstone a replica gets for {@link #revokedRev}: a deletion whose {@code _revisions}
     * continue the lost revision's own history (from {@code branches}, where it is kept), so it
     * extends the branch the replica has and the document is deleted there.
     */
    public static ObjectNode revokedTombstone(String docId, RevId lost, List<EditBranch> branches) {
        RevId r = revokedRev(docId, lost);
        ObjectNode d = dev.chaise.storage.json.Json.NODES.objectNode();
        d.put("_id", docId);
        d.put("_rev", r.toString());
        d.put("_deleted", true);
        ObjectNode revs = d.putObject("_revisions");
        revs.put("start", r.pos());
        var ids = revs.putArray("ids").add(r.hash());
        for (EditBranch b : branches) {
            long i = b.leaf().pos() - lost.pos();
            if (i < 0 || i >= b.length() || !b.revAt((int) i).equals(lost)) continue;
            for (int k = (int) i; k < b.length(); k++) ids.add(b.revAt(k).hash());
            return d;
        }
        ids.add(lost.hash());
        return d;
    }

    private static byte[] max(byte[] a, byte[] b) {
        return dev.chaise.kv.Keys.compare(a, b) >= 0 ? a : b;
    }
}

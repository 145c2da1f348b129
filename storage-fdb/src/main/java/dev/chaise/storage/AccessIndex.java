package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.apple.foundationdb.tuple.Versionstamp;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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
 * {@code ACCESS_BY_ID} holds each row's sequence, so such a row can be found and moved again,
 * and a user's feed can tell, from one principal's row, whether another of theirs has a later one.
 *
 * <p>A user's listing and feed ({@link #documents}, {@link #changes}) are merges of their
 * principals' ranges (their name and each role), one {@link Cursor} each, read only as far as
 * the merge is: nothing is held per request, and each cursor goes on in a new transaction.
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
            if (vis != null) clearBySeq(tx, db, p, vis ? oldSeq : rowSeq(tx.snapshot(), db, p, docId));
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

    /** The sequence of {@code principal}'s rows for the document, or null if it has none. */
    private static Sequence rowSeq(ReadTransaction tx, DbHandle db, String principal, String docId) {
        byte[] v = tx.get(byIdKey(db, principal, docId));
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
            clearBySeq(tx, db, p, rowSeq(tx.snapshot(), db, p, docId));
            tx.clear(byIdKey(db, p, docId));
        }
        tx.clear(dk);
    }

    // ---------------------------------------------------------------- reads

    /** Ids in the order of the keys that hold them (their UTF-8 bytes), as {@code _all_docs} lists them. */
    static final Comparator<String> ID_ORDER = (a, b) -> Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));

    /**
     * The documents {@code principals} may read, each once, in id order ({@code props.reverse()}:
     * backwards) within {@code partition} (null: all) and {@code range}, deleted ones only if
     * {@code withDeleted}: a merge of each principal's by-id range as it is read. A row that is not
     * {@code Visible} is left out; another principal's visible row for the same id lists the
     * document (all of a document's visible rows are of its current winner). Each principal's
     * {@link Cursor} reads at most {@code props.returnLimit()} listed rows, since no more of them
     * can come before the merge has that many; it goes on in new transactions as it is read.
     */
    static Iterator<DocInfo> documents(Database db, List<String> principals, String partition, Database.IdRange range,
                                       ScanProperties props, boolean withDeleted) {
        DbHandle h = db.handle();
        List<Iterator<DocInfo>> sources = new ArrayList<>();
        for (String p : distinct(principals)) {
            byte[][] all = partition == null ? h.space().range(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_ID, p)
                    : new byte[][] {byIdKey(h, p, Partitions.startId(partition)), byIdKey(h, p, Partitions.endId(partition))};
            byte[][] b = range.bounds(all, id -> byIdKey(h, p, id), props.reverse());
            sources.add(new Cursor<>(db, new Cursor.Range(h.space().pack(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_ID, p), b[0], b[1]), props,
                    null, (r, kv) -> listed(r.handle().space().unpack(kv.key()).getString(3), kv.value(), withDeleted)));
        }
        Comparator<DocInfo> byId = Comparator.comparing(DocInfo::id, ID_ORDER);
        return new Merge<>(sources, props.reverse() ? byId.reversed() : byId, List::getFirst, props.returnLimit());
    }

    /** A principal's by-id row (its value) as a listed document, or null if it lists none. */
    private static DocInfo listed(String docId, byte[] value, boolean withDeleted) {
        Tuple v = Tuple.fromBytes(value);
        if (!v.getBoolean(1) || !withDeleted && !v.getBoolean(2)) return null;
        return new DocInfo(docId, RevId.fromKey(v.getLong(3), v.getBytes(4)), !v.getBoolean(2));
    }

    /**
     * One document as {@code principals} may read it, deleted or not, or null if none of them may:
     * their by-id rows read by key, for {@code _all_docs?keys=}.
     */
    static DocInfo document(DbReader r, List<String> principals, String docId) {
        for (String p : principals) {
            byte[] v = r.tx().get(byIdKey(r.handle(), p, docId));
            DocInfo d = v == null ? null : listed(docId, v, true);
            if (d != null) return d;
        }
        return null;
    }

    /**
     * {@code principals}' changes after {@code since} (null: all; ignored backwards), in sequence
     * order ({@code props.reverse()}: from the last), each document once at its last change among
     * them: visible if any of them may still read it, else revoked. A merge of each principal's
     * by-seq range as it is read: a row comes up only if no other principal has a later one for
     * its document, which the other principals' by-id rows (they hold their row's sequence) tell,
     * read by key in the row's transaction (with one principal there is nothing to read). Rows of
     * one write come up together, at one sequence, and a visible one among them wins: a principal
     * that may still read a document has its row at the document's last change, so the document's
     * last row is visible exactly when someone of {@code principals} may read it.
     */
    static Iterator<AccessChange> changes(Database db, List<String> principals, Sequence since, ScanProperties props) {
        DbHandle h = db.handle();
        List<String> ps = distinct(principals);
        List<Iterator<AccessChange>> sources = new ArrayList<>();
        for (String p : ps) {
            byte[][] all = h.space().range(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_SEQ, p);
            byte[] begin = since == null || props.reverse() ? all[0] : max(all[0], dev.chaise.kv.Keys.keyAfter(bySeqKey(h, p, since)));
            List<String> others = ps.stream().filter(q -> !q.equals(p)).toList();
            sources.add(new Cursor<>(db, new Cursor.Range(h.space().pack(KeySpace.Db.ACCESS, KeySpace.Access.ACCESS_BY_SEQ, p), begin, all[1]),
                    props, null, (r, kv) -> {
                        AccessChange c = decodeBySeq(r.handle(), kv);
                        for (String q : others) {
                            Sequence s = rowSeq(r.tx(), r.handle(), q, c.id());
                            if (s != null && s.compareTo(c.seq()) > 0) return null; // it comes up there
                        }
                        return c;
                    }));
        }
        Comparator<AccessChange> bySeq = Comparator.comparing(AccessChange::seq);
        return new Merge<>(sources, props.reverse() ? bySeq.reversed() : bySeq,
                same -> same.stream().filter(c -> !c.revoked()).findFirst().orElse(same.getFirst()), props.returnLimit());
    }

    private static List<String> distinct(List<String> principals) {
        return principals.stream().distinct().toList();
    }

    private static AccessChange decodeBySeq(DbHandle db, KeyValue kv) {
        Tuple k = db.space().unpack(kv.key());
        Tuple v = Tuple.fromBytes(kv.value());
        return new AccessChange(new Sequence((int) k.getLong(3), k.getVersionstamp(4)), v.getString(1), RevId.fromKey(v.getLong(2), v.getBytes(3)),
                !v.getBoolean(4), !v.getBoolean(5));
    }

    /**
     * A k-way merge of ordered sources: the values that are equal in {@code order} at the head of
     * the sources come out as one, chosen by {@code pick}, up to {@code limit} of them (0: no
     * limit). Reads each source only as far as the merge is read.
     */
    private static final class Merge<T> implements Iterator<T> {
        private record Head<T>(T value, Iterator<T> source) {}

        private final java.util.PriorityQueue<Head<T>> heads;
        private final Comparator<T> order;
        private final java.util.function.Function<List<T>, T> pick;
        private final List<Iterator<T>> pending;
        private long left;

        Merge(List<Iterator<T>> sources, Comparator<T> order, java.util.function.Function<List<T>, T> pick, long limit) {
            this.left = limit == 0 ? Long.MAX_VALUE : limit;
            this.order = order;
            this.pick = pick;
            this.heads = new java.util.PriorityQueue<>(Math.max(1, sources.size()), (a, b) -> order.compare(a.value(), b.value()));
            this.pending = new ArrayList<>(sources);
        }

        /** Sources are first read when the merge is, not when it is made. */
        private void start() {
            for (Iterator<T> s : pending) advance(s);
            pending.clear();
        }

        private void advance(Iterator<T> s) {
            if (s.hasNext()) heads.add(new Head<>(s.next(), s));
        }

        @Override
        public boolean hasNext() {
            start();
            return left > 0 && !heads.isEmpty();
        }

        @Override
        public T next() {
            if (!hasNext()) throw new java.util.NoSuchElementException();
            List<T> same = new ArrayList<>();
            Head<T> first = heads.poll();
            same.add(first.value());
            List<Iterator<T>> moved = new ArrayList<>();
            moved.add(first.source());
            while (!heads.isEmpty() && order.compare(heads.peek().value(), first.value()) == 0) {
                Head<T> h = heads.poll();
                same.add(h.value());
                moved.add(h.source());
            }
            left--;
            if (left > 0) for (Iterator<T> s : moved) advance(s); // at the limit, read no further
            return pick.apply(same);
        }
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

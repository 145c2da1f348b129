package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeySelector;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.RangeIterator;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.storage.RevisionsSubspace.Branch;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * Reads of one database at one version: the documents, branches, {@code _local} documents and
 * attachments a request or a cursor's mapper needs, all in the transaction it was made for.
 * {@link Database#read} makes one over a snapshot transaction; a cursor hands one to its mapper.
 *
 * <p>Every read through it is metered ({@link #bytesRead()}), so a cursor can stop a transaction
 * that its mapper's reads have made large.
 */
public final class DbReader {
    private final Metered tx;
    private final DbHandle db;
    private final dev.chaise.kv.StoreTimer timer;

    private DbReader(ReadTransaction tx, DbHandle db, dev.chaise.kv.StoreTimer timer) {
        this.tx = new Metered(tx);
        this.db = db;
        this.timer = timer;
    }

    /** A reader over {@code tx} (see {@link Database#reader}). */
    static DbReader of(ReadTransaction tx, DbHandle db, dev.chaise.kv.StoreTimer timer) {
        return new DbReader(tx, db, timer);
    }

    /** The transaction, for reads of a subspace its owner decodes (views' indexes). Metered too. */
    public ReadTransaction tx() {
        return tx;
    }

    public DbHandle handle() {
        return db;
    }

    /** KV bytes read through this reader so far (keys and values). */
    public long bytesRead() {
        return tx.bytes;
    }

    // ---------------------------------------------------------------- documents

    /**
     * A document: the winner, or {@code rev} whether live or deleted. Throws {@code not_found}
     * with reason "missing" or "deleted", as CouchDB does.
     */
    public StoredDoc get(String id, RevId rev, boolean withBranches) {
        Branch b;
        if (rev == null) {
            List<Branch> last = RevisionsSubspace.lastBranches(tx, db, id, 1);
            if (last.isEmpty()) throw StorageException.notFound("missing");
            b = last.getFirst();
            if (b.branch().deleted()) throw StorageException.notFound("deleted");
        } else {
            b = RevisionsSubspace.get(tx, db, id, rev, false);
            if (b == null) b = RevisionsSubspace.get(tx, db, id, rev, true);
            if (b == null) throw StorageException.notFound("missing");
        }
        EditBranch br = b.branch();
        ObjectNode body = DocumentBodies.read(tx, db, id, br.leaf(), br.deleted());
        if (body == null) body = Json.NODES.objectNode();
        timer.increment(StorageCounts.DOCUMENTS_READ);
        return new StoredDoc(id, br.leaf(), br.deleted(), body, withBranches ? branches(id) : null, b.sequence());
    }

    /**
     * The stored body of the live revision {@code rev}, without reading its revision record: for a
     * write hook in the transaction that just rewrote that record with a versionstamp, which is
     * unreadable until commit (FDB raises 1036 on reading it).
     */
    public ObjectNode body(String id, RevId rev) {
        ObjectNode body = DocumentBodies.read(tx, db, id, rev, false);
        timer.increment(StorageCounts.DOCUMENTS_READ);
        return body == null ? Json.NODES.objectNode() : body;
    }

    /**
     * The winning revision with only the body's top-level {@code members} (a Mango projection
     * reads just the fields it returns or matches on): one reverse read for the winner, then one
     * range per member, issued together. Throws {@code not_found} as {@link #get} does.
     */
    public StoredDoc getMembers(String id, java.util.Collection<String> members, boolean withBranches) {
        List<Branch> last = RevisionsSubspace.lastBranches(tx, db, id, 1);
        if (last.isEmpty()) throw StorageException.notFound("missing");
        Branch b = last.getFirst();
        if (b.branch().deleted()) throw StorageException.notFound("deleted");
        EditBranch br = b.branch();
        ObjectNode body = members.isEmpty() ? Json.NODES.objectNode() : DocumentBodies.readMembers(tx, db, id, br.leaf(), false, members);
        timer.increment(StorageCounts.DOCUMENTS_READ);
        return new StoredDoc(id, br.leaf(), false, body, withBranches ? branches(id) : null, b.sequence());
    }

    /**
     * The winning revisions of {@code ids}, null for one missing or deleted, read together: one
     * batched read of their revision records, then one of their bodies, or of only the body's
     * top-level {@code members} (null: the whole body), as {@link #get} and {@link #getMembers}
     * read them one document at a time.
     */
    public List<StoredDoc> winners(List<String> ids, java.util.Collection<String> members, boolean withBranches) {
        List<List<Branch>> last = RevisionsSubspace.branchesOfEach(tx, db, ids, 1);
        List<byte[][]> ranges = new ArrayList<>();
        int[] firstRange = new int[ids.size() + 1];
        byte[][] prefixes = new byte[ids.size()][];
        for (int i = 0; i < ids.size(); i++) {
            firstRange[i] = ranges.size();
            List<Branch> b = last.get(i);
            if (b.isEmpty() || b.getFirst().branch().deleted()) continue;
            byte[] prefix = DocumentBodies.prefix(db, ids.get(i), b.getFirst().branch().leaf(), false);
            prefixes[i] = prefix;
            if (members == null) ranges.add(new byte[][] {prefix, DocumentBodies.end(prefix)});
            else ranges.addAll(DocumentBodies.memberRanges(prefix, members));
        }
        firstRange[ids.size()] = ranges.size();
        List<List<KeyValue>> read = ranges.isEmpty() ? List.of() : tx.getRanges(ranges, 0, false);
        List<StoredDoc> out = new ArrayList<>(ids.size());
        for (int i = 0; i < ids.size(); i++) {
            if (prefixes[i] == null) {
                out.add(null);
                continue;
            }
            List<KeyValue> kvs = new ArrayList<>();
            for (int r = firstRange[i]; r < firstRange[i + 1]; r++) kvs.addAll(read.get(r));
            ObjectNode body = kvs.isEmpty() ? Json.NODES.objectNode() : ExplodedJson.implode(prefixes[i], kvs.iterator());
            Branch b = last.get(i).getFirst();
            timer.increment(StorageCounts.DOCUMENTS_READ);
            out.add(new StoredDoc(ids.get(i), b.branch().leaf(), false, body, withBranches ? branches(ids.get(i)) : null, b.sequence()));
        }
        return out;
    }

    /**
     * The documents of changes rows read in this transaction, each at the revision its row names
     * (the winner at this version), read together: one batched read of their bodies and none of
     * their revision records, which the rows already give. Branches are read for the documents
     * whose row counts more than one. Null for a deleted document.
     */
    public List<StoredDoc> changed(List<Change> changes) {
        List<byte[][]> ranges = new ArrayList<>(changes.size());
        byte[][] prefixes = new byte[changes.size()][];
        for (int i = 0; i < changes.size(); i++) {
            Change c = changes.get(i);
            if (c.deleted()) continue;
            prefixes[i] = DocumentBodies.prefix(db, c.id(), c.rev(), false);
            ranges.add(new byte[][] {prefixes[i], DocumentBodies.end(prefixes[i])});
        }
        List<List<KeyValue>> read = ranges.isEmpty() ? List.of() : tx.getRanges(ranges, 0, false);
        List<StoredDoc> out = new ArrayList<>(changes.size());
        int r = 0;
        for (int i = 0; i < changes.size(); i++) {
            Change c = changes.get(i);
            if (prefixes[i] == null) {
                out.add(null);
                continue;
            }
            List<KeyValue> kvs = read.get(r++);
            ObjectNode body = kvs.isEmpty() ? Json.NODES.objectNode() : ExplodedJson.implode(prefixes[i], kvs.iterator());
            timer.increment(StorageCounts.DOCUMENTS_READ);
            out.add(new StoredDoc(c.id(), c.rev(), false, body, c.branchCount() > 1 ? branches(c.id()) : null, c.seq()));
        }
        return out;
    }

    /** The winner of a document, or null if it never existed. One reverse range read, limit 1. */
    public DocInfo winner(String id) {
        List<Branch> last = RevisionsSubspace.lastBranches(tx, db, id, 1);
        if (last.isEmpty()) return null;
        EditBranch w = last.getFirst().branch();
        return new DocInfo(id, w.leaf(), w.deleted());
    }

    /** The sequence of a document's last change (its changes row), or null if it never existed. */
    public Sequence winnerSequence(String id) {
        List<Branch> last = RevisionsSubspace.lastBranches(tx, db, id, 1);
        return last.isEmpty() ? null : last.getFirst().sequence();
    }

    /** Every edit branch of a document, winner last; empty if it never existed. */
    public List<EditBranch> branches(String id) {
        List<EditBranch> out = new ArrayList<>();
        for (Branch x : RevisionsSubspace.all(tx, db, id)) out.add(x.branch());
        return out;
    }

    /**
     * As {@link #branches}, without the live branch {@code winner}: for a write hook running in the
     * transaction that just wrote that winner, whose key holds a versionstamp and is unreadable
     * until commit (FDB raises 1036 on reading it).
     */
    public List<EditBranch> branchesBeside(String id, RevId winner) {
        List<EditBranch> out = new ArrayList<>();
        for (Branch x : RevisionsSubspace.allBut(tx, db, id, winner)) out.add(x.branch());
        return out;
    }

    /** Every leaf revision of a document (CouchDB's {@code style=all_docs}). */
    public List<RevId> leaves(String id) {
        return EditBranches.leaves(branches(id)).stream().map(EditBranch::leaf).toList();
    }

    /** The leaves whose branch holds {@code rev} (its own, if a leaf); empty if the document does not know it. */
    public List<RevId> leavesFrom(String id, RevId rev) {
        List<RevId> out = new ArrayList<>();
        for (EditBranch b : branches(id)) if (b.contains(rev)) out.add(b.leaf());
        return out;
    }

    /** One answer of {@code open_revs}: the revision asked for (or a leaf), and its document or null if missing. */
    public record OpenRev(RevId rev, StoredDoc doc) {}

    /**
     * CouchDB's {@code open_revs}: the given revisions of one document, or every leaf for null.
     * Only leaves keep a body (RFC A/C), so an inner revision is missing. Found documents carry
     * the document's branches, for {@code revs=true}.
     *
     * <p>As CouchDB 3.5's fabric answers them ({@code fabric_doc_open_revs}): each revision once,
     * however often it was asked for or reached, the documents first, ordered by position and
     * then revision id (the order of the {@code #doc} records it sorts), then the missing ones in
     * the same order.
     *
     * @param latest answer each revision with every leaf descending from it
     */
    public List<OpenRev> openRevs(String id, List<RevId> wanted, boolean latest) {
        List<EditBranch> branches = branches(id);
        TreeSet<RevId> toOpen = new TreeSet<>();
        TreeSet<RevId> missing = new TreeSet<>();
        if (wanted == null) {
            for (EditBranch b : branches) toOpen.add(b.leaf());
        } else {
            for (RevId r : wanted) {
                if (!latest) {
                    toOpen.add(r);
                    continue;
                }
                boolean reached = false;
                for (EditBranch b : branches) {
                    if (b.contains(r)) {
                        toOpen.add(b.leaf());
                        reached = true;
                    }
                }
                if (!reached) missing.add(r);
            }
        }
        List<OpenRev> out = new ArrayList<>();
        for (RevId r : toOpen) {
            OpenRev o = open(id, r, branches, r);
            if (o.doc() == null) missing.add(r);
            else out.add(o);
        }
        for (RevId r : missing) out.add(new OpenRev(r, null));
        return out;
    }

    private OpenRev open(String id, RevId rev, List<EditBranch> branches, RevId asked) {
        try {
            return new OpenRev(rev, get(id, rev, false).withBranches(branches));
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            return new OpenRev(asked, null);
        }
    }

    /** The winning revision of every live design document, in id order. */
    public List<DocInfo> designDocs() {
        List<DocInfo> out = new ArrayList<>();
        byte[] from = ByIdSubspace.key(db, DocumentJson.DESIGN_PREFIX);
        byte[] to = ByIdSubspace.key(db, DocumentJson.DESIGN_END);
        for (KeyValue kv : tx.getRangeAsList(from, to, 0, false)) out.add(ByIdSubspace.decode(db, kv));
        return out;
    }

    // ---------------------------------------------------------------- _local, attachments, info

    /** A {@code _local} document, or null. */
    public LocalDoc local(String id) {
        timer.increment(StorageCounts.LOCAL_DOCUMENTS_READ);
        return LocalDocuments.read(tx, db, id);
    }

    /**
     * Inlines attachment bodies as base64 into a rendered document: all of them for
     * {@code sincePos} 0 ({@code attachments=true}), those with a revpos above it for
     * {@code atts_since}; a negative {@code sincePos} leaves stubs. {@code doc} is {@code stored} rendered.
     */
    public void inlineAttachments(StoredDoc stored, ObjectNode doc, long sincePos) {
        AttachmentsSubspace.inline(tx, db, stored.id(), stored.body(), doc, sincePos);
    }

    /** An attachment's whole body by its digest (attachments are content-addressed per document), or null if gone. */
    public byte[] attachment(String docId, String digest) {
        return AttachmentsSubspace.read(tx, db, docId, digest);
    }

    /** The database's purge_seq: its last purge's sequence, or null if it was never purged. */
    public Sequence purgeSeq() {
        return PurgedInfos.lastSequence(tx, db);
    }

    /**
     * The database's update_seq: its last change or its last purge, whichever is later; null for a
     * database never written. A purge takes a document's changes row away, which may be the last
     * one; CouchDB's update_seq moves on with a purge all the same, and so does this, so a client
     * never sees it go back.
     */
    public Sequence updateSeq() {
        Sequence change = ChangesSubspace.lastSequence(tx, db);
        Sequence purge = PurgedInfos.lastSequence(tx, db);
        if (purge == null) return change;
        return change == null || purge.compareTo(change) > 0 ? purge : change;
    }

    /** Counts and sizes (RFC B) and the update_seq. Read as a snapshot: never conflicts with writers. */
    public DbInfo info() {
        DbStats.Snapshot s = DbStats.read(tx, db);
        return new DbInfo(db.name(), db.uuid(), s.docCount(), s.docDelCount(), updateSeq(), s.sizeExternal(), s.sizeActive(),
                PurgedInfos.lastSequence(tx, db), db.partitioned(), db.access());
    }

    /** A read view that counts the bytes that pass through it. */
    private static final class Metered implements ReadTransaction {
        private final ReadTransaction tx;
        long bytes;

        Metered(ReadTransaction tx) {
            this.tx = tx;
        }

        @Override
        public long getReadVersion() {
            return tx.getReadVersion();
        }

        @Override
        public byte[] get(byte[] key) {
            byte[] v = tx.get(key);
            bytes += key.length + (v == null ? 0 : v.length);
            return v;
        }

        @Override
        public byte[] getKey(KeySelector selector) {
            byte[] k = tx.getKey(selector);
            bytes += k.length;
            return k;
        }

        @Override
        public RangeIterator getRange(byte[] begin, byte[] end, int limit, boolean reverse) {
            RangeIterator it = tx.getRange(begin, end, limit, reverse);
            return new RangeIterator() {
                @Override
                public boolean hasNext() {
                    return it.hasNext();
                }

                @Override
                public KeyValue next() {
                    KeyValue kv = it.next();
                    bytes += kv.key().length + kv.value().length;
                    return kv;
                }

                @Override
                public void close() {
                    it.close();
                }
            };
        }

        @Override
        public List<List<KeyValue>> getRanges(List<byte[][]> ranges, int limit, boolean reverse) {
            List<List<KeyValue>> out = tx.getRanges(ranges, limit, reverse);
            for (List<KeyValue> rows : out) for (KeyValue kv : rows) bytes += kv.key().length + kv.value().length;
            return out;
        }
    }
}

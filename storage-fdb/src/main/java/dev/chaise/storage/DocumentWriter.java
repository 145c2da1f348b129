package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.Transaction;
import dev.chaise.storage.DocumentBodies.Sizes;
import dev.chaise.storage.RevisionsSubspace.Branch;
import dev.chaise.storage.json.InvalidJsonException;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Applies documents' writes inside one transaction: for each, reads the edit branches it needs
 * (RFC C), decides the new revision, and writes the leaf body (RFC A), the branch KVs, the by-id
 * row and counters (RFC B) and the changes row (RFC D). A document that fails writes nothing;
 * every check runs before its first write.
 */
final class DocumentWriter {
    private final Storage storage;

    DocumentWriter(Storage storage) {
        this.storage = storage;
    }

    /** A transaction's running state: the next versionstamp user version, counter deltas, JSON sizes measured once, the validation checks (or null). */
    static final class Context {
        final Map<ObjectNode, Long> sizes;
        final DocumentValidator.Checks checks;
        int userVersion;
        /** Documents this transaction writes that did not exist: CouchDB's document_inserts. */
        long inserts;
        final DbStats.Deltas deltas = new DbStats.Deltas();
        /** Partitions' sizes as the transaction began, read once each ({@code couch_db_updater}'s full partitions). */
        final Map<String, Long> partitionSizes = new HashMap<>();

        Context(Map<ObjectNode, Long> sizes, DocumentValidator.Checks checks) {
            this.sizes = sizes;
            this.checks = checks;
        }

    }

    /** Thrown out of an all-or-nothing transaction's body so nothing commits; carries the results. */
    static final class AllOrNothingFailed extends RuntimeException {
        final List<UpdateResult> results;

        AllOrNothingFailed(List<UpdateResult> results) {
            super(null, null, false, false);
            this.results = results;
        }
    }

    /**
     * Writes {@code docs} in {@code tx}; each gets its own result. With {@code atomic}, any
     * failure throws {@link AllOrNothingFailed} so the transaction writes nothing.
     *
     * @param succeeded ids an earlier transaction of the same request wrote (a retry starts from it again)
     */
    List<UpdateResult> writeAll(Transaction tx, DbHandle db, List<DocUpdate> docs, boolean newEdits, boolean atomic,
                                Set<String> succeeded, Context ctx) {
        List<UpdateResult> results = new ArrayList<>(docs.size());
        Set<String> written = new HashSet<>(succeeded);
        Map<String, List<Branch>> read = readAhead(tx, db, docs, newEdits, written);
        boolean failed = false;
        for (DocUpdate u : docs) {
            try {
                if (written.contains(u.id())) {
                    if (newEdits) throw StorageException.conflict();
                    // only all-or-nothing gets here: other batches give a repeated id its own transaction
                    throw StorageException.badRequest("A document may appear only once in an all-or-nothing batch with new_edits=false");
                }
                RevId rev = newEdits ? writeEdit(tx, db, u, ctx, read.get(u.id())) : writeReplicated(tx, db, u, ctx, read.get(u.id()));
                written.add(u.id());
                results.add(new UpdateResult(u.id(), rev, null));
            } catch (StorageException e) {
                results.add(new UpdateResult(u.id(), null, e));
                failed = true;
            } catch (InvalidJsonException e) {
                // JSON that a validate_doc_update or an interactive index's map function returned: this document's failure
                results.add(new UpdateResult(u.id(), null, StorageException.of(e)));
                failed = true;
            }
        }
        if (atomic && failed) throw new AllOrNothingFailed(results);
        ctx.deltas.flush(tx, db);
        return results;
    }

    /**
     * RFC C's read of each document that needs a range read, for the whole transaction at once:
     * new documents (the last branch, through one read of their span where it holds little else)
     * and replicated ones (every branch, {@code getRanges}).
     * Edits with a base rev read it with a point read as they go. Documents of one transaction
     * have distinct ids, so reading before writing the others sees what reading in turn would.
     */
    private static Map<String, List<Branch>> readAhead(Transaction tx, DbHandle db, List<DocUpdate> docs, boolean newEdits, Set<String> written) {
        List<String> ids = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (DocUpdate u : docs) {
            if ((!newEdits || u.baseRev() == null) && !written.contains(u.id()) && !idTooLong(db, u.id()) && seen.add(u.id())) ids.add(u.id());
        }
        if (ids.size() < 2) return Map.of();
        List<List<Branch>> branches = newEdits ? RevisionsSubspace.lastBranchOfEach(tx, db, ids) : RevisionsSubspace.branchesOfEach(tx, db, ids, 0);
        Map<String, List<Branch>> out = HashMap.newHashMap(ids.size());
        for (int i = 0; i < ids.size(); i++) out.put(ids.get(i), branches.get(i));
        return out;
    }

    /**
     * An interactive edit (new_edits=true): reads only the branches RFC C says it must.
     * {@code last}: for a new document, its last branch if already read ({@link #readAhead}).
     */
    private RevId writeEdit(Transaction tx, DbHandle db, DocUpdate u, Context ctx, List<Branch> last) {
        long size = checkSize(db, u, ctx);
        String id = u.id();
        List<Branch> read = new ArrayList<>(2);
        Branch base = null;
        if (u.baseRev() != null) {
            base = RevisionsSubspace.getLive(tx, db, id, u.baseRev());
            if (base == null) throw StorageException.conflict();
            if (!base.isWinnerRecord()) {
                read.add(base); // extending a losing branch: 2 KVs, 2 round trips
                read.addAll(RevisionsSubspace.lastBranches(tx, db, id, 1));
            } else if (u.deleted()) {
                read.addAll(RevisionsSubspace.lastBranches(tx, db, id, 2)); // the winner and the next in line
            } else {
                read.add(base); // extending the winner: 1 KV, 1 round trip
            }
        } else {
            read.addAll(last != null ? last : RevisionsSubspace.lastBranches(tx, db, id, 1)); // a new document: reverse read, limit 1
        }
        Branch oldWinner = winnerRecord(read);
        List<EditBranch> branches = new ArrayList<>(read.size());
        for (Branch b : read) branches.add(b.branch());
        EditPlan plan = EditBranches.planEdit(branches, u.baseRev(), u.deleted());
        ObjectNode body = u.body();
        List<RevHasher.AttachmentDigest> digests = List.of();
        long newPos = plan.parent() == null ? 1 : plan.parent().pos() + 1;
        if (body.has("_attachments")) {
            List<ObjectNode> parents = new ArrayList<>(1);
            if (plan.parent() != null) parents.add(DocumentBodies.read(tx, db, id, plan.parent(), false));
            AttachmentsSubspace.Resolved r = AttachmentsSubspace.resolve(tx, db, id, plan.deleted() ? strip(body) : body, newPos, false,
                    parents, storage.maxAttachmentSize(), storage.compression(), u.stored());
            body = r.body();
            digests = r.digests();
        }
        // As CouchDB: the function sees the edited revision as _rev, and that revision (none for a new document) as oldDoc.
        EditBranch edited = base == null ? null : base.branch();
        validate(tx, db, ctx, id, edited == null ? null : EditBranch.root(edited.leaf(), false), plan.deleted(), body, edited);
        // CouchDB's new_revid over the body as the client ordered it; the body is then exploded once, before its prefix is known.
        // In an access database _access is the document's, not its body's, as on CouchDB's branch: the same edit gets the same revision there.
        RevId newRev = RevHasher.newRevId(plan.parent(), plan.deleted(), db.access() ? AccessRules.withoutAccess(body) : body, digests);
        ExplodedJson.Leaves leaves = ExplodedJson.explode(DocumentBodies.longestPrefix(db, id, newPos, plan.deleted()), body);
        // Rev ids are deterministic: the same edit of a parent that came back as a leaf (stemmed
        // off its child, then replicated in again) gives a revision that may already be a leaf of
        // a branch not read above. Writing it again would overwrite that branch and miscount;
        // CouchDB answers 409. The revision may also survive as an ancestor inside another branch's
        // stored path. When the reads above saw every branch (a new document, or the winner's
        // BranchCount says so) they answer it in memory; otherwise every branch is read, which
        // only documents with conflicts pay for. Any write that adds a branch rewrites the
        // winner's record, which this transaction read, so a concurrent writer cannot slip past.
        boolean sawAll = oldWinner == null ? read.isEmpty() : oldWinner.branchCount() == read.size();
        for (Branch b : sawAll ? read : RevisionsSubspace.all(tx, db, id)) {
            if (holds(b.branch(), newRev)) throw StorageException.conflict();
        }
        BranchUpdate update = plan.apply(newRev, db.revsLimit());
        if (db.partitioned() && !plan.deleted()) checkPartitionSize(tx, db, id, ctx, size - removedExternal(update, read));
        int branchCount = oldWinner == null ? 1 : oldWinner.branchCount();
        apply(tx, db, new Edit(id, read, oldWinner, update, newRev, plan.deleted(), body, leaves, size, branchCount), ctx);
        return newRev;
    }

    /**
     * {@code couch_db_updater:is_overflowed}: an interactive write that grows its document in a
     * partition already at {@code max_partition_size} is refused; deletes, shrinking updates,
     * replicated writes, design documents and other partitions go through.
     */
    private void checkPartitionSize(Transaction tx, DbHandle db, String id, Context ctx, long growth) {
        long max = storage.maxPartitionSize();
        String partition = Partitions.of(id);
        if (max <= 0 || growth <= 0 || partition == null) return;
        long size = ctx.partitionSizes.computeIfAbsent(partition, p -> PartitionStats.read(tx.snapshot(), db, p).sizeExternal());
        if (size >= max) throw new StorageException(StorageException.Kind.PARTITION_OVERFLOW, "Partition limit exceeded due to update on '" + id + "'");
    }

    /** The JSON bytes of the stored leaves an update replaces. */
    private static long removedExternal(BranchUpdate update, List<Branch> read) {
        long n = 0;
        for (EditBranch b : update.removed()) {
            for (Branch r : read) if (r.branch().leaf().equals(b.leaf()) && r.branch().deleted() == b.deleted()) n += r.externalSize();
        }
        return n;
    }

    /** Whether {@code r} is on the branch's stored path (its leaf or a kept ancestor). */
    private static boolean holds(EditBranch b, RevId r) {
        long i = b.leaf().pos() - r.pos();
        return i >= 0 && i < b.length() && b.revAt((int) i).equals(r);
    }

    /** A deletion keeps no attachments. */
    static ObjectNode strip(ObjectNode body) {
        ObjectNode b = body.deepCopy();
        b.remove("_attachments");
        return b;
    }

    /** A replicated write (new_edits=false): merges the incoming path into every branch ({@code all}, if already read). */
    private RevId writeReplicated(Transaction tx, DbHandle db, DocUpdate u, Context ctx, List<Branch> read) {
        long size = checkSize(db, u, ctx);
        String id = u.id();
        List<Branch> all = read != null ? read : RevisionsSubspace.all(tx, db, id);
        List<EditBranch> branches = new ArrayList<>(all.size());
        for (Branch b : all) branches.add(b.branch());
        BranchUpdate update = EditBranches.merge(branches, u.path(), db.revsLimit());
        if (!update.changed()) return u.path().leaf();
        RevId newLeaf = update.leafAlreadyKnown() ? null : u.path().leaf();
        ObjectNode body = u.body();
        if (newLeaf != null && body.has("_attachments")) {
            List<ObjectNode> leaves = new ArrayList<>();
            for (Branch b : all) leaves.add(DocumentBodies.read(tx, db, id, b.branch().leaf(), b.branch().deleted()));
            body = AttachmentsSubspace.resolve(tx, db, id, u.path().deleted() ? strip(body) : body, u.path().leaf().pos(), true, leaves,
                    storage.maxAttachmentSize(), storage.compression(), u.stored()).body();
        }
        if (newLeaf != null) {
            validate(tx, db, ctx, id, u.path(), u.path().deleted(), body, nearestLeaf(all, u.path())); // a deletion's attachments were stripped above
        }
        apply(tx, db, new Edit(id, all, winnerRecord(all), update, newLeaf, u.path().deleted(), body, null, size, update.branchCount()), ctx);
        return u.path().leaf();
    }

    /**
     * CouchDB's validate_doc_update of one document, before anything of it is written; the
     * replaced revision's body is read only if a function asks for it.
     *
     * @param revs whose leaf and revisions the function sees as {@code _rev} and {@code _revisions}; null for none
     */
    private static void validate(Transaction tx, DbHandle db, Context ctx, String id, EditBranch revs, boolean deleted,
                                 ObjectNode body, EditBranch replaced) {
        if (ctx.checks == null || id.startsWith(DocumentJson.DESIGN_PREFIX)) return; // design documents: admins only, checked above storage
        ObjectNode[] old = new ObjectNode[1]; // read at most once, however many functions ask
        ctx.checks.check(ValidationDoc.of(id, revs, deleted, body), () -> {
            if (replaced == null) return null;
            if (old[0] == null) {
                ObjectNode b = DocumentBodies.read(tx, db, id, replaced.leaf(), replaced.deleted());
                old[0] = ValidationDoc.of(id, replaced, replaced.deleted(), b == null ? Json.NODES.objectNode() : b);
            }
            return old[0];
        });
    }

    /**
     * The revision a replicated path replaces: its first revision after the leaf that is a leaf
     * here, as CouchDB's nearest ancestor with a body on disk (only leaves keep bodies here). Null if none.
     */
    private static EditBranch nearestLeaf(List<Branch> all, EditBranch incoming) {
        List<RevId> path = incoming.revs();
        for (int i = 1; i < path.size(); i++) {
            for (Branch b : all) if (b.branch().leaf().equals(path.get(i))) return b.branch();
        }
        return null;
    }

    /** The longest key a branch of an interactive revision can need: top position, a hash of 16 zero bytes (each escaped to two). */
    private static final RevId LONGEST_NEW_REV = new RevId(Long.MAX_VALUE, "0".repeat(32));

    /** That key's bytes besides the database's prefix and the id's UTF-8: the tag, the id's 02 and 00, NotDeleted, position and hash. */
    private static final int REV_KEY_OVERHEAD = new DatabaseSubspace(new byte[0])
            .pack(KeySpace.Db.REVISIONS, "", true, LONGEST_NEW_REV.pos(), LONGEST_NEW_REV.hashBytes()).length;

    /**
     * Whether a revision key of {@code id} can exceed the key limit. An id's tuple string takes at
     * most three bytes a character (a NUL two), so most ids are answered without packing a key,
     * which this did twice per document of a bulk write.
     */
    private static boolean idTooLong(DbHandle db, String id) {
        if (db.space().prefix().length + REV_KEY_OVERHEAD + 3L * id.length() <= KvLimits.MAX_KEY_BYTES) return false;
        return RevisionsSubspace.key(db, id, LONGEST_NEW_REV, true).length > KvLimits.MAX_KEY_BYTES;
    }

    /** Checks a document before any write and returns its body's JSON size. */
    private long checkSize(DbHandle db, DocUpdate u, Context ctx) {
        // Before any write, so a key over FDB's limit fails this document only, not the batch's transaction.
        if (idTooLong(db, u.id())) {
            throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id is too long");
        }
        if (u.path() != null && RevisionsSubspace.key(db, u.id(), u.path().leaf(), true).length > KvLimits.MAX_KEY_BYTES) {
            throw StorageException.badRequest(RevId.INVALID);
        }
        Long known = ctx.sizes.get(u.body());
        long size = known != null ? known : externalSize(u.body());
        storage.checkDocumentSize(size);
        return size;
    }

    /** A body's JSON size as limits count it: attachments count against max_attachment_size, not the document's size, as in CouchDB. */
    static long externalSize(ObjectNode body) {
        return ExplodedJson.externalSize(body.has("_attachments") ? strip(body) : body);
    }

    private static Branch winnerRecord(List<Branch> read) {
        Branch w = null;
        for (Branch b : read) {
            if (b.isWinnerRecord()) w = b;
        }
        return w;
    }

    private record LeafKey(RevId leaf, boolean deleted) {
        static LeafKey of(EditBranch b) {
            return new LeafKey(b.leaf(), b.deleted());
        }
    }

    /**
     * What one document's write decided. {@code newLeaf} is the revision whose body this write
     * supplies, or null if it brought no new leaf; {@code leaves} is that body exploded (an
     * interactive edit hashed it), or null to explode it in {@link #apply}, before the first write.
     *
     * @param read the branches read, with their stored sizes
     */
    private record Edit(String id, List<Branch> read, Branch oldWinner, BranchUpdate update, RevId newLeaf, boolean deleted,
                        ObjectNode body, ExplodedJson.Leaves leaves, long bodySize, int branchCount) {}

    /** Writes an edit's effects, in every subspace a document touches. */
    private void apply(Transaction tx, DbHandle db, Edit e, Context ctx) {
        String id = e.id();
        DocumentBodies.Prepared newBody = e.newLeaf() == null ? null
                : DocumentBodies.prepare(db, id, e.newLeaf(), e.deleted(), e.body(), e.leaves(), e.bodySize());
        Map<LeafKey, Branch> known = new HashMap<>();
        for (Branch b : e.read()) known.put(LeafKey.of(b.branch()), b);
        Set<LeafKey> added = new HashSet<>();
        for (EditBranch b : e.update().added()) added.add(LeafKey.of(b));
        Set<LeafKey> removed = new HashSet<>();

        long dExternal = 0;
        long dActive = 0;
        for (EditBranch b : e.update().removed()) {
            LeafKey k = LeafKey.of(b);
            removed.add(k);
            RevisionsSubspace.clear(tx, db, id, b);
            if (!added.contains(k)) {
                DocumentBodies.clear(tx, db, id, b.leaf(), b.deleted());
                Branch was = known.get(k);
                if (was != null) {
                    dExternal -= was.externalSize();
                    dActive -= was.activeSize();
                }
            }
        }
        Sizes newSizes = Sizes.NONE;
        if (newBody != null) {
            newSizes = newBody.write(tx);
            dExternal += newSizes.external();
            dActive += newSizes.active();
        }

        EditBranch newWinner = e.update().winner();
        LeafKey winnerKey = LeafKey.of(newWinner);
        int uv = ctx.userVersion++;
        for (EditBranch b : e.update().added()) {
            LeafKey k = LeafKey.of(b);
            Sizes s = sizesOf(k, e, newSizes, known);
            if (k.equals(winnerKey)) RevisionsSubspace.writeWinner(tx, db, id, b, e.branchCount(), s.external(), s.active(), uv);
            else RevisionsSubspace.writeOther(tx, db, id, b, s.external(), s.active());
        }
        // The winner carries the document's new sequence even when the edit did not touch its branch.
        if (!added.contains(winnerKey)) {
            Sizes s = sizesOf(winnerKey, e, newSizes, known);
            RevisionsSubspace.writeWinner(tx, db, id, newWinner, e.branchCount(), s.external(), s.active(), uv);
        }
        Branch oldWinner = e.oldWinner();
        if (oldWinner != null) {
            LeafKey ow = LeafKey.of(oldWinner.branch());
            if (!ow.equals(winnerKey) && !removed.contains(ow) && !added.contains(ow)) {
                RevisionsSubspace.writeOther(tx, db, id, oldWinner.branch(), oldWinner.externalSize(), oldWinner.activeSize());
            }
            ChangesSubspace.remove(tx, db, oldWinner.sequence());
        }
        ChangesSubspace.add(tx, db, id, newWinner.leaf(), e.branchCount(), newWinner.deleted(), uv);
        boolean bodyIsWinner = e.newLeaf() != null && e.newLeaf().equals(newWinner.leaf()) && e.deleted() == newWinner.deleted();
        if (db.access()) {
            ObjectNode w = bodyIsWinner ? e.body() : DocumentBodies.readMembers(tx, db, id, newWinner.leaf(), newWinner.deleted(), Set.of(AccessRules.FIELD));
            AccessIndex.onWrite(tx, db, id, oldWinner == null ? null : oldWinner.sequence(), oldWinner == null ? null : oldWinner.branch().leaf(),
                    newWinner.leaf(), newWinner.deleted(),
                    w == null ? List.of() : AccessRules.principals(w), uv);
        }

        if (newWinner.deleted()) ByIdSubspace.clear(tx, db, id);
        else ByIdSubspace.set(tx, db, id, newWinner.leaf());

        boolean existed = oldWinner != null;
        boolean wasLive = existed && !oldWinner.branch().deleted();
        boolean isLive = !newWinner.deleted();
        if (!existed) ctx.inserts++;
        if (wasLive != isLive || !existed) {
            if (existed) ctx.deltas.add(db, id, wasLive ? DbStats.Counter.DOC_COUNT : DbStats.Counter.DOC_DEL_COUNT, -1);
            ctx.deltas.add(db, id, isLive ? DbStats.Counter.DOC_COUNT : DbStats.Counter.DOC_DEL_COUNT, 1);
        }
        ctx.deltas.add(db, id, DbStats.Counter.SIZE_EXTERNAL, dExternal);
        ctx.deltas.add(db, id, DbStats.Counter.SIZE_ACTIVE, dActive);
        ctx.deltas.add(db, id, DbStats.Counter.WRITES, 1);
        storage.dbUpdates().mark(db.name());

        List<DocumentWriteHook> hooks = storage.hooks();
        if (!hooks.isEmpty()) {
            DocumentWriteHook.Change c = new DocumentWriteHook.Change(db, id,
                    oldWinner == null ? null : oldWinner.branch().leaf(), oldWinner != null && oldWinner.branch().deleted(),
                    newWinner.leaf(), newWinner.deleted(), bodyIsWinner ? e.body() : null, DbReader.of(tx, db, storage.timer()));
            for (DocumentWriteHook h : hooks) h.onWrite(tx, c);
        }
    }

    private static Sizes sizesOf(LeafKey k, Edit e, Sizes newSizes, Map<LeafKey, Branch> known) {
        if (k.leaf().equals(e.newLeaf()) && k.deleted() == e.deleted()) return newSizes;
        Branch b = known.get(k);
        return b == null ? Sizes.NONE : new Sizes(b.externalSize(), b.activeSize());
    }
}

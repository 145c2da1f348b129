package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.Keys;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.TupleBytes;
import dev.chaise.storage.DocumentBodies.Sizes;
import dev.chaise.storage.RevisionsSubspace.Branch;
import dev.chaise.storage.json.ExplodedJson;
import dev.chaise.storage.json.JsonSize;
import dev.chaise.storage.rev.BranchUpdate;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.EditBranches;
import dev.chaise.storage.rev.EditPlan;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.Revisions;
import dev.chaise.storage.rev.RevHasher;
import dev.chaise.storage.rev.RevId;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Documents: every write of a document is one transaction that reads the edit branches it needs
 * (RFC C), writes the new leaf body (RFC A), the branch KVs, the by-id row and counters (RFC B),
 * and moves the document's changes row (RFC D), guarded by a transaction id against
 * {@code commit_unknown_result}. Batches of documents share a transaction; each document's
 * outcome is its own.
 */
public final class DocumentStore implements AutoCloseable {
    public static final long DEFAULT_MAX_DOCUMENT_SIZE = 1_000_000;
    /** A batch's transaction stays well under FDB's 10 MB and 5 s. */
    static final long CHUNK_BYTES = 2_000_000;
    static final int CHUNK_DOCS = 1_000;

    /**
     * One document to write.
     *
     * @param baseRev the revision being edited (interactive edits), or null
     * @param body the user's fields only (no {@code _id}, {@code _rev}, ...)
     * @param path for {@code new_edits=false}: the incoming leaf, its deleted flag and ancestors
     * @param stored attachment bodies already stored ({@link #storeAttachment}), by name: the
     *     body's {@code _attachments} names each as {@code {"follows": true, content_type}}
     */
    public record DocUpdate(String id, RevId baseRev, boolean deleted, ObjectNode body, EditBranch path,
                            Map<String, AttachmentsSubspace.Stored> stored) {
        public static DocUpdate edit(String id, RevId baseRev, boolean deleted, ObjectNode body) {
            return new DocUpdate(id, baseRev, deleted, body, null, Map.of());
        }

        public static DocUpdate replicated(String id, EditBranch path, ObjectNode body) {
            return new DocUpdate(id, path.leaf(), path.deleted(), body, path, Map.of());
        }

        public DocUpdate withStored(Map<String, AttachmentsSubspace.Stored> s) {
            return new DocUpdate(id, baseRev, deleted, body, path, Map.copyOf(s));
        }

        DocUpdate withBody(ObjectNode b) {
            return new DocUpdate(id, baseRev, deleted, b, path, stored);
        }
    }

    /** A document's outcome: its new revision, or an error. */
    public record UpdateResult(String id, RevId rev, StorageException error) {
        public boolean ok() {
            return error == null;
        }
    }

    /**
     * A document as read: the revision, its body, on request every edit branch, and the
     * document's sequence when the revision read is the winner (else null).
     */
    public record StoredDoc(String id, RevId rev, boolean deleted, ObjectNode body, List<EditBranch> branches, Sequence seq) {}

    public record DbInfo(String name, String uuid, long docCount, long docDelCount, Sequence updateSeq, long sizeExternal, long sizeActive) {}

    private final KvStore kv;
    private final DatabaseDirectory databases;
    private final TxIds txIds;
    private final long maxDocumentSize;
    private volatile long maxAttachmentSize = DEFAULT_MAX_ATTACHMENT_SIZE;
    private final List<DocumentWriteHook> hooks = new CopyOnWriteArrayList<>();

    /** CouchDB's default: 1 GiB. Large attachments are stored a megabyte per transaction, so FDB's limits do not bound them. */
    public static final long DEFAULT_MAX_ATTACHMENT_SIZE = 1L << 30;

    public DocumentStore(KvStore kv, DatabaseDirectory databases, long maxDocumentSize) {
        this.kv = kv;
        this.databases = databases;
        this.txIds = new TxIds(kv);
        this.maxDocumentSize = maxDocumentSize;
    }

    /** {@code [couchdb] max_attachment_size}: larger attachments get 413 attachment_too_large. */
    public DocumentStore withMaxAttachmentSize(long bytes) {
        this.maxAttachmentSize = bytes;
        return this;
    }

    /** How many transactions one big batch of distinct documents may run at once (default: the cores). */
    public DocumentStore withParallelism(int parts) {
        if (parts < 1) throw new IllegalArgumentException("parallelism must be at least 1");
        this.parallelism = parts;
        return this;
    }

    public KvStore kv() {
        return kv;
    }

    public DatabaseDirectory databases() {
        return databases;
    }

    public TxIds txIds() {
        return txIds;
    }

    public void addWriteHook(DocumentWriteHook hook) {
        hooks.add(hook);
    }

    // ---------------------------------------------------------------- writes

    /**
     * Writes documents; each gets its own result. Documents are grouped into transactions of at
     * most {@link #CHUNK_DOCS} documents and about {@link #CHUNK_BYTES} of KVs ({@link #storageEstimate}).
     *
     * <p>One id several times: with {@code newEdits}, once an edit of the id succeeded the later
     * ones are conflicts, as in CouchDB on FoundationDB ({@code fabric2_db}); without, a repeated
     * id starts a new transaction, so each merge sees the ones before it. (A transaction cannot
     * read back the winner it wrote: its Sequence is a versionstamped value.)
     */
    public List<UpdateResult> update(String dbName, List<DocUpdate> given, boolean newEdits) {
        return update(dbName, given, newEdits, DocumentValidator.NONE);
    }

    /** {@link #update(String, List, boolean)}, each document checked by {@code validator} first. */
    public List<UpdateResult> update(String dbName, List<DocUpdate> given, boolean newEdits, DocumentValidator validator) {
        List<DocUpdate> docs = storeLargeInline(dbName, given);
        int parts = Math.min(parallelism, docs.size() / PARALLEL_MIN_DOCS);
        if (parts < 2 || !distinctIds(docs)) return updateInOrder(dbName, docs, newEdits, validator);
        // A big batch of distinct documents is independent transactions anyway (chunks), so its
        // parts run side by side: one request's latency then uses every core, not one.
        List<CompletableFuture<List<UpdateResult>>> futures = new ArrayList<>(parts);
        for (int p = 0; p < parts; p++) {
            List<DocUpdate> part = docs.subList(docs.size() * p / parts, docs.size() * (p + 1) / parts);
            futures.add(CompletableFuture.supplyAsync(() -> updateInOrder(dbName, part, newEdits, validator), PARTS));
        }
        List<UpdateResult> out = new ArrayList<>(docs.size());
        for (CompletableFuture<List<UpdateResult>> f : futures) {
            try {
                out.addAll(f.join());
            } catch (java.util.concurrent.CompletionException e) {
                if (e.getCause() instanceof RuntimeException r) throw r;
                throw e;
            }
        }
        return out;
    }

    /** Parallel parts of one request are at least this big; smaller batches are not worth the hand-off. */
    static final int PARALLEL_MIN_DOCS = 250;
    private volatile int parallelism = Runtime.getRuntime().availableProcessors();
    private static final java.util.concurrent.Executor PARTS = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor();

    private static boolean distinctIds(List<DocUpdate> docs) {
        Set<String> ids = HashSet.newHashSet(docs.size());
        for (DocUpdate d : docs) if (!ids.add(d.id())) return false;
        return true;
    }

    private List<UpdateResult> updateInOrder(String dbName, List<DocUpdate> docs, boolean newEdits, DocumentValidator validator) {
        List<UpdateResult> out = new ArrayList<>(docs.size());
        Set<String> succeeded = new HashSet<>();
        Map<ObjectNode, Long> sizes = new IdentityHashMap<>(); // JSON sizes, measured once per body
        int i = 0;
        while (i < docs.size()) {
            int j = i;
            long bytes = 0;
            Set<String> ids = new HashSet<>();
            while (j < docs.size() && j - i < CHUNK_DOCS && (newEdits || ids.add(docs.get(j).id()))) {
                long b = storageEstimate(docs.get(j), sizes);
                if (j > i && bytes + b > CHUNK_BYTES) break;
                bytes += b;
                j++;
            }
            List<DocUpdate> chunk = docs.subList(i, j);
            Set<String> before = newEdits ? Set.copyOf(succeeded) : Set.of();
            List<UpdateResult> results = txIds.run(tx -> writeAll(tx, dbName, chunk, newEdits, false, before, sizes, validator),
                    r -> encode(r, newEdits), b -> decode(b, chunk, newEdits));
            for (UpdateResult r : results) {
                if (r.ok()) succeeded.add(r.id());
            }
            out.addAll(results);
            i = j;
        }
        return out;
    }

    /**
     * About the KV bytes a document's write takes, to cut batches well under FDB's 10 MB: RFC A
     * stores one KV per JSON leaf, and every key repeats the revision's prefix, document id
     * included, so many small fields cost several times their JSON size.
     */
    static long storageEstimate(DocUpdate u, Map<ObjectNode, Long> sizes) {
        JsonSize size = JsonSize.of(u.body());
        long perLeaf = u.id().getBytes(StandardCharsets.UTF_8).length + 64; // db, sub, flag, pos, hash, framing
        sizes.put(u.body(), u.body().has("_attachments") ? ExplodedJson.externalSize(strip(u.body())) : size.bytes());
        return size.bytes() + size.leaves() * perLeaf;
    }

    /**
     * All documents in one transaction, written only if every one succeeds. Returns the results;
     * if any failed, nothing was written and the failures say why.
     */
    public List<UpdateResult> updateAllOrNothing(String dbName, List<DocUpdate> given, boolean newEdits) {
        return updateAllOrNothing(dbName, given, newEdits, DocumentValidator.NONE);
    }

    /** {@link #updateAllOrNothing(String, List, boolean)}, each document checked by {@code validator} first. */
    public List<UpdateResult> updateAllOrNothing(String dbName, List<DocUpdate> given, boolean newEdits, DocumentValidator validator) {
        List<DocUpdate> docs = storeLargeInline(dbName, given);
        try {
            return txIds.run(tx -> writeAll(tx, dbName, docs, newEdits, true, Set.of(), new IdentityHashMap<>(), validator),
                    r -> encode(r, newEdits), b -> decode(b, docs, newEdits));
        } catch (AllOrNothingFailed f) {
            return f.results;
        }
    }

    /** Thrown out of the transaction body so nothing commits. */
    private static final class AllOrNothingFailed extends RuntimeException {
        final List<UpdateResult> results;

        AllOrNothingFailed(List<UpdateResult> results) {
            super(null, null, false, false);
            this.results = results;
        }
    }

    /** One transaction's running state: the next versionstamp user version, counter deltas, and the validation checks (or null). */
    private static final class WriteContext {
        final Map<ObjectNode, Long> sizes;
        final DocumentValidator.Checks checks;
        int userVersion;
        final long[] deltas = new long[DbStats.Counter.values().length];

        WriteContext(Map<ObjectNode, Long> sizes, DocumentValidator.Checks checks) {
            this.sizes = sizes;
            this.checks = checks;
        }

        void add(DbStats.Counter c, long d) {
            deltas[c.ordinal()] += d;
        }

        /** One atomic add per counter per transaction, however many documents it wrote. */
        void flush(Transaction tx, DbHandle db) {
            for (DbStats.Counter c : DbStats.Counter.values()) DbStats.add(tx, db, c, deltas[c.ordinal()]);
        }
    }

    /** @param succeeded ids an earlier transaction of the same request wrote (a retry starts from it again) */
    private List<UpdateResult> writeAll(Transaction tx, String dbName, List<DocUpdate> docs, boolean newEdits, boolean atomic,
                                        Set<String> succeeded, Map<ObjectNode, Long> sizes, DocumentValidator validator) {
        DbHandle db = databases.open(tx, dbName);
        try (DocumentValidator.Checks checks = validator.open(tx.snapshot(), db)) {
            return writeAll(tx, db, docs, newEdits, atomic, succeeded, new WriteContext(sizes, checks));
        }
    }

    private List<UpdateResult> writeAll(Transaction tx, DbHandle db, List<DocUpdate> docs, boolean newEdits, boolean atomic,
                                        Set<String> succeeded, WriteContext ctx) {
        List<UpdateResult> results = new ArrayList<>(docs.size());
        Set<String> written = new HashSet<>(succeeded);
        Map<String, List<Branch>> read = readAhead(tx, db, docs, newEdits, written);
        boolean failed = false;
        for (DocUpdate u : docs) {
            try {
                if (written.contains(u.id())) {
                    if (newEdits) throw StorageException.conflict();
                    // only updateAllOrNothing gets here: update() gives a repeated id its own transaction
                    throw StorageException.badRequest("A document may appear only once in an all-or-nothing batch with new_edits=false");
                }
                RevId rev = newEdits ? writeEdit(tx, db, u, ctx, read.get(u.id())) : writeReplicated(tx, db, u, ctx, read.get(u.id()));
                written.add(u.id());
                results.add(new UpdateResult(u.id(), rev, null));
            } catch (StorageException e) {
                results.add(new UpdateResult(u.id(), null, e));
                failed = true;
            }
        }
        if (atomic && failed) throw new AllOrNothingFailed(results);
        ctx.flush(tx, db);
        return results;
    }

    /**
     * RFC C's read of each document that needs a range read, for the whole transaction at once
     * ({@code getRanges}): new documents (reverse, limit 1) and replicated ones (every branch).
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
        List<List<Branch>> branches = RevisionsSubspace.branchesOfEach(tx, db, ids, newEdits ? 1 : 0);
        Map<String, List<Branch>> out = HashMap.newHashMap(ids.size());
        for (int i = 0; i < ids.size(); i++) out.put(ids.get(i), branches.get(i));
        return out;
    }

    /**
     * An interactive edit (new_edits=true): reads only the branches RFC C says it must.
     * {@code last}: for a new document, its last branch if already read ({@link #readAhead}).
     */
    private RevId writeEdit(Transaction tx, DbHandle db, DocUpdate u, WriteContext ctx, List<Branch> last) {
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
            AttachmentsSubspace.Resolved r = AttachmentsSubspace.resolve(tx, db, id, plan.deleted() ? strip(body) : body, newPos, false, parents, maxAttachmentSize, u.stored());
            body = r.body();
            digests = r.digests();
        }
        // As CouchDB: the function sees the edited revision as _rev, and that revision (none for a new document) as oldDoc.
        EditBranch edited = base == null ? null : base.branch();
        validate(tx, db, ctx, id, edited == null ? null : EditBranch.root(edited.leaf(), false), plan.deleted(), body, edited);
        // The hash is taken over the exploded body, so the body is exploded once, before its prefix is known.
        ExplodedJson.Leaves leaves = ExplodedJson.explode(DocumentBodies.longestPrefix(db, id, newPos, plan.deleted()), body);
        RevId newRev = RevHasher.newRevId(plan.parent(), plan.deleted(), leaves, digests);
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
        int branchCount = oldWinner == null ? 1 : oldWinner.branchCount();
        apply(tx, db, id, read, oldWinner, update, newRev, plan.deleted(), body, leaves, size, branchCount, ctx);
        return newRev;
    }

    /** Whether {@code r} is on the branch's stored path (its leaf or a kept ancestor). */
    private static boolean holds(EditBranch b, RevId r) {
        long i = b.leaf().pos() - r.pos();
        return i >= 0 && i < b.length() && b.revAt((int) i).equals(r);
    }

    /** A deletion keeps no attachments. */
    private static ObjectNode strip(ObjectNode body) {
        ObjectNode b = body.deepCopy();
        b.remove("_attachments");
        return b;
    }

    /** A replicated write (new_edits=false): merges the incoming path into every branch ({@code all}, if already read). */
    private RevId writeReplicated(Transaction tx, DbHandle db, DocUpdate u, WriteContext ctx, List<Branch> read) {
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
            body = AttachmentsSubspace.resolve(tx, db, id, u.path().deleted() ? strip(body) : body, u.path().leaf().pos(), true, leaves, maxAttachmentSize, u.stored()).body();
        }
        if (newLeaf != null) {
            validate(tx, db, ctx, id, u.path(), u.path().deleted(), body, nearestLeaf(all, u.path())); // a deletion's attachments were stripped above
        }
        apply(tx, db, id, all, winnerRecord(all), update, newLeaf, u.path().deleted(), body, null, size, update.branchCount(), ctx);
        return u.path().leaf();
    }

    /**
     * CouchDB's validate_doc_update of one document, before anything of it is written; the
     * replaced revision's body is read only if a function asks for it.
     *
     * @param revs whose leaf and revisions the function sees as {@code _rev} and {@code _revisions}; null for none
     */
    private static void validate(Transaction tx, DbHandle db, WriteContext ctx, String id, EditBranch revs, boolean deleted,
                                 ObjectNode body, EditBranch replaced) {
        if (ctx.checks == null || id.startsWith(DocumentJson.DESIGN_PREFIX)) return; // design documents: admins only, checked above storage
        ObjectNode[] old = new ObjectNode[1]; // read at most once, however many functions ask
        ctx.checks.check(validationDoc(id, revs, deleted, body), () -> {
            if (replaced == null) return null;
            if (old[0] == null) {
                ObjectNode b = DocumentBodies.read(tx, db, id, replaced.leaf(), replaced.deleted());
                old[0] = validationDoc(id, replaced, replaced.deleted(), b == null ? Json.NODES.objectNode() : b);
            }
            return old[0];
        });
    }

    /** A document as validate_doc_update gets it (CouchDB's {@code to_json_obj(Doc, [revs])}): attachments as stubs. */
    private static ObjectNode validationDoc(String id, EditBranch revs, boolean deleted, ObjectNode body) {
        ObjectNode d = Json.NODES.objectNode();
        d.put("_id", id);
        if (revs != null) {
            Revisions r = revs.revisions();
            d.put("_rev", revs.leaf().toString());
            ObjectNode o = d.putObject("_revisions");
            o.put("start", r.start());
            r.ids().forEach(o.putArray("ids")::add);
        }
        d.setAll(body);
        if (deleted) d.put("_deleted", true);
        return d;
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

    private static boolean idTooLong(DbHandle db, String id) {
        return RevisionsSubspace.key(db, id, LONGEST_NEW_REV, true).length > KvLimits.MAX_KEY_BYTES;
    }

    /** Checks a document before any write and returns its body's JSON size. */
    private long checkSize(DbHandle db, DocUpdate u, WriteContext ctx) {
        // Before any write, so a key over FDB's limit fails this document only, not the batch's transaction.
        if (idTooLong(db, u.id())) {
            throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id is too long");
        }
        if (u.path() != null && RevisionsSubspace.key(db, u.id(), u.path().leaf(), true).length > KvLimits.MAX_KEY_BYTES) {
            throw StorageException.badRequest(RevId.INVALID);
        }
        Long known = ctx.sizes.get(u.body());
        // Attachments count against max_attachment_size, not the document's size, as in CouchDB.
        long size = known != null ? known : ExplodedJson.externalSize(u.body().has("_attachments") ? strip(u.body()) : u.body());
        if (size > maxDocumentSize) {
            throw new StorageException(StorageException.Kind.DOCUMENT_TOO_LARGE, "Document exceeds the maximum document size of " + maxDocumentSize + " bytes");
        }
        return size;
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
     * Writes an edit's effects. {@code newLeaf} is the revision whose body this write supplies,
     * or null if the edit brought no new leaf; {@code leaves} is that body exploded (an interactive
     * edit hashed it), or null to explode it here. Either way before the first write, so a bad
     * document fails without writing anything.
     */
    private void apply(Transaction tx, DbHandle db, String id, List<Branch> read, Branch oldWinner, BranchUpdate update,
                       RevId newLeaf, boolean deleted, ObjectNode body, ExplodedJson.Leaves leaves, long bodySize, int branchCount,
                       WriteContext ctx) {
        DocumentBodies.Prepared newBody = newLeaf == null ? null
                : DocumentBodies.prepare(db, id, newLeaf, deleted, body, leaves, bodySize);
        Map<LeafKey, Branch> known = new HashMap<>();
        for (Branch b : read) known.put(LeafKey.of(b.branch()), b);
        java.util.Set<LeafKey> added = new java.util.HashSet<>();
        for (EditBranch b : update.added()) added.add(LeafKey.of(b));
        java.util.Set<LeafKey> removed = new java.util.HashSet<>();

        long dExternal = 0;
        long dActive = 0;
        for (EditBranch b : update.removed()) {
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

        EditBranch newWinner = update.winner();
        LeafKey winnerKey = LeafKey.of(newWinner);
        int uv = ctx.userVersion++;
        for (EditBranch b : update.added()) {
            LeafKey k = LeafKey.of(b);
            Sizes s = sizesOf(k, newLeaf, deleted, newSizes, known);
            if (k.equals(winnerKey)) RevisionsSubspace.writeWinner(tx, db, id, b, branchCount, s.external(), s.active(), uv);
            else RevisionsSubspace.writeOther(tx, db, id, b, s.external(), s.active());
        }
        // The winner carries the document's new sequence even when the edit did not touch its branch.
        if (!added.contains(winnerKey)) {
            Sizes s = sizesOf(winnerKey, newLeaf, deleted, newSizes, known);
            RevisionsSubspace.writeWinner(tx, db, id, newWinner, branchCount, s.external(), s.active(), uv);
        }
        if (oldWinner != null) {
            LeafKey ow = LeafKey.of(oldWinner.branch());
            if (!ow.equals(winnerKey) && !removed.contains(ow) && !added.contains(ow)) {
                RevisionsSubspace.writeOther(tx, db, id, oldWinner.branch(), oldWinner.externalSize(), oldWinner.activeSize());
            }
            ChangesSubspace.remove(tx, db, oldWinner.sequence());
        }
        ChangesSubspace.add(tx, db, id, newWinner.leaf(), branchCount, newWinner.deleted(), uv);

        if (newWinner.deleted()) ByIdSubspace.clear(tx, db, id);
        else ByIdSubspace.set(tx, db, id, newWinner.leaf());

        boolean existed = oldWinner != null;
        boolean wasLive = existed && !oldWinner.branch().deleted();
        boolean isLive = !newWinner.deleted();
        if (wasLive != isLive || !existed) {
            if (existed) ctx.add(wasLive ? DbStats.Counter.DOC_COUNT : DbStats.Counter.DOC_DEL_COUNT, -1);
            ctx.add(isLive ? DbStats.Counter.DOC_COUNT : DbStats.Counter.DOC_DEL_COUNT, 1);
        }
        ctx.add(DbStats.Counter.SIZE_EXTERNAL, dExternal);
        ctx.add(DbStats.Counter.SIZE_ACTIVE, dActive);
        ctx.add(DbStats.Counter.WRITES, 1);

        if (!hooks.isEmpty()) {
            boolean bodyIsWinner = newLeaf != null && newLeaf.equals(newWinner.leaf()) && deleted == newWinner.deleted();
            DocumentWriteHook.Change c = new DocumentWriteHook.Change(db, id,
                    oldWinner == null ? null : oldWinner.branch().leaf(), oldWinner != null && oldWinner.branch().deleted(),
                    newWinner.leaf(), newWinner.deleted(), bodyIsWinner ? body : null);
            for (DocumentWriteHook h : hooks) h.onWrite(tx, c);
        }
    }

    private static Sizes sizesOf(LeafKey k, RevId newLeaf, boolean deleted, Sizes newSizes, Map<LeafKey, Branch> known) {
        if (k.leaf().equals(newLeaf) && k.deleted() == deleted) return newSizes;
        Branch b = known.get(k);
        return b == null ? Sizes.NONE : new Sizes(b.externalSize(), b.activeSize());
    }

    // ---------------------------------------------------------------- results through txids

    /**
     * Encoded results stay under this, so the txid KV's value (the bytes escaped, so up to twice
     * as long, plus the time) stays under FDB's 100,000 bytes.
     */
    static final int MAX_RESULT_BYTES = 45_000;

    /**
     * A chunk's results as the txid KV keeps them. Ids and replicated revs are the request's own
     * and are taken from it again by {@link #decode}; only what the write decided is stored. If
     * the error reasons do not fit, they are left out (a retry after 1021 then reports each
     * error's generic text).
     */
    private static byte[] encode(List<UpdateResult> results, boolean newEdits) {
        byte[] full = pack(results, newEdits, true);
        return full.length <= MAX_RESULT_BYTES ? full : pack(results, newEdits, false);
    }

    private static byte[] pack(List<UpdateResult> results, boolean newEdits, boolean reasons) {
        TupleBytes t = new TupleBytes(results.size() * 40);
        for (UpdateResult r : results) {
            t.add((Object) (r.ok() && newEdits ? r.rev().toString() : null));
            t.add((Object) (r.ok() ? null : r.error().kind().name()));
            t.add((Object) (r.ok() || !reasons ? null : r.error().reason()));
        }
        return t.toArray();
    }

    private static List<UpdateResult> decode(byte[] bytes, List<DocUpdate> docs, boolean newEdits) {
        Tuple t = Tuple.fromBytes(bytes);
        List<UpdateResult> out = new ArrayList<>(docs.size());
        for (int i = 0; i < docs.size(); i++) {
            DocUpdate u = docs.get(i);
            String kind = t.getString(3 * i + 1);
            if (kind == null) {
                out.add(new UpdateResult(u.id(), newEdits ? RevId.parse(t.getString(3 * i)) : u.path().leaf(), null));
                continue;
            }
            StorageException.Kind k = StorageException.Kind.valueOf(kind);
            String reason = t.getString(3 * i + 2);
            if (reason == null) reason = k == StorageException.Kind.CONFLICT ? StorageException.conflict().reason() : k.error();
            out.add(new UpdateResult(u.id(), null, new StorageException(k, reason)));
        }
        return out;
    }

    // ---------------------------------------------------------------- reads

    /**
     * A document: the winner, or {@code rev}. Throws NOT_FOUND with reason "missing" or
     * "deleted" as CouchDB does.
     */
    public StoredDoc get(String dbName, String id, RevId rev, boolean withBranches) {
        return kv.run(tx -> get(tx, databases.open(tx, dbName), id, rev, withBranches));
    }

    public static StoredDoc get(ReadTransaction tx, DbHandle db, String id, RevId rev, boolean withBranches) {
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
        if (body == null) body = dev.chaise.storage.json.Json.NODES.objectNode();
        return new StoredDoc(id, br.leaf(), br.deleted(), body, withBranches ? branches(tx, db, id) : null, b.sequence());
    }

    /** The winning revision of every live design document, in id order: the by-id rows from {@code _design/} to {@code _design0}. */
    public static List<ByIdSubspace.Row> designDocs(ReadTransaction tx, DbHandle db) {
        List<ByIdSubspace.Row> out = new ArrayList<>();
        for (KeyValue kv : tx.getRangeAsList(ByIdSubspace.key(db, DocumentJson.DESIGN_PREFIX), ByIdSubspace.key(db, DocumentJson.DESIGN_END), 0, false)) {
            out.add(ByIdSubspace.decode(db, kv));
        }
        return out;
    }

    /** Every edit branch of a document, winner last; empty if it never existed. */
    public List<EditBranch> branches(String dbName, String id) {
        return kv.run(tx -> branches(tx, databases.open(tx, dbName), id));
    }

    public DbInfo info(String dbName) {
        return kv.run(tx -> {
            DbHandle db = databases.open(tx, dbName);
            DbStats.Snapshot s = DbStats.read(tx.snapshot(), db);
            Sequence seq = ChangesSubspace.lastSequence(tx.snapshot(), db);
            return new DbInfo(db.name(), db.uuid(), s.docCount(), s.docDelCount(), seq, s.sizeExternal(), s.sizeActive());
        });
    }

    // ---------------------------------------------------------------- attachments

    /** Attachments up to this size go inline in their document's transaction; larger ones are stored ahead ({@link #storeAttachment}). */
    public static final int INLINE_ATTACHMENT_BYTES = AttachmentsSubspace.CHUNK * AttachmentsSubspace.CHUNKS_PER_TX;
    private static final int LARGE_INLINE_CHARS = INLINE_ATTACHMENT_BYTES / 3 * 4;

    /**
     * Stores an attachment body ahead of the document that will name it, reading {@code in} to its
     * end a megabyte at a time: streamed into a staging range, one transaction per megabyte, then
     * moved under its md5 (see {@link AttachmentsSubspace}). Nothing holds the whole body, and no
     * transaction comes near FDB's size limit. Past {@code max_attachment_size} it stops with 413
     * {@code attachment_too_large}; on any failure the staged chunks are cleared.
     */
    public AttachmentsSubspace.Stored storeAttachment(String dbName, String docId, String name, java.io.InputStream in) {
        AttachmentsSubspace.Upload upload = AttachmentsSubspace.Upload.next();
        java.security.MessageDigest md5 = AttachmentsSubspace.newMd5();
        long length = 0;
        long chunks = 0;
        boolean done = false;
        try {
            while (true) {
                List<byte[]> batch = new ArrayList<>(AttachmentsSubspace.CHUNKS_PER_TX);
                boolean end = false;
                while (batch.size() < AttachmentsSubspace.CHUNKS_PER_TX) {
                    byte[] c = in.readNBytes(AttachmentsSubspace.CHUNK);
                    length += c.length;
                    if (length > maxAttachmentSize) throw new StorageException(StorageException.Kind.ATTACHMENT_TOO_LARGE, name);
                    if (c.length > 0) {
                        md5.update(c);
                        batch.add(c);
                    }
                    if (c.length < AttachmentsSubspace.CHUNK) {
                        end = true;
                        break;
                    }
                }
                long first = chunks;
                if (!batch.isEmpty()) {
                    kv.run(tx -> {
                        AttachmentsSubspace.writeUpload(tx, databases.open(tx, dbName), upload, first, batch);
                        return null;
                    }, tx -> java.util.Optional.empty()); // after a 1021, writing the same chunks again is harmless
                }
                chunks += batch.size();
                if (end) break;
            }
            byte[] digest = md5.digest();
            long total = chunks;
            for (long from = 0; from < total; from += AttachmentsSubspace.CHUNKS_PER_TX) {
                long f = from;
                kv.run(tx -> {
                    AttachmentsSubspace.moveUpload(tx, databases.open(tx, dbName), upload, f, total, docId, digest);
                    return null;
                }, tx -> java.util.Optional.empty()); // a move that did commit is found done
            }
            if (total == 0) { // an empty body has one empty chunk, as inline data does
                kv.run(tx -> {
                    AttachmentsSubspace.write(tx, databases.open(tx, dbName), docId, digest, new byte[0]);
                    return null;
                }, tx -> java.util.Optional.empty());
            }
            done = true;
            return new AttachmentsSubspace.Stored(AttachmentsSubspace.digestOf(digest), length);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } finally {
            if (!done) clearUpload(dbName, upload);
        }
    }

    /**
     * Reads an attachment's body, as it arrives, into its {@code _attachments} entry {@code meta}:
     * up to {@link #INLINE_ATTACHMENT_BYTES} becomes inline {@code data}, written in the document's
     * own transaction; a larger body is stored ahead ({@link #storeAttachment}) and the entry is
     * marked {@code follows}. Returns the stored body for {@link DocUpdate#withStored}, or null.
     */
    public AttachmentsSubspace.Stored readAttachment(String dbName, String docId, String name, ObjectNode meta, java.io.InputStream in) {
        byte[] head;
        try {
            head = in.readNBytes(INLINE_ATTACHMENT_BYTES + 1);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        meta.remove("follows");
        if (head.length <= INLINE_ATTACHMENT_BYTES) {
            meta.put("data", Base64.getEncoder().encodeToString(head));
            return null;
        }
        meta.put("follows", true);
        return storeAttachment(dbName, docId, name, new java.io.SequenceInputStream(new java.io.ByteArrayInputStream(head), in));
    }

    private void clearUpload(String dbName, AttachmentsSubspace.Upload upload) {
        try {
            kv.run(tx -> {
                byte[][] r = AttachmentsSubspace.uploadRange(databases.open(tx, dbName), upload);
                tx.clear(r[0], r[1]);
                return null;
            }, tx -> java.util.Optional.empty());
        } catch (RuntimeException e) {
            // The sweep clears it within the hour.
        }
    }

    /**
     * Inline attachments too big for a document's transaction (over a megabyte) are stored first,
     * and the documents then name them as stored bodies. Data that is not valid base64, or over
     * {@code max_attachment_size}, stays inline, so the document's write reports it.
     */
    private List<DocUpdate> storeLargeInline(String dbName, List<DocUpdate> docs) {
        List<DocUpdate> out = null;
        for (int i = 0; i < docs.size(); i++) {
            DocUpdate u = docs.get(i);
            if (!(u.body().get("_attachments") instanceof ObjectNode atts)) continue;
            ObjectNode copy = null;
            Map<String, AttachmentsSubspace.Stored> stored = new java.util.HashMap<>(u.stored());
            for (Map.Entry<String, JsonNode> e : atts.properties()) {
                JsonNode data = e.getValue().get("data");
                if (data == null || !data.isTextual() || data.textValue().length() <= LARGE_INLINE_CHARS) continue;
                byte[] bytes = AttachmentsSubspace.decode(data.textValue());
                if (bytes == null || bytes.length > maxAttachmentSize) continue;
                stored.put(e.getKey(), storeAttachment(dbName, u.id(), e.getKey(), new java.io.ByteArrayInputStream(bytes)));
                if (copy == null) copy = u.body().deepCopy();
                ObjectNode meta = (ObjectNode) copy.get("_attachments").get(e.getKey());
                meta.remove("data");
                meta.put("follows", true);
            }
            if (copy == null) continue;
            if (out == null) out = new ArrayList<>(docs);
            out.set(i, u.withBody(copy).withStored(stored));
        }
        return out == null ? docs : out;
    }

    /** An attachment's bytes by its digest (attachments are content-addressed per document), or null if gone. */
    public byte[] attachmentData(String dbName, String docId, String digest) {
        return kv.run(tx -> AttachmentsSubspace.read(tx.snapshot(), databases.open(tx, dbName), docId, digest));
    }

    /** Chunks of an attachment from {@code from}, in a transaction of their own: chunks never change, so a stream may span many. */
    public List<byte[]> attachmentChunks(String dbName, String docId, String digest, long from, int limit) {
        return kv.run(tx -> AttachmentsSubspace.chunks(tx.snapshot(), databases.open(tx, dbName), docId, digest, from, limit));
    }

    public static int attachmentChunkSize() {
        return AttachmentsSubspace.CHUNK;
    }

    /**
     * Clears attachment chunks no leaf revision names any more, document by document (what
     * {@code _compact} reclaims), and uploads abandoned for an hour. Returns how many attachments were cleared.
     */
    public int sweepAttachments(String dbName) {
        long now = System.currentTimeMillis();
        kv.run(tx -> AttachmentsSubspace.sweepUploads(tx, databases.open(tx, dbName), now), tx -> java.util.Optional.empty());
        List<String> ids = new ArrayList<>();
        kv.run(tx -> {
            ids.clear();
            DbHandle db = databases.open(tx, dbName);
            byte[][] r = db.space().range(DatabaseSubspace.ATTACHMENTS);
            String last = null;
            for (KeyValue row : tx.snapshot().getRangeAsList(r[0], r[1], 0, false)) {
                String id = db.space().unpack(row.key()).getString(1);
                if (!id.equals(last)) ids.add(id);
                last = id;
            }
            return null;
        });
        int cleared = 0;
        for (String id : ids) {
            cleared += kv.run(tx -> {
                DbHandle db = databases.open(tx, dbName);
                List<ObjectNode> leaves = new ArrayList<>();
                for (Branch b : RevisionsSubspace.all(tx, db, id)) leaves.add(DocumentBodies.read(tx, db, id, b.branch().leaf(), b.branch().deleted()));
                return AttachmentsSubspace.sweep(tx, db, id, leaves);
            });
        }
        return cleared;
    }

    // ---------------------------------------------------------------- scans

    /** A document's winner as {@code _all_docs} and {@code _changes} show it. */
    public record DocInfo(String id, RevId rev, boolean deleted) {}

    /** The winner of a document, or null if it never existed. One reverse range read, limit 1. */
    public static DocInfo winner(ReadTransaction tx, DbHandle db, String id) {
        List<Branch> last = RevisionsSubspace.lastBranches(tx, db, id, 1);
        if (last.isEmpty()) return null;
        EditBranch w = last.getFirst().branch();
        return new DocInfo(id, w.leaf(), w.deleted());
    }

    /** The sequence of a document's last change (its changes row), or null if it never existed. */
    public static Sequence winnerSequence(ReadTransaction tx, DbHandle db, String id) {
        List<Branch> last = RevisionsSubspace.lastBranches(tx, db, id, 1);
        return last.isEmpty() ? null : last.getFirst().sequence();
    }

    /** Every edit branch of a document, winner last. */
    public static List<EditBranch> branches(ReadTransaction tx, DbHandle db, String id) {
        List<EditBranch> out = new ArrayList<>();
        for (Branch x : RevisionsSubspace.all(tx, db, id)) out.add(x.branch());
        return out;
    }

    /**
     * Live documents by id (RFC B's by-id subspace), across as many transactions as it takes.
     *
     * @param startKey first id (inclusive), or null; with {@code descending} the highest id
     * @param endKey last id, or null; inclusive if {@code inclusiveEnd}
     * @param limit at most this many rows, 0 for all
     */
    public <T> RangeCursor<T> allDocs(String dbName, String startKey, String endKey, boolean inclusiveEnd, boolean descending, long limit,
                                      RangeCursor.Mapper<T> mapper) {
        DbHandle db0 = databases.open(dbName);
        byte[][] all = ByIdSubspace.range(db0);
        byte[] lo = all[0];
        byte[] hi = all[1];
        String low = descending ? endKey : startKey;
        String high = descending ? startKey : endKey;
        boolean lowInclusive = !descending || inclusiveEnd;
        boolean highInclusive = descending || inclusiveEnd;
        if (low != null) {
            byte[] k = ByIdSubspace.key(db0, low);
            lo = max(lo, lowInclusive ? k : Keys.keyAfter(k));
        }
        if (high != null) {
            byte[] k = ByIdSubspace.key(db0, high);
            hi = min(hi, highInclusive ? Keys.keyAfter(k) : k);
        }
        return new RangeCursor<>(kv, tx -> checkSame(databases.open(tx, dbName), db0), lo, hi, descending, limit, mapper);
    }

    /** {@code _all_docs} rows without bodies. */
    public static DocInfo byIdRow(ReadTransaction tx, DbHandle db, KeyValue kv) {
        ByIdSubspace.Row r = ByIdSubspace.decode(db, kv);
        return new DocInfo(r.id(), r.rev(), false);
    }

    /**
     * The changes feed after {@code since} (null: from the start), across as many transactions as
     * it takes. Each document appears once per transaction; over several, at least once (RFC D).
     */
    public <T> RangeCursor<T> changes(String dbName, Sequence since, boolean descending, long limit, ChangeMapper<T> mapper) {
        DbHandle db0 = databases.open(dbName);
        byte[][] r = ChangesSubspace.range(db0);
        byte[] begin = descending ? r[0] : ChangesSubspace.after(db0, since);
        byte[] end = r[1];
        return new RangeCursor<>(kv, tx -> checkSame(databases.open(tx, dbName), db0), begin, end, descending, limit,
                (tx, db, row) -> mapper.map(tx, db, ChangesSubspace.decode(db, row)));
    }

    @FunctionalInterface
    public interface ChangeMapper<T> {
        T map(ReadTransaction tx, DbHandle db, ChangesSubspace.Change change);
    }

    /**
     * {@code _local} documents by id, across transactions; bodies only if {@code includeBodies}
     * (otherwise their KVs are still scanned: local documents are few and small).
     */
    public RangeCursor<LocalDocuments.LocalDoc> localDocs(String dbName, String startKey, String endKey, boolean inclusiveEnd,
                                                          boolean descending, long limit, boolean includeBodies) {
        DbHandle db0 = databases.open(dbName);
        byte[][] all = db0.space().range(DatabaseSubspace.LOCAL);
        byte[] lo = all[0];
        byte[] hi = all[1];
        String low = descending ? endKey : startKey;
        String high = descending ? startKey : endKey;
        if (low != null) lo = max(lo, (!descending || inclusiveEnd) ? LocalDocuments.prefix(db0, low) : Keys.strinc(LocalDocuments.prefix(db0, low)));
        if (high != null) hi = min(hi, (descending || inclusiveEnd) ? Keys.strinc(LocalDocuments.prefix(db0, high)) : LocalDocuments.prefix(db0, high));
        return new RangeCursor<>(kv, tx -> checkSame(databases.open(tx, dbName), db0), lo, hi, descending, limit, (tx, db, row) -> {
            var t = db.space().unpack(row.key());
            if (t.size() != 2) return null; // a body KV, not the document's own key
            String id = t.getString(1);
            return includeBodies ? LocalDocuments.read(tx, db, id)
                    : new LocalDocuments.LocalDoc(id, com.apple.foundationdb.tuple.Tuple.fromBytes(row.value()).getLong(1), null);
        });
    }

    /** Completes when any document of the database is written after this call (or spuriously). */
    public CompletableFuture<Void> watchWrites(String dbName) {
        return kv.run(tx -> tx.watch(DbStats.key(databases.open(tx, dbName), DbStats.Counter.WRITES)));
    }

    /** A scan must not continue into a database re-created under the same name. */
    private static DbHandle checkSame(DbHandle now, DbHandle first) {
        if (now.id() != first.id()) throw StorageException.notFound("Database does not exist.");
        return now;
    }

    private static byte[] max(byte[] a, byte[] b) {
        return Keys.compare(a, b) >= 0 ? a : b;
    }

    private static byte[] min(byte[] a, byte[] b) {
        return Keys.compare(a, b) <= 0 ? a : b;
    }

    // ---------------------------------------------------------------- _local

    public LocalDocuments.LocalDoc getLocal(String dbName, String id) {
        LocalDocuments.LocalDoc d = kv.run(tx -> LocalDocuments.read(tx, databases.open(tx, dbName), id));
        if (d == null) throw StorageException.notFound("missing");
        return d;
    }

    public LocalDocuments.LocalDoc putLocal(String dbName, String id, String baseRev, boolean deleted, ObjectNode body) {
        if (!deleted) {
            long size = ExplodedJson.externalSize(body);
            if (size > maxDocumentSize) {
                throw new StorageException(StorageException.Kind.DOCUMENT_TOO_LARGE, "Document exceeds the maximum document size of " + maxDocumentSize + " bytes");
            }
        }
        // Guarded like every document write: a retry after a 1021 that did commit returns that write's rev.
        return txIds.run(tx -> LocalDocuments.write(tx, databases.open(tx, dbName), id, baseRev, deleted, body),
                d -> Tuple.from(d.revNumber()).pack(),
                bytes -> new LocalDocuments.LocalDoc(id, Tuple.fromBytes(bytes).getLong(0), body));
    }

    @Override
    public void close() {
        txIds.close();
    }
}

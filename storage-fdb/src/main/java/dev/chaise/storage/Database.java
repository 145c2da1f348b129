package dev.chaise.storage;

import com.apple.foundationdb.tuple.Tuple;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.KeyValue;
import dev.chaise.kv.ReadTransaction;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * One database, as every layer above storage reaches it: documents, changes, {@code _local}
 * documents, attachments and metadata. Each method runs its own transactions (retried as FDB
 * retries them, writes guarded by transaction ids), so callers hold no transaction.
 *
 * <p>A {@code Database} is the database it was opened as: a deleted database re-created under the
 * same name is another one, and every transaction of this object answers 404 for it
 * ({@link #handle}). Metadata accessors ({@link #securityJson()}, ...) are as of opening.
 */
public final class Database {
    /** Documents per transaction when reading many documents' branches (RFC C) at once. */
    static final int IDS_PER_TRANSACTION = 200;

    private final Storage storage;
    private final DbHandle opened;

    Database(Storage storage, DbHandle opened) {
        this.storage = storage;
        this.opened = opened;
    }

    public String name() {
        return opened.name();
    }

    public String uuid() {
        return opened.uuid();
    }

    /** The {@code _security} object as stored, as of opening. */
    public String securityJson() {
        return opened.securityJson();
    }

    /** A per-document access database: fixed at creation. */
    public boolean isAccess() {
        return opened.access();
    }

    public int revsLimit() {
        return opened.revsLimit();
    }

    /** Whether document ids carry a partition ({@link Partitions}); fixed when the database was created. */
    public boolean partitioned() {
        return opened.partitioned();
    }

    /** The handle as of opening: its id and key prefix, for subspace owners above storage. */
    public DbHandle handle() {
        return opened;
    }

    Storage storage() {
        return storage;
    }

    /** This database opened for {@code user} ({@link Storage#open(String, UserCtx, SecuredDb.Level)}), without reading its name again. */
    public SecuredDb openFor(UserCtx user, SecuredDb.Level level) {
        return storage.open(this, user, level);
    }

    StoreTimer timer() {
        return storage.timer();
    }

    /**
     * The database inside {@code tx}, checked to be this one: the one place a scan or a write
     * across transactions learns that the database was deleted, or deleted and re-created.
     */
    DbHandle handle(ReadTransaction tx) {
        DbHandle now = storage.directory().open(tx, opened.name());
        if (now.id() != opened.id()) throw StorageException.notFound("Database does not exist.");
        return now;
    }

    // ---------------------------------------------------------------- transactions

    /**
     * Transactions on this database for the owners of its other subspaces (views' indexes): the
     * one part of storage's API that hands out KV transactions ({@link SubspaceAccess}).
     */
    public SubspaceAccess subspaces() {
        return new SubspaceAccess(this);
    }

    /** Reads at one version, in a snapshot transaction: never conflicts with writers. */
    public <T> T read(Function<DbReader, T> body) {
        return storage.kv().run(tx -> body.apply(DbReader.of(tx.snapshot(), handle(tx), timer())));
    }

    /** A read-write transaction, retried on conflicts; a 1021 is thrown (use {@link #runGuarded} for writes that must not happen twice). */
    <T> T run(SubspaceAccess.TxBody<T> body) {
        return storage.kv().run(tx -> body.apply(tx, handle(tx)));
    }

    /**
     * A write guarded by a transaction id (RFC D): after a 1021 the next attempt learns whether
     * the first committed and returns its result, decoded from what {@code encode} stored.
     */
    <T> T runGuarded(SubspaceAccess.TxBody<T> body, Function<T, byte[]> encode, Function<byte[], T> decode) {
        return storage.txIds().run(tx -> body.apply(tx, handle(tx)), encode, decode);
    }

    // ---------------------------------------------------------------- documents

    /** A document: the winner, or {@code rev}. Throws {@code not_found} "missing" or "deleted" as CouchDB does. */
    public StoredDoc get(String id, RevId rev, boolean withBranches) {
        return timer().time(StorageWaits.LOAD_DOCUMENT, () -> read(r -> r.get(id, rev, withBranches)));
    }

    /** The winner of a document, or null if it never existed. */
    public DocInfo winner(String id) {
        return read(r -> r.winner(id));
    }

    /** Every edit branch of a document, winner last; empty if it never existed. */
    public List<EditBranch> branches(String id) {
        return read(r -> r.branches(id));
    }

    /** Writes documents, each checked by {@code validator}; each gets its own result (see {@link BatchWriter}). Requests write through {@link SecuredDb}. */
    List<UpdateResult> update(List<DocUpdate> docs, boolean newEdits, DocumentValidator validator) {
        return timer().time(StorageWaits.SAVE_DOCUMENTS, () -> storage.batches().update(this, docs, newEdits, validator));
    }

    /**
     * A write that applies no rule of the database's policy: for storage's own tests and the
     * server's internal bookkeeping only. Everything a user or a server task writes goes
     * through {@link SecuredDb}, which the architecture test holds main code to.
     */
    public List<UpdateResult> updateUnchecked(List<DocUpdate> docs, boolean newEdits) {
        return update(docs, newEdits, DocumentValidator.NONE);
    }

    /** {@link #updateUnchecked}, for storage's own tests. */
    List<UpdateResult> update(List<DocUpdate> docs, boolean newEdits) {
        return updateUnchecked(docs, newEdits);
    }

    /** All documents in one transaction, written only if every one succeeds; otherwise nothing is written and the failures say why. */
    List<UpdateResult> updateAllOrNothing(List<DocUpdate> docs, boolean newEdits, DocumentValidator validator) {
        return timer().time(StorageWaits.SAVE_DOCUMENTS, () -> storage.batches().updateAllOrNothing(this, docs, newEdits, validator));
    }

    /** {@link #updateAllOrNothing(List, boolean, DocumentValidator)} with no rule applied, as {@link #updateUnchecked}. */
    public List<UpdateResult> updateAllOrNothingUnchecked(List<DocUpdate> docs, boolean newEdits) {
        return updateAllOrNothing(docs, newEdits, DocumentValidator.NONE);
    }

    /** {@link #updateAllOrNothingUnchecked}, for storage's own tests. */
    List<UpdateResult> updateAllOrNothing(List<DocUpdate> docs, boolean newEdits) {
        return updateAllOrNothingUnchecked(docs, newEdits);
    }

    /** What a replicator asks ({@code _revs_diff}): the revisions of one document this database lacks, and CouchDB's possible ancestors. */
    public record RevsDiff(String id, List<RevId> missing, List<RevId> possibleAncestors) {}

    /**
     * {@code _revs_diff}: for each document, the asked revisions this database does not have, in
     * snapshot transactions of {@link #IDS_PER_TRANSACTION} documents. Documents that lack none are left out.
     */
    public List<RevsDiff> revsDiff(List<String> ids, List<List<RevId>> revs) {
        List<RevsDiff> out = new ArrayList<>();
        for (int i = 0; i < ids.size(); i += IDS_PER_TRANSACTION) {
            int from = i;
            int to = Math.min(ids.size(), i + IDS_PER_TRANSACTION);
            out.addAll(read(r -> {
                List<RevsDiff> part = new ArrayList<>();
                for (int j = from; j < to; j++) {
                    var branches = r.branches(ids.get(j));
                    List<RevId> missing = EditBranches.missing(branches, revs.get(j));
                    if (missing.isEmpty()) continue;
                    part.add(new RevsDiff(ids.get(j), missing, EditBranches.possibleAncestors(branches, missing)));
                }
                return part;
            }));
        }
        return out;
    }

    // ---------------------------------------------------------------- purge

    /**
     * CouchDB's purge of every request in one transaction ({@link PurgeWriter}): each named leaf
     * and the ancestors only it held leave every subspace, and each document gets a purge record.
     */
    public List<Purged> purge(List<PurgeRequest> requests) {
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (PurgeRequest r : requests) if (!ids.add(r.id())) throw StorageException.badRequest("A document may appear only once in a purge");
        return timer().time(StorageWaits.SAVE_DOCUMENTS, () -> storage.purges().purge(this, requests));
    }

    /** The purge records kept, oldest first ({@code _purged_infos}). */
    public List<PurgedInfos.Info> purgedInfos() {
        return read(r -> PurgedInfos.list(r.tx(), r.handle()));
    }

    /** {@code purged_infos_limit}: how many purge records are kept. */
    public int purgedInfosLimit() {
        return read(r -> PurgedInfos.limit(r.tx(), r.handle()));
    }

    public void setPurgedInfosLimit(int limit) {
        if (limit < 1) throw StorageException.badRequest("`purged_infos_limit` must be positive integer");
        run((tx, db) -> {
            PurgedInfos.setLimit(tx, db, limit); // setting it again after a 1021 is harmless
            return null;
        });
    }

    // ---------------------------------------------------------------- scans

    /** A range of document ids: bounds as the request gives them (null: open), the end inclusive or not. */
    public record IdRange(String startKey, String endKey, boolean inclusiveEnd) {
        public static final IdRange ALL = new IdRange(null, null, true);

        /**
         * The keys of the range under {@code key(id)}, a tuple-encoded key whose own subtree (a
         * {@code _local} document's body) belongs to it; read backwards, {@code startKey} is the high end.
         */
        byte[][] bounds(byte[][] all, Function<String, byte[]> key, boolean descending) {
            byte[] lo = all[0];
            byte[] hi = all[1];
            String low = descending ? endKey : startKey;
            String high = descending ? startKey : endKey;
            boolean lowInclusive = !descending || inclusiveEnd;
            boolean highInclusive = descending || inclusiveEnd;
            if (low != null) lo = max(lo, lowInclusive ? key.apply(low) : DatabaseSubspace.subtreeEnd(key.apply(low)));
            if (high != null) hi = min(hi, highInclusive ? DatabaseSubspace.subtreeEnd(key.apply(high)) : key.apply(high));
            return new byte[][] {lo, hi};
        }
    }

    /** Maps a row a typed scan has decoded, inside its transaction; null skips it. */
    @FunctionalInterface
    public interface Mapper<R, T> {
        T map(DbReader reader, R row);
    }

    /**
     * A {@link Mapper} that is handed the rows it is about to map first, in their transaction (as
     * {@link Cursor.RowMapper#prefetch}): one that reads each row's document can read them together.
     */
    public interface Prefetching<R, T> extends Mapper<R, T> {
        /** Rows per read-ahead, asked before each. */
        int prefetchSize();

        void prefetch(DbReader reader, List<R> rows);
    }

    /** A typed scan's row mapper: rows decoded once, and handed ahead to a {@link Prefetching} mapper. */
    private static <R, T> Cursor.RowMapper<T> rowMapper(Mapper<R, T> mapper, java.util.function.BiFunction<DbHandle, KeyValue, R> decode) {
        if (!(mapper instanceof Prefetching<R, T> ahead)) return (reader, kv) -> mapper.map(reader, decode.apply(reader.handle(), kv));
        return new Cursor.RowMapper<>() {
            /** The last read-ahead's rows and what they decoded to; the cursor maps them in order. */
            private List<KeyValue> rows = List.of();
            private List<R> decoded = List.of();
            private int next;

            @Override
            public int prefetchSize() {
                return ahead.prefetchSize();
            }

            @Override
            public void prefetch(DbReader reader, List<KeyValue> rows) {
                List<R> d = new ArrayList<>(rows.size());
                for (KeyValue kv : rows) d.add(decode.apply(reader.handle(), kv));
                this.rows = rows;
                this.decoded = List.copyOf(d);
                this.next = 0;
                ahead.prefetch(reader, decoded);
            }

            @Override
            public T map(DbReader reader, KeyValue kv) {
                boolean read = next < rows.size() && rows.get(next) == kv;
                return ahead.map(reader, read ? decoded.get(next++) : decode.apply(reader.handle(), kv));
            }
        };
    }

    /** Live documents by id (RFC B's by-id subspace), winners only. */
    public <T> Cursor<T> allDocs(IdRange range, ScanProperties props, byte[] continuation, Mapper<DocInfo, T> mapper) {
        return allDocs(null, range, props, continuation, mapper);
    }

    /**
     * {@link #allDocs(IdRange, ScanProperties, byte[], Mapper)} within one partition (null: the
     * whole database): the range's bounds are clamped to the partition's ids, so the scan is one
     * range of the by-id subspace however large the database is.
     */
    public <T> Cursor<T> allDocs(String partition, IdRange range, ScanProperties props, byte[] continuation, Mapper<DocInfo, T> mapper) {
        byte[][] all = partition == null ? ByIdSubspace.range(opened)
                : new byte[][] {ByIdSubspace.key(opened, Partitions.startId(partition)), ByIdSubspace.key(opened, Partitions.endId(partition))};
        Cursor.Range r = new Cursor.Range(opened.space().pack(KeySpace.Db.BY_ID), all[0], all[1]);
        byte[][] b = range.bounds(all, id -> ByIdSubspace.key(opened, id), props.reverse());
        return new Cursor<>(this, new Cursor.Range(r.prefix(), b[0], b[1]), props, continuation,
                (reader, kv) -> mapper.map(reader, ByIdSubspace.decode(reader.handle(), kv)));
    }

    /**
     * The changes feed after {@code since} (null: from the start), one row per document at its
     * last change; read backwards from the end with {@code props.reverse()}. Its continuation is
     * {@link Sequence#fromContinuation a sequence}: a feed resumes after the last change it read.
     */
    public <T> Cursor<T> changes(Sequence since, ScanProperties props, Mapper<Change, T> mapper) {
        return changes(since, null, props, mapper);
    }

    /** {@link #changes(Sequence, ScanProperties, Mapper)} up to and including {@code through} (null: to the end). */
    public <T> Cursor<T> changes(Sequence since, Sequence through, ScanProperties props, Mapper<Change, T> mapper) {
        byte[][] r = ChangesSubspace.range(opened);
        byte[] begin = props.reverse() || since == null ? r[0] : ChangesSubspace.after(opened, since);
        byte[] end = through == null ? r[1] : ChangesSubspace.after(opened, through);
        return new Cursor<>(this, new Cursor.Range(ChangesSubspace.prefix(opened), begin, end), props, null,
                rowMapper(mapper, ChangesSubspace::decode));
    }

    /** How many changes lie after {@code after} and up to {@code through} (null: either end open), counted up to {@code cap}. */
    public long countChanges(Sequence after, Sequence through, long cap) {
        return read(r -> ChangesSubspace.count(r.tx(), r.handle(), after, through, cap));
    }

    /** {@code _local} documents by id; bodies only if {@code includeBodies}. */
    public Cursor<LocalDoc> localDocs(IdRange range, ScanProperties props, byte[] continuation, boolean includeBodies) {
        byte[][] all = opened.space().range(KeySpace.Db.LOCAL);
        byte[][] b = range.bounds(all, id -> LocalDocuments.prefix(opened, id), props.reverse());
        return new Cursor<>(this, new Cursor.Range(opened.space().pack(KeySpace.Db.LOCAL), b[0], b[1]), props, continuation,
                (reader, kv) -> LocalDocuments.decodeRow(reader, kv, includeBodies));
    }

    /** Completes when any document of the database is written after this call (or spuriously, as FDB's watches may). */
    public CompletableFuture<Void> watchWrites() {
        return storage.kv().run(tx -> tx.watch(DbStats.key(handle(tx), DbStats.Counter.WRITES)));
    }

    // ---------------------------------------------------------------- _local

    /** A {@code _local} document: 404 "missing" if there is none. */
    public LocalDoc getLocal(String id) {
        LocalDoc d = read(r -> r.local(id));
        if (d == null) throw StorageException.notFound("missing");
        return d;
    }

    /**
     * Writes a {@code _local} document whose current revision is {@code baseRev} (null, "0" or
     * "0-0" for a new one), guarded like every document write: a retry after a 1021 that did
     * commit returns that write's revision.
     */
    public LocalDoc putLocal(String id, String baseRev, boolean deleted, ObjectNode body) {
        if (!deleted) storage.checkDocumentSize(ExplodedJson.externalSize(body));
        LocalDoc d = runGuarded((tx, db) -> LocalDocuments.write(tx, db, id, baseRev, deleted, body),
                x -> Tuple.from(x.revNumber()).pack(),
                bytes -> new LocalDoc(id, Tuple.fromBytes(bytes).getLong(0), body));
        timer().increment(StorageCounts.LOCAL_DOCUMENTS_WRITTEN);
        return d;
    }

    /**
     * Writes a {@code _local} document as CouchDB 3 does ({@code increment_local_doc_revs}): no
     * revision is checked, the last write wins, and the new revision is the one the client names
     * plus one ({@code 0-1} when it names none, even over an existing document); a deletion
     * answers {@code 0-0} and leaves nothing, so the next write starts again at {@code 0-1}.
     * Retrying after a 1021 writes the same keys again, so no transaction id is needed.
     *
     * @param clientRev the {@code _rev} the client sent ({@code 0-N}), or null
     */
    public LocalDoc writeLocal(String id, String clientRev, boolean deleted, ObjectNode body) {
        long n = deleted ? 0 : LocalDocuments.nextRevNumber(clientRev);
        if (!deleted) storage.checkDocumentSize(ExplodedJson.externalSize(body));
        LocalDoc d = run((tx, db) -> LocalDocuments.overwrite(tx, db, id, n, deleted, body));
        timer().increment(StorageCounts.LOCAL_DOCUMENTS_WRITTEN);
        return d;
    }

    // ---------------------------------------------------------------- attachments

    /** See {@link AttachmentStore#store}: a body stored ahead of its document, a megabyte per transaction. */
    public StoredAttachment storeAttachment(String docId, String name, InputStream in) {
        return storage.attachments().store(this, docId, name, in);
    }

    /** See {@link AttachmentStore#read}: small bodies inline in {@code meta}, large ones stored ahead. */
    public StoredAttachment readAttachment(String docId, String name, ObjectNode meta, InputStream in) {
        return storage.attachments().read(this, docId, name, meta, in);
    }

    /** Chunks of an attachment from {@code from}, in a transaction of their own: chunks never change, so a stream may span many. */
    public List<byte[]> attachmentChunks(String docId, String digest, long from, int limit) {
        List<byte[]> chunks = read(r -> AttachmentsSubspace.chunks(r.tx(), r.handle(), docId, digest, from, limit));
        long bytes = 0;
        for (byte[] c : chunks) bytes += c.length;
        timer().add(StorageCounts.ATTACHMENT_BYTES_READ, bytes);
        return chunks;
    }

    /**
     * An attachment's body as a stream, chunks read a few per transaction: identity bytes if
     * {@code decode} (gunzipped when {@code storedMeta}, its metadata as stored, says gzip), else
     * the stored bytes.
     */
    public InputStream attachmentStream(String docId, JsonNode storedMeta, boolean decode) {
        InputStream raw = new ChunkStream(this, docId, storedMeta.path("digest").asText());
        return decode && AttachmentsSubspace.gzipped(storedMeta) ? Gzip.decode(raw) : raw;
    }

    /** The size of an attachment's chunks, as {@link #attachmentChunks} returns them. */
    public static int attachmentChunkSize() {
        return AttachmentsSubspace.CHUNK;
    }

    /** Clears attachment chunks no leaf names any more, and uploads abandoned for an hour ({@code _compact}). */
    public int sweepAttachments() {
        return storage.attachments().sweep(this);
    }

    // ---------------------------------------------------------------- metadata

    /** Counts, sizes and update_seq (RFC B), read without conflicting with writers. */
    public DbInfo info() {
        return read(DbReader::info);
    }

    /** A partition's counters ({@link PartitionStats}), read without conflicting with writers: zeros for one never written. */
    public DbStats.Snapshot partitionInfo(String partition) {
        return read(r -> PartitionStats.read(r.tx(), r.handle(), partition));
    }

    public void setSecurity(String securityJson) {
        storage.directory().setSecurity(this::handle, securityJson);
    }

    public void setRevsLimit(int limit) {
        storage.directory().setRevsLimit(this::handle, limit);
    }

    private static byte[] max(byte[] a, byte[] b) {
        return dev.chaise.kv.Keys.compare(a, b) >= 0 ? a : b;
    }

    private static byte[] min(byte[] a, byte[] b) {
        return dev.chaise.kv.Keys.compare(a, b) <= 0 ? a : b;
    }
}

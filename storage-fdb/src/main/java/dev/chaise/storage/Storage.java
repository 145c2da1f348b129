package dev.chaise.storage;

import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

/**
 * The document layer of one deployment: the root of storage's API, as {@code fabric2_db} is
 * CouchDB's on FoundationDB. It opens {@link Database}s, which every layer above reaches
 * documents, changes, {@code _local} documents, attachments and security through; nothing above
 * storage opens a transaction on documents of its own.
 *
 * <p>Subspace owners above storage (the views' indexes and job queue) still take the KV store
 * ({@link #kv()}) for their own keys, and read documents in their transactions through
 * {@link DbReader}.
 */
public final class Storage implements AutoCloseable {
    /** RFC A: 1 MB of JSON. */
    public static final long DEFAULT_MAX_DOCUMENT_SIZE = 1_000_000;
    /** CouchDB's default: 1 GiB. Large attachments are stored a megabyte per transaction, so FDB's limits do not bound them. */
    public static final long DEFAULT_MAX_ATTACHMENT_SIZE = 1L << 30;
    /** CouchDB's {@code [couchdb] max_partition_size}: 10 GiB. */
    public static final long DEFAULT_MAX_PARTITION_SIZE = 10L << 30;

    private final KvStore kv;
    private final DatabaseDirectory directory;
    private final TxIds txIds;
    private final DbUpdates dbUpdates;
    private final List<DocumentWriteHook> hooks = new CopyOnWriteArrayList<>();
    private final List<PurgeHook> purgeHooks = new CopyOnWriteArrayList<>();
    private final List<DbPolicy> policies = new CopyOnWriteArrayList<>();
    private final DocumentWriter writer;
    private final BatchWriter batches;
    private final AttachmentStore attachments;
    private final PurgeWriter purges;
    private volatile long maxDocumentSize = DEFAULT_MAX_DOCUMENT_SIZE;
    private volatile long maxAttachmentSize = DEFAULT_MAX_ATTACHMENT_SIZE;
    private volatile long maxPartitionSize = DEFAULT_MAX_PARTITION_SIZE;
    private volatile AttachmentCompression compression = AttachmentCompression.DEFAULT;
    private final dev.chaise.stats.Stats stats = new dev.chaise.stats.Stats();
    final StorageStats counts;

    /** @param defaultSecurityJson the {@code _security} object of a new database */
    public Storage(KvStore kv, String defaultSecurityJson) {
        this.kv = kv;
        this.counts = new StorageStats(stats, kv.timer(), this::openDatabases);
        this.directory = new DatabaseDirectory(kv, defaultSecurityJson, counts.dbOpenTime);
        this.txIds = new TxIds(kv);
        this.dbUpdates = new DbUpdates(kv);
        this.attachments = new AttachmentStore(this);
        this.writer = new DocumentWriter(this);
        this.batches = new BatchWriter(this);
        this.purges = new PurgeWriter(this);
    }

    /** The server's metrics registry: storage counts in it, and so do the layers above. */
    public dev.chaise.stats.Stats stats() {
        return stats;
    }

    /** {@code [couchdb] max_document_size}: larger documents get 413 document_too_large. May change at runtime. */
    public Storage maxDocumentSize(long bytes) {
        this.maxDocumentSize = bytes;
        return this;
    }

    /** {@code [couchdb] max_attachment_size}: larger attachments get 413 attachment_too_large. May change at runtime. */
    public Storage maxAttachmentSize(long bytes) {
        this.maxAttachmentSize = bytes;
        return this;
    }

    /** {@code [attachments] compressible_types} and {@code compression_level}: which attachments are stored gzipped. May change at runtime. */
    public Storage attachmentCompression(AttachmentCompression c) {
        this.compression = c;
        return this;
    }

    AttachmentCompression compression() {
        return compression;
    }

    /** How many transactions one big batch of distinct documents may run at once (default: the cores). */
    public Storage parallelism(int parts) {
        batches.parallelism(parts);
        return this;
    }

    /**
     * {@code [couchdb] max_partition_size}: an interactive write that would grow a partition
     * whose documents' JSON ({@code sizes.external}) has reached it is refused
     * ({@code partition_overflow}); 0 or less: no limit.
     */
    public Storage maxPartitionSize(long bytes) {
        this.maxPartitionSize = bytes;
        return this;
    }

    public long maxPartitionSize() {
        return maxPartitionSize;
    }

    public long maxDocumentSize() {
        return maxDocumentSize;
    }

    public long maxAttachmentSize() {
        return maxAttachmentSize;
    }

    /** Throws 413 {@code document_too_large} for a body of {@code size} JSON bytes over the limit: every kind of document alike. */
    void checkDocumentSize(long size) {
        if (size > maxDocumentSize) {
            throw new StorageException(StorageException.Kind.DOCUMENT_TOO_LARGE,
                    "Document exceeds the maximum document size of " + maxDocumentSize + " bytes");
        }
    }

    /** Work that commits with every document write (interactive views, autoupdate marks). */
    public void addWriteHook(DocumentWriteHook hook) {
        hooks.add(hook);
    }

    List<DocumentWriteHook> hooks() {
        return hooks;
    }

    /** Work that commits with every purge (views drop the purged documents' rows). */
    public void addPurgeHook(PurgeHook hook) {
        purgeHooks.add(hook);
    }

    List<PurgeHook> purgeHooks() {
        return purgeHooks;
    }

    PurgeWriter purges() {
        return purges;
    }

    // ---------------------------------------------------------------- databases

    /** CouchDB's rule for database names: 400 {@code illegal_database_name}. */
    public static void validateDatabaseName(String name) {
        DatabaseDirectory.validateName(name);
    }

    /** Opens a database: 400 {@code illegal_database_name}, 404 if it does not exist. */
    public Database open(String name) {
        validateDatabaseName(name);
        return new Database(this, directory.open(name));
    }

    /**
     * Opens a database for {@code user} ({@link SecuredDb}): 400 for an illegal name, 404 if it
     * does not exist (whoever asks, as CouchDB), then 401/403 if {@code user} may not at {@code level}.
     */
    public SecuredDb open(String name, UserCtx user, SecuredDb.Level level) {
        return open(open(name), user, level);
    }

    /**
     * Database {@code name}'s info as {@code user} may see it in a listing of databases
     * ({@code _dbs_info}, where CouchDB asks for no membership): 400 for an illegal name, 404 if it
     * does not exist; in an access database, counts of the user's own documents only
     * ({@link SecuredDb#info()}).
     */
    public DbInfo listedInfo(String name, UserCtx user) {
        return SecuredDb.listed(open(name), user, policies);
    }

    /**
     * Opens {@code name} for {@code user} and reads it in one snapshot transaction: the directory
     * entry that {@link #open(String, UserCtx, SecuredDb.Level)} would read in a transaction of its
     * own is read in the read's (validating the cached handle, {@link DatabaseDirectory#open}), so
     * the {@code _security} that admits the user is the one at the read's version, on any backend
     * and however many servers share it. Throws as {@link #open(String, UserCtx, SecuredDb.Level)}
     * does before {@code body} runs. {@code body} may run more than once (a retried transaction).
     * One transaction instead of two: a document GET's CPU (issue 27).
     */
    public <T> T read(String name, UserCtx user, SecuredDb.Level level, java.util.function.BiFunction<SecuredDb, DbReader, T> body) {
        validateDatabaseName(name);
        return kv.run(tx -> {
            DbHandle h = directory.open(tx, name);
            SecuredDb db = open(new Database(this, h), user, level);
            return body.apply(db, DbReader.of(tx.snapshot(), h, timer()));
        });
    }

    SecuredDb open(Database db, UserCtx user, SecuredDb.Level level) {
        return SecuredDb.open(db, user, level, policies);
    }

    /**
     * {@link #open(String, UserCtx, SecuredDb.Level)} for a request whose one use of the database
     * is one {@link SecuredDb#update} of one document (a document PUT): from the cached handle,
     * with no transaction of its own, when one is cached. The write's transaction, which reads the
     * directory entry anyway, then checks that the entry is still the one the user was admitted
     * with; if it is not (a {@code _security} edit, a deletion or a re-creation, through any
     * server), the write opens the database again in a transaction and runs as that opening
     * allows. So the {@code _security} that admits the write is the one at its version, as
     * {@link #read} does for a read. A refusal from the cache is not trusted either: it is asked
     * again in a transaction, as is a name with nothing cached (404). One transaction instead of
     * two per PUT (issue 27).
     */
    public SecuredDb openToUpdate(String name, UserCtx user, SecuredDb.Level level) {
        validateDatabaseName(name);
        DbHandle cached = directory.cached(name);
        if (cached != null) {
            try {
                return SecuredDb.open(new Database(this, cached), user, level, policies).checkedAtWrite(level);
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.UNAUTHORIZED && e.kind() != StorageException.Kind.FORBIDDEN) throw e;
            }
        }
        return open(name, user, level);
    }

    /**
     * A rule every {@link SecuredDb} applies from now on, after those added before it; one of the
     * same class as a rule already added replaces it in its place (a server wired again on the
     * same storage, as tests do, does not apply its rules twice).
     */
    public synchronized void addPolicy(DbPolicy policy) {
        for (int i = 0; i < policies.size(); i++) {
            if (policies.get(i).getClass() == policy.getClass()) {
                policies.set(i, policy);
                return;
            }
        }
        policies.add(policy);
    }

    /** Creates a database: 412 {@code file_exists} if it does. */
    public Database create(String name) {
        return create(name, DbProps.PLAIN);
    }

    /** Creates a database as {@code props} make it (fixed for its life): 412 {@code file_exists} if it does. */
    public Database create(String name, DbProps props) {
        Database db = new Database(this, directory.create(name, props));
        if (!policies.isEmpty()) {
            SecuredDb asServer = open(db, UserCtx.server("create"), SecuredDb.Level.MEMBER);
            for (DbPolicy p : policies) p.created(asServer);
        }
        return db;
    }

    /** Deletes the database and every key it had: 404 if it does not exist. */
    public void delete(String name) {
        directory.delete(name);
    }

    public boolean exists(String name) {
        return directory.exists(name);
    }

    /** Database names in order, as {@code _all_dbs} wants them: inclusive bounds (null for none), {@code limit} 0 for all. */
    public List<String> list(String startKey, String endKey, boolean descending, int skip, int limit) {
        return directory.list(startKey, endKey, descending, skip, limit);
    }

    /** A deployment-wide value ({@link ServerMetadata}), created by the first server that asks. */
    public String serverValue(String name, Supplier<String> initial) {
        return ServerMetadata.getOrCreate(kv, name, initial);
    }

    // ---------------------------------------------------------------- _db_updates

    /**
     * {@code _db_updates}: databases created, updated and deleted, in commit order, after
     * {@code since} (null: from the start). Each database appears once, at its last event.
     */
    public Cursor<DbUpdate> dbUpdates(String since, ScanProperties props) {
        byte[][] r = DbUpdates.feedRange();
        byte[] continuation = since == null ? null : com.apple.foundationdb.tuple.Tuple.from(parseUpdateSeq(since)).pack();
        Cursor.Range range = new Cursor.Range(DbUpdates.feedPrefix(), r[0], r[1]);
        Cursor.Reads reads = body -> kv.run(tx -> body.apply(DbReader.of(tx.snapshot(), null, timer())));
        return new Cursor<>(reads, timer(), range, props, continuation, (reader, row) -> {
            DbUpdates.Event e = DbUpdates.decode(row);
            return new DbUpdate(e.dbName(), e.type(), java.util.HexFormat.of().formatHex(e.seq().getBytes()));
        });
    }

    /** The newest {@code _db_updates} event's seq, or null if there is none ({@code since=now}). */
    public String dbUpdatesNow() {
        var last = kv.run(tx -> DbUpdates.last(tx.snapshot()));
        return last == null ? null : java.util.HexFormat.of().formatHex(last.getBytes());
    }

    /** Completes when an event is added to {@code _db_updates} after this call (or spuriously). */
    public java.util.concurrent.CompletableFuture<Void> watchDbUpdates() {
        return kv.run(tx -> tx.watch(DbUpdates.bumpKey()));
    }

    /** Records the marked databases' {@code updated} events now, rather than within half a second. */
    public void flushDbUpdates() {
        dbUpdates.flush();
    }

    private static com.apple.foundationdb.tuple.Versionstamp parseUpdateSeq(String seq) {
        if (seq.length() != 24 || !seq.chars().allMatch(c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            throw StorageException.badRequest("Malformed sequence supplied in 'since' parameter.");
        }
        return com.apple.foundationdb.tuple.Versionstamp.fromBytes(java.util.HexFormat.of().parseHex(seq));
    }

    DbUpdates dbUpdates() {
        return dbUpdates;
    }

    // ---------------------------------------------------------------- for subspace owners

    /** The KV store, for the owners of subspaces above storage (views' indexes, the job queue). */
    public KvStore kv() {
        return kv;
    }

    /** RFC D's guard against {@code commit_unknown_result}, for writes of other subspaces. */
    public TxIds txIds() {
        return txIds;
    }

    /** The one timer: the KV seam's waits and counts, and {@link StorageCounts}. */
    public StoreTimer timer() {
        return kv.timer();
    }

    // ---------------------------------------------------------------- for operators

    /** A timer entry: how many, and their total time (0 for counts). */
    public record Timing(long count, long totalNanos) {}

    /**
     * Every wait and count of the one timer by name ({@code wait.COMMIT}, {@code count.DOCUMENTS_READ}):
     * what the metrics export, whatever names the layers add.
     */
    public java.util.Map<String, Timing> timings() {
        java.util.Map<String, Timing> out = new java.util.TreeMap<>();
        kv.timer().snapshot().forEach((k, v) -> out.put(k, new Timing(v.count(), v.totalNanos())));
        return out;
    }

    /** Database handles cached now: CouchDB's open_databases. */
    public int openDatabases() {
        return directory.openHandles();
    }

    /** Whether a read completes on the calling thread without waiting for another ({@link KvStore#readsNeverWait}). */
    public boolean readsNeverWait() {
        return kv.readsNeverWait();
    }

    /** {@code embedded}, {@code embedded-memory} or {@code fdb}. */
    public String backendName() {
        return kv.backendName();
    }

    /** The engine's own figures (RocksDB's sizes, pending compaction, stalls), for {@code _system}. */
    public java.util.Map<String, Object> engineFigures() {
        return kv.engineFigures();
    }

    /** A key nothing writes (no tuple starts with 0x00): reading it proves the store answers. */
    private static final byte[] PROBE_KEY = {0x00, 'c', 'h', 'a', 'i', 's', 'e', '-', 'u', 'p'};

    /** One read (a read version, a key): throws if storage cannot serve now. {@code /_up} bounds it in time. */
    public void checkReadable() {
        try (dev.chaise.kv.Transaction tx = kv.createTransaction()) {
            tx.getReadVersion();
            tx.get(PROBE_KEY);
        }
    }

    DatabaseDirectory directory() {
        return directory;
    }

    DocumentWriter writer() {
        return writer;
    }

    BatchWriter batches() {
        return batches;
    }

    AttachmentStore attachments() {
        return attachments;
    }

    @Override
    public void close() {
        dbUpdates.close();
        txIds.close();
    }
}

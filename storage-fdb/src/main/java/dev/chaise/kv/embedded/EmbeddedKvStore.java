package dev.chaise.kv.embedded;

import dev.chaise.kv.KvException;
import dev.chaise.kv.KvLimits;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import dev.chaise.kv.Versionstamps;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.Env;
import org.rocksdb.FlushOptions;
import org.rocksdb.LRUCache;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.Snapshot;
import org.rocksdb.RocksMemEnv;
import org.rocksdb.WriteOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The default backend: RocksDB as a plain ordered store, with FoundationDB's transaction model
 * supplied by this engine (see docs/architecture.md).
 *
 * <pre>
 * RocksDB
 * ├── column family "default"   user keys, exactly as the layers above wrote them
 * └── column family "chaise"    engine metadata
 *     └── "version"             the last commit's 10-byte versionstamp (so versions never go back)
 * </pre>
 *
 * <p>Versions follow FDB's clock, about a million a second, so the five-second MVCC window is
 * measured in versions as on a cluster. A read version is pinned to a shared RocksDB snapshot;
 * commits go through the single {@link Sequencer}.
 */
public final class EmbeddedKvStore implements KvStore {
    static final byte[] VERSION_KEY = "version".getBytes(StandardCharsets.US_ASCII);
    private static final Logger log = LoggerFactory.getLogger(EmbeddedKvStore.class);
    /** After a restart, versions jump ahead a second, as FDB's jump after recovery. */
    private static final long RECOVERY_JUMP = KvLimits.VERSIONS_PER_SECOND;

    static {
        RocksDB.loadLibrary();
    }

    record Lease(ReadView view, long readVersion) {}

    private final EmbeddedOptions options;
    private final StoreTimer timer = new StoreTimer();
    private final List<AutoCloseable> natives = new ArrayList<>(); // closed in reverse order
    private final RocksDB db;
    private final ColumnFamilyHandle dataCf;
    private final ColumnFamilyHandle metaCf;
    private final WriteOptions writeOptions;
    private final WriteOptions rangeWriteOptions;
    private final Watches watches;
    private final Sequencer sequencer;
    private final WalHeadroom walHeadroom; // null: nothing fsynced

    private final Object versionLock = new Object();
    /**
     * Shared by every use of RocksDB objects outside the sequencer (reads, iterators, snapshot
     * releases); {@link #close} takes it exclusively, so it never frees what a read is using.
     */
    private final ReentrantReadWriteLock nativeGate = new ReentrantReadWriteLock();
    private final long clockOrigin = System.nanoTime();
    private final long startVersion;
    private ReadView current;
    /**
     * Under {@code versionLock}: the versions of the read views a transaction may still read at,
     * the current one included. Every read version issued is at or above the oldest, so the
     * conflict history keeps nothing at or below it ({@link #oldestReadableView}).
     */
    private final java.util.TreeSet<Long> liveViews = new java.util.TreeSet<>();
    private long lastCommitted;
    private long lastAssigned;
    private int inFlight;
    private long maxIssued;
    private volatile boolean closed;
    private final ScheduledExecutorService idleFlusher; // null: no idle flush
    private final LongAdder idleFlushes = new LongAdder();
    private final List<long[]> cpuSamples = new ArrayList<>(); // {nanoTime, process CPU ns}: the idle flusher's thread only
    private boolean flushedWhileQuiet; // likewise

    private EmbeddedKvStore(EmbeddedOptions options) throws RocksDBException {
        this.options = options;
        String path;
        DBOptions dbOptions = track(new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)
                .setMaxBackgroundJobs(2).setIncreaseParallelism(Math.max(2, Runtime.getRuntime().availableProcessors()))
                .setUnorderedWrite(true));
        if (options.isInMemory()) {
            Env env = track(new RocksMemEnv(Env.getDefault()));
            dbOptions.setEnv(env);
            path = "/chaise-memory";
        } else {
            try {
                Files.createDirectories(options.directory());
            } catch (java.io.IOException e) {
                throw new KvException(KvException.IO_ERROR, "io_error: cannot create " + options.directory() + ": " + e.getMessage(), e);
            }
            path = options.directory().toAbsolutePath().toString();
            // A WAL that overwrites an obsolete one keeps its size: a commit's fdatasync then has no
            // size change to journal (87-103 us against 125-131 us appending, docs/benchmarks.md).
            // Its records carry the log's number, so recovery stops at the old tail (and RocksDB
            // keeps recycling only in recovery modes that allow it: point-in-time here).
            dbOptions.setRecycleLogFileNum(1);
        }
        BlockBasedTableConfig table = new BlockBasedTableConfig()
                .setBlockCache(track(new LRUCache(128L << 20)))
                .setFilterPolicy(track(new BloomFilter(10)))
                .setWholeKeyFiltering(true);
        ColumnFamilyOptions cfOptions = track(columnFamilyDefaults().setTableFormatConfig(table)
                .setCompressionType(CompressionType.LZ4_COMPRESSION));
        // Tuned on bulk loads (DocumentStoreBench, docs/benchmarks.md), where compaction took a third
        // of the CPU: every L0 file spans every subspace (bodies, revisions, by-id, changes), so each
        // L0->L1 compaction rewrites most of L1. Bigger memtables and a later L0 trigger rewrite L1
        // less often; L0 and L1 are short-lived, so compressing them costs more than it saves.
        // No bloom filter on the last level: reads of absent keys there are range seeks (RFC C's
        // insert read), which filters never serve, and building them is compaction CPU.
        // 256 MB memtables: a flush (0.5 s of a core for 128 MB) slowed the requests it overlapped
        // by a third on two cores; twice the memtable takes a load of about 190,000 documents
        // without one, for 15-45 MB more at the peak RSS (docs/benchmarks.md, "the memtable's size").
        cfOptions.setWriteBufferSize(256L << 20).setOptimizeFiltersForHits(true)
                .setLevel0FileNumCompactionTrigger(8).setLevel0SlowdownWritesTrigger(30).setLevel0StopWritesTrigger(48)
                .setCompressionPerLevel(List.of(CompressionType.NO_COMPRESSION, CompressionType.NO_COMPRESSION,
                        CompressionType.LZ4_COMPRESSION, CompressionType.LZ4_COMPRESSION, CompressionType.LZ4_COMPRESSION,
                        CompressionType.LZ4_COMPRESSION, CompressionType.LZ4_COMPRESSION));
        List<ColumnFamilyDescriptor> cfs = List.of(
                new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, cfOptions),
                new ColumnFamilyDescriptor("chaise".getBytes(StandardCharsets.US_ASCII), cfOptions));
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        this.db = RocksDB.open(dbOptions, path, cfs, handles);
        this.dataCf = handles.get(0);
        this.metaCf = handles.get(1);
        // Batches are written unsynced and made durable together by syncLog(): one fsync a group.
        // Unordered writes (the DB option above): the Sequencer issues a batch's big writes one after
        // another, each once the one before has its sequence numbers, so that one's memtable insert
        // overlaps the next one's (docs/benchmarks.md, "unordered writes"). Their concurrent insert
        // costs twice the sequential one a key without a position kept per batch; with it, a batch
        // that also carries a range deletion loses writes (RocksDB 10.10.1: the position is kept
        // per memtable and used in its range-deletion table too), so those go without.
        this.writeOptions = track(new WriteOptions().setSync(false).setDisableWAL(options.isInMemory())
                .setMemtableInsertHintPerBatch(true));
        this.rangeWriteOptions = track(new WriteOptions().setSync(false).setDisableWAL(options.isInMemory()));
        byte[] last = db.get(metaCf, VERSION_KEY);
        this.startVersion = (last == null ? 0 : Versionstamps.commitVersion(last)) + RECOVERY_JUMP;
        this.lastCommitted = startVersion;
        this.lastAssigned = startVersion;
        this.current = new ReadView(this, startVersion, db.getSnapshot());
        liveViews.add(startVersion);
        this.watches = new Watches(this::latest, options.faults());
        this.walHeadroom = options.isInMemory() || !options.sync() ? null : new WalHeadroom(options.directory());
        this.sequencer = new Sequencer(this, options.faults(), options.commitTimeout().toNanos());
        this.idleFlusher = options.idleFlush() == null || options.isInMemory() ? null : startIdleFlusher(options.idleFlush());
    }

    private ScheduledExecutorService startIdleFlusher(EmbeddedOptions.IdleFlush flush) {
        ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon().name("chaise-kv-idle-flush").factory());
        long period = Math.max(10, flush.after().toMillis() / 5);
        s.scheduleWithFixedDelay(() -> idleCheck(flush), period, period, TimeUnit.MILLISECONDS);
        return s;
    }

    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();

    /**
     * Every fifth of the idle time: once the whole process (requests, background jobs, the JIT)
     * has used under the given share of a core over all of it, flush the memtable if it holds
     * enough to be worth it, once per quiet spell. A flush of a full memtable is half a second or
     * more of a core; inside a burst of writes it slows every request it overlaps
     * (docs/benchmarks.md, "the memtable's size"), while here it uses time nothing else wanted.
     * Best effort: a flush that fails now fails again, and visibly, when RocksDB flushes for itself.
     */
    private void idleCheck(EmbeddedOptions.IdleFlush flush) {
        long now = System.nanoTime();
        long cpu = OS.getProcessCpuTime();
        cpuSamples.add(new long[] {now, cpu});
        while (cpuSamples.size() > 1 && now - cpuSamples.get(1)[0] >= flush.after().toNanos()) cpuSamples.remove(0);
        long[] first = cpuSamples.get(0); // the newest sample at least a window old
        if (now - first[0] < flush.after().toNanos()) return; // not a whole window yet
        boolean quiet = cpu - first[1] < flush.maxCpuShare() * (now - first[0]);
        if (!quiet) {
            flushedWhileQuiet = false;
            return;
        }
        if (flushedWhileQuiet) return;
        flushedWhileQuiet = true;
        nativeGate.readLock().lock();
        try (FlushOptions o = new FlushOptions().setWaitForFlush(false)) {
            if (closed || db.getLongProperty(dataCf, "rocksdb.cur-size-active-mem-table") < flush.minBytes()) return;
            db.flush(o, List.of(dataCf, metaCf));
            idleFlushes.increment();
        } catch (RocksDBException | RuntimeException e) {
            log.warn("idle flush failed: {}", e.toString());
        } finally {
            nativeGate.readLock().unlock();
        }
    }

    public static EmbeddedKvStore open(EmbeddedOptions options) {
        try {
            return new EmbeddedKvStore(options);
        } catch (RocksDBException e) {
            throw new KvException(KvException.IO_ERROR, "io_error: cannot open the embedded store: " + e.getMessage(), e);
        }
    }

    /**
     * RocksDB's defaults but one that RocksJava has no setter for. Every flush and compaction runs
     * under the MVCC window's live snapshots, so its output keeps versions those snapshots could
     * read; once they are released RocksDB rewrites a bottommost file just to drop them
     * ("BottommostFiles" in its LOG). On a store whose data all sits in L0 that is every flushed
     * file, rewritten at once: 0.2-0.3 s of CPU in couchbench's bulk phase, about a tenth of it
     * (docs/benchmarks.md). An hour's delay leaves that to files that are still there an hour later.
     */
    private static ColumnFamilyOptions columnFamilyDefaults() {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("bottommost_file_compaction_delay", "3600");
        ColumnFamilyOptions o = ColumnFamilyOptions.getColumnFamilyOptionsFromProps(p);
        if (o == null) throw new IllegalStateException("RocksDB refused the column family options " + p);
        return o;
    }

    private <T extends AutoCloseable> T track(T resource) {
        natives.add(resource);
        return resource;
    }

    @Override
    public Transaction createTransaction() {
        if (closed) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
        return new EmbeddedTransaction(this);
    }

    @Override
    public StoreTimer timer() {
        return timer;
    }

    /**
     * True: a read is RocksDB's {@code Get} or iterator on the calling thread (a page-cache miss is
     * a disk read on that thread, never a wait for another). The locks a read takes are held by
     * others only for constant work: {@code versionLock} (a read version, a batch's begin and end,
     * never across I/O), a transaction's monitor (its own thread's), and {@code nativeGate}, which
     * a writer holds only in {@link #close}. A read-only commit never reaches the {@link Sequencer}.
     */
    @Override
    public boolean readsNeverWait() {
        return true;
    }

    @Override
    public String backendName() {
        return options.isInMemory() ? "embedded-memory" : "embedded";
    }

    /** RocksDB's lock on its directory (or an in-memory store's single owner) lets one process in. */
    @Override
    public boolean singleProcess() {
        return true;
    }

    public EmbeddedOptions options() {
        return options;
    }

    /** RocksDB's properties, summed over the column families; names without the {@code rocksdb.} prefix. */
    private static final List<String> LONG_PROPERTIES = List.of("total-sst-files-size", "live-sst-files-size", "estimate-live-data-size",
            "cur-size-all-mem-tables", "estimate-pending-compaction-bytes", "num-running-compactions", "num-running-flushes",
            "actual-delayed-write-rate", "is-write-stopped", "estimate-num-keys", "num-live-versions");

    @Override
    public java.util.Map<String, Object> engineFigures() {
        java.util.Map<String, Object> out = new java.util.LinkedHashMap<>();
        out.put("engine", "rocksdb");
        out.put("directory", options.isInMemory() ? null : options.directory().toAbsolutePath().toString());
        synchronized (figuresLock) { // close() waits for this, so RocksDB is not closed under the reads
            if (closed) return out;
            readFigures(out);
        }
        return out;
    }

    private final Object figuresLock = new Object();

    private void readFigures(java.util.Map<String, Object> out) {
        try {
            for (String p : LONG_PROPERTIES) {
                long sum = 0;
                for (ColumnFamilyHandle cf : List.of(dataCf, metaCf)) sum += db.getLongProperty(cf, "rocksdb." + p);
                out.put(p.replace('-', '_'), sum);
            }
            // Both column families share one cache: its usage once, not summed.
            out.put("block_cache_usage", db.getLongProperty(dataCf, "rocksdb.block-cache-usage"));
            // Write stalls since start, from the column families' statistics.
            long stops = 0;
            long slowdowns = 0;
            for (ColumnFamilyHandle cf : List.of(dataCf, metaCf)) {
                java.util.Map<String, String> stats = db.getMapProperty(cf, "rocksdb.cfstats");
                stops += (long) Double.parseDouble(stats.getOrDefault("io_stalls.total_stop", "0"));
                slowdowns += (long) Double.parseDouble(stats.getOrDefault("io_stalls.total_slowdown", "0"));
            }
            out.put("write_stalls_stop", stops);
            out.put("write_stalls_slowdown", slowdowns);
            out.put("idle_flushes", idleFlushes.sum());
        } catch (RocksDBException | RuntimeException e) {
            out.put("error", String.valueOf(e.getMessage()));
        }
    }

    // ---- versions

    /** FDB's clock: versions advance about a million a second, from the last durable version. */
    long timeVersion() {
        return startVersion + (System.nanoTime() - clockOrigin) / 1_000;
    }

    /**
     * A read version and the snapshot that holds every commit at or below it. While no batch is
     * in flight the clock's version is safe (the next batch commits above it); while some are,
     * the last published version is.
     */
    Lease acquireReadView() {
        long start = System.nanoTime();
        try {
            synchronized (versionLock) {
                if (closed) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
                current.retain();
                return new Lease(current, issueReadVersion());
            }
        } finally {
            timer.record(StoreTimer.Waits.GET_READ_VERSION, System.nanoTime() - start);
        }
    }

    /** Under {@code versionLock}: the read version for a transaction starting now. */
    private long issueReadVersion() {
        long rv = inFlight == 0 ? Math.max(current.version, Math.max(lastCommitted, timeVersion())) : current.version;
        maxIssued = Math.max(maxIssued, rv);
        return rv;
    }

    long beginBatch() {
        synchronized (versionLock) {
            long v = Math.max(Math.max(lastAssigned + 1, timeVersion()), maxIssued + 1);
            lastAssigned = v;
            inFlight++;
            return v;
        }
    }

    /** Ends a batch; a non-null {@code snapshot} (taken after its writes, now durable) becomes the read view. */
    void endBatch(long version, Snapshot snapshot) {
        ReadView next = snapshot != null ? new ReadView(this, version, snapshot) : null;
        ReadView old = null;
        synchronized (versionLock) {
            lastCommitted = Math.max(lastCommitted, version);
            inFlight--;
            if (next != null) {
                old = current;
                current = next;
                liveViews.add(version);
            }
        }
        if (old != null) old.release();
    }

    /**
     * The oldest version a transaction reads at, or can be given to read at from now on: no
     * transaction can conflict with a write at or below it. A read version is the current view's
     * or above, and a transaction holds its view until it ends (one that never read takes it at
     * its commit), so every commit the sequencer resolves reads at a live view or above.
     */
    long oldestReadableView() {
        synchronized (versionLock) {
            return liveViews.first();
        }
    }

    /**
     * The key's value as of the newest durable batch. Not RocksDB's latest: the sequencer writes
     * batches before their fsync, and a watch compared against those would fire, be re-read at a
     * durable version, and fire again until the fsync.
     */
    private byte[] latest(byte[] key) {
        enterNative();
        try {
            ReadView v;
            synchronized (versionLock) {
                v = current;
                v.retain();
            }
            try (org.rocksdb.ReadOptions ro = new org.rocksdb.ReadOptions().setSnapshot(v.snapshot)) {
                return db.get(dataCf, ro, key);
            } catch (RocksDBException e) {
                throw new KvException(KvException.IO_ERROR, "io_error: " + e.getMessage(), e);
            } finally {
                v.release();
            }
        } finally {
            exitNative();
        }
    }

    /** Before using RocksDB objects: 1025 if the store is closed, else close waits until {@link #exitNative}. */
    void enterNative() {
        if (!tryEnterNative()) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
    }

    /** As {@link #enterNative}, but false (and nothing held) if the store is closed: RocksDB already freed everything. */
    boolean tryEnterNative() {
        nativeGate.readLock().lock();
        if (closed) {
            nativeGate.readLock().unlock();
            return false;
        }
        return true;
    }

    void exitNative() {
        nativeGate.readLock().unlock();
    }

    boolean isClosed() {
        return closed;
    }

    RocksDB db() {
        return db;
    }

    ColumnFamilyHandle dataCf() {
        return dataCf;
    }

    ColumnFamilyHandle metaCf() {
        return metaCf;
    }

    /** Unsynced writes, with the memtable insert's position kept per batch unless the batch has a range deletion. */
    WriteOptions writeOptions(WriteBatchEncoder batch) {
        return batch.hasRangeDeletions() ? rangeWriteOptions : writeOptions;
    }

    /** Lets RocksDB drop a read snapshot no transaction uses any more. */
    void releaseSnapshot(Snapshot snapshot) {
        if (!tryEnterNative()) return; // after close, RocksDB freed it
        try {
            db.releaseSnapshot(snapshot);
            snapshot.close();
        } finally {
            exitNative();
        }
    }

    /** Lets RocksDB drop a read view no transaction uses any more: its kept iterators, then its snapshot. */
    void releaseView(ReadView view) {
        synchronized (versionLock) {
            liveViews.remove(view.version);
        }
        view.readOptions.close(); // an options object: independent of the database's life
        if (!tryEnterNative()) return; // after close, RocksDB freed them
        try {
            view.closeIdle(); // before the snapshot they read is released
            db.releaseSnapshot(view.snapshot);
            view.snapshot.close();
        } finally {
            exitNative();
        }
    }

    /** Makes every write so far durable (one WAL fsync); a no-op without {@code sync}. */
    void syncLog() throws RocksDBException {
        if (options.sync()) db.syncWal();
    }

    /** The live log's headroom, kept by the sequencer's leader; null when commits are not fsynced. */
    WalHeadroom walHeadroom() {
        return walHeadroom;
    }

    Watches watches() {
        return watches;
    }

    Sequencer sequencer() {
        return sequencer;
    }

    /**
     * Stops the sequencer (queued commits fail with 1025), waits for reads in progress, and closes
     * RocksDB. Transactions still open fail with 1025 afterwards.
     */
    @Override
    public void close() {
        synchronized (versionLock) {
            if (closed) return;
            closed = true;
        }
        synchronized (figuresLock) {
            // an engineFigures() under way finishes before RocksDB closes; later ones see closed
        }
        sequencer.close();
        watches.close();
        if (idleFlusher != null) idleFlusher.shutdownNow(); // a check under way sees closed, or close() waits for its gate
        nativeGate.writeLock().lock(); // every read in progress has finished; later ones see closed (RocksDB frees the snapshots)
        try {
            current.closeIdle(); // no transaction can give one back now: they see closed
            dataCf.close();
            metaCf.close();
            try {
                db.syncWal();
            } catch (RocksDBException ignored) {
                // in-memory stores have no WAL to sync
            }
            db.close();
            for (int i = natives.size() - 1; i >= 0; i--) {
                try {
                    natives.get(i).close();
                } catch (Exception ignored) {
                    // closing native handles cannot fail in a way we could act on
                }
            }
        } finally {
            nativeGate.writeLock().unlock();
        }
    }
}

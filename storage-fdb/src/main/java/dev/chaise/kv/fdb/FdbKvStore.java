package dev.chaise.kv.fdb;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;
import com.apple.foundationdb.FDBException;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import java.time.Duration;
import java.util.Optional;

/**
 * The {@code fdb} backend: the seam over a FoundationDB cluster through fdb-java. Retries go
 * through the seam's own loop ({@link KvStore#run}), never fdb's {@code db.run}, so both backends
 * retry alike.
 *
 * <p>Only this class touches {@link FDB}; its class initializer loads {@code libfdb_c}, so nothing
 * on the embedded path may reach it.
 */
public final class FdbKvStore implements KvStore {
    /** FoundationDB 7.3's API version. */
    public static final int API_VERSION = 730;

    private static final Object API_LOCK = new Object();
    private static FDB api;
    private static Throwable apiFailure;

    private final Database db;
    private final String clusterFile;
    private final StoreTimer timer = new StoreTimer();
    private volatile boolean closed;

    private FdbKvStore(Database db, String clusterFile) {
        this.db = db;
        this.clusterFile = clusterFile;
    }

    /**
     * Opens the cluster named by {@code clusterFile} (null: FDB's default cluster file). The
     * connection is lazy: a wrong or unreachable cluster shows as transactions that wait.
     *
     * @throws FdbUnavailableException if the FoundationDB client library cannot be loaded
     */
    public static FdbKvStore open(String clusterFile) {
        return open(clusterFile, Duration.ZERO);
    }

    /**
     * As {@link #open(String)}, with a per-transaction timeout (FDB's 1031 transaction_timed_out),
     * so that an unreachable cluster fails instead of blocking; {@link Duration#ZERO} for none.
     */
    public static FdbKvStore open(String clusterFile, Duration transactionTimeout) {
        FDB fdb = api();
        Database db = FdbMapping.call(() -> fdb.open(clusterFile));
        try {
            if (!transactionTimeout.isZero()) {
                FdbMapping.call(() -> db.options().setTransactionTimeout(transactionTimeout.toMillis()));
            }
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
        return new FdbKvStore(db, clusterFile);
    }

    /** Why the fdb backend cannot run in this process, or empty if it can. Loads the library once. */
    public static Optional<String> nativeClientProblem() {
        try {
            api();
            return Optional.empty();
        } catch (FdbUnavailableException e) {
            return Optional.of(e.getMessage());
        }
    }

    private static FDB api() {
        synchronized (API_LOCK) {
            if (api != null) return api;
            if (apiFailure == null) {
                try {
                    api = FDB.selectAPIVersion(API_VERSION);
                    return api;
                } catch (LinkageError | FDBException e) {
                    // FDB's class initializer fails once; later uses see only NoClassDefFoundError, so keep the first cause.
                    apiFailure = e;
                }
            }
            throw new FdbUnavailableException("the fdb backend needs the FoundationDB client library libfdb_c 7.3 (API version "
                    + API_VERSION + "), which could not be loaded: " + apiFailure
                    + ". Install the foundationdb-clients 7.3 package from https://github.com/apple/foundationdb/releases"
                    + ", or set [chaise] storage = embedded.", apiFailure);
        }
    }

    @Override
    public Transaction createTransaction() {
        if (closed) throw new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: the store is closed");
        return new FdbTransaction(FdbMapping.call(() -> db.createTransaction()), timer);
    }

    @Override
    public StoreTimer timer() {
        return timer;
    }

    @Override
    public String backendName() {
        return "fdb";
    }

    /** The cluster file this store was opened with; null for FDB's default. */
    public String clusterFile() {
        return clusterFile;
    }

    /** Closes this database handle. FDB's network thread stays up: it cannot restart in one process. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        db.close();
    }
}

package dev.chaise.kv.fdb;

import com.apple.foundationdb.Database;
import com.apple.foundationdb.FDB;
import com.apple.foundationdb.FDBException;
import com.apple.foundationdb.directory.DirectoryLayer;
import dev.chaise.kv.KvException;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.StoreTimer;
import dev.chaise.kv.Transaction;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The {@code fdb} backend: the seam over a FoundationDB cluster through fdb-java. Retries go
 * through the seam's own loop ({@link KvStore#run}), never fdb's {@code db.run}, so both backends
 * retry alike, up to {@link Options#retryLimit}; every transaction times out after {@link
 * Options#transactionTimeout} (1031, which the HTTP layer answers 503), so an unreachable cluster
 * fails requests instead of holding them.
 *
 * <p>The seam's key space lives in a directory of FDB's Directory layer ({@link
 * Options#directory}, {@code chaise} by default), so that Chaise can share a cluster: the
 * directory's short prefix goes in front of every key ({@link KeyPrefix}). It is opened (created
 * the first time) by the first transaction, so the server starts while the cluster is down and
 * answers 503 until it is up. An empty path uses the cluster's whole key space.
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

    /**
     * How to reach and use the cluster.
     *
     * @param clusterFile the cluster file, or null for FDB's default one
     * @param transactionTimeout how long one transaction (one attempt of {@link #run}) may take
     *     before it fails with 1031 transaction_timed_out; {@link Duration#ZERO} for no bound
     * @param retryLimit attempts {@link #run} makes before it gives up
     * @param directory the Directory layer path that holds the seam's key space; empty for the
     *     cluster's whole key space
     */
    public record Options(String clusterFile, Duration transactionTimeout, int retryLimit, List<String> directory) {
        /** Longer than any healthy transaction (FDB's own limit is five seconds of reads), short enough for a client to wait. */
        public static final Duration DEFAULT_TRANSACTION_TIMEOUT = Duration.ofSeconds(10);
        /** CouchDB's FoundationDB layer used 100 too. */
        public static final int DEFAULT_RETRY_LIMIT = 100;
        public static final List<String> DEFAULT_DIRECTORY = List.of("chaise");

        public Options {
            if (transactionTimeout.isNegative()) throw new IllegalArgumentException("the transaction timeout must not be negative");
            if (retryLimit < 1) throw new IllegalArgumentException("the retry limit must be at least 1");
            directory = List.copyOf(directory);
        }

        public static Options defaults(String clusterFile) {
            return new Options(clusterFile, DEFAULT_TRANSACTION_TIMEOUT, DEFAULT_RETRY_LIMIT, DEFAULT_DIRECTORY);
        }

        public Options withTransactionTimeout(Duration timeout) {
            return new Options(clusterFile, timeout, retryLimit, directory);
        }

        public Options withRetryLimit(int limit) {
            return new Options(clusterFile, transactionTimeout, limit, directory);
        }

        public Options withDirectory(List<String> path) {
            return new Options(clusterFile, transactionTimeout, retryLimit, path);
        }

        /** A directory path as configured: names separated by {@code /}; blank for none (the whole key space). */
        public static List<String> directoryPath(String spec) {
            return Arrays.stream(spec.split("/")).map(String::strip).filter(n -> !n.isEmpty()).toList();
        }
    }

    private final Database db;
    private final Options options;
    private final StoreTimer timer = new StoreTimer();
    /** Chaise's directory's prefix, once opened. */
    private volatile KeyPrefix prefix;
    private volatile boolean closed;

    private FdbKvStore(Database db, Options options) {
        this.db = db;
        this.options = options;
        if (options.directory().isEmpty()) prefix = KeyPrefix.NONE;
    }

    /** {@link Options#defaults}: a ten-second transaction timeout, 100 attempts, the directory {@code chaise}. */
    public static FdbKvStore open(String clusterFile) {
        return open(Options.defaults(clusterFile));
    }

    /**
     * Opens the cluster. The connection is lazy: a wrong or unreachable cluster shows as
     * transactions that time out (1031).
     *
     * @throws FdbUnavailableException if the FoundationDB client library cannot be loaded
     */
    public static FdbKvStore open(Options options) {
        FDB fdb = api();
        Database db = FdbMapping.call(() -> fdb.open(options.clusterFile()));
        try {
            FdbMapping.call(() -> {
                if (!options.transactionTimeout().isZero()) db.options().setTransactionTimeout(options.transactionTimeout().toMillis());
                db.options().setTransactionRetryLimit(options.retryLimit()); // for fdb's own loops (the Directory layer's)
            });
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
        return new FdbKvStore(db, options);
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
        KeyPrefix p = prefix();
        return new FdbTransaction(FdbMapping.call(() -> db.createTransaction()), timer, p);
    }

    /** Opens (the first time, creates) Chaise's directory; until that succeeds, every transaction tries again. */
    private KeyPrefix prefix() {
        KeyPrefix p = prefix;
        if (p != null) return p;
        synchronized (this) {
            if (prefix == null) {
                byte[] bytes = FdbMapping.call(() -> DirectoryLayer.getDefault().createOrOpen(db, options.directory()).join().getKey());
                prefix = new KeyPrefix(bytes);
            }
            return prefix;
        }
    }

    @Override
    public int retryLimit() {
        return options.retryLimit();
    }

    public Options options() {
        return options;
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
        return options.clusterFile();
    }

    /** Closes this database handle. FDB's network thread stays up: it cannot restart in one process. */
    @Override
    public void close() {
        if (closed) return;
        closed = true;
        db.close();
    }
}

package dev.chaise.kv;

import dev.chaise.threads.NoWaiting;
import java.util.Optional;

/**
 * The KV seam: an ordered, transactional key-value store with FoundationDB's semantics. Two
 * backends implement it, {@code embedded} (RocksDB behind a resolver of our own) and {@code fdb}
 * (fdb-java); one conformance suite holds them to the same behaviour.
 */
public interface KvStore extends AutoCloseable {

    /** The body of a transaction; it may run more than once. */
    @FunctionalInterface
    interface TxBody<T> {
        T apply(Transaction tx);
    }

    /**
     * Asked, inside the next attempt's transaction, after a commit ended with 1021
     * commit_unknown_result: return the result if the earlier attempt did commit (typically by
     * reading a transaction-id key it wrote), or empty to run the body again. Reading the marker
     * in the same transaction makes a late-landing earlier commit a conflict rather than a duplicate.
     */
    @FunctionalInterface
    interface UnknownResultCheck<T> {
        Optional<T> committed(Transaction tx);
    }

    /** A new transaction. The caller commits and closes it. */
    Transaction createTransaction();

    /**
     * Runs {@code body} in a transaction and commits, retrying 1020 not_committed and 1007
     * transaction_too_old with FDB's backoff. A 1021 commit_unknown_result is thrown: without an
     * idempotence check nobody can tell whether the body's writes landed.
     */
    default <T> T run(TxBody<T> body) {
        return RetryLoop.run(this, body, null);
    }

    /** As {@link #run(TxBody)}, but a 1021 is resolved by {@code check} and the loop goes on. */
    default <T> T run(TxBody<T> body, UnknownResultCheck<T> check) {
        return RetryLoop.run(this, body, check);
    }

    /** Attempts {@link #run} makes before it gives up; FDB's {@code retry_limit}. */
    default int retryLimit() {
        return 1_000;
    }

    /**
     * Whether this process is the store's only user (the embedded engine: RocksDB locks its
     * directory), so that anything a previous process left in progress is orphaned at open.
     * False for a shared cluster.
     */
    default boolean singleProcess() {
        return false;
    }

    /**
     * Whether a read of this store completes on the calling thread without waiting for another
     * thread or process: then a bounded read may run where no thread may block (Netty's event loop,
     * see {@link NoWaiting}). False unless a backend shows it: fdb's reads are futures answered by
     * the cluster. A read-only transaction's retry after {@code transaction_too_old} backs off
     * ({@link #run}); that wait checks {@link NoWaiting} and is never taken on such a thread.
     */
    default boolean readsNeverWait() {
        return false;
    }

    /** Every wait of this store, by name. */
    StoreTimer timer();

    /**
     * The engine's own figures for operators ({@code /_node/_local/_system}): sizes, pending
     * compaction, write stalls for the embedded engine; empty where the engine has none to give.
     */
    default java.util.Map<String, Object> engineFigures() {
        return java.util.Map.of();
    }

    /** A short name: {@code embedded}, {@code embedded-memory}, {@code fdb}. */
    String backendName();

    @Override
    void close();
}

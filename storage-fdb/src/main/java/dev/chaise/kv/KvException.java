package dev.chaise.kv;

/**
 * An error with FoundationDB's code, raised the same way by every backend.
 *
 * <p>Codes follow {@code fdb_c}'s error table so that code written against the seam behaves the
 * same on a cluster and on the embedded engine. The three predicates ({@link #isRetryable},
 * {@link #isRetryableNotCommitted}, {@link #maybeCommitted}) are {@code fdb_error_predicate}'s of
 * fdb_c 7.3, the client fdb-java 7.3 loads; fdb-java only reaches them through the native library,
 * so they are written out here and pinned by {@code KvExceptionTest} (and checked against the
 * library itself where it is installed).
 */
public final class KvException extends RuntimeException {
    public static final int TIMED_OUT = 1004;
    public static final int TRANSACTION_TOO_OLD = 1007;
    public static final int FUTURE_VERSION = 1009;
    public static final int NOT_COMMITTED = 1020;
    public static final int COMMIT_UNKNOWN_RESULT = 1021;
    public static final int TRANSACTION_CANCELLED = 1025;
    public static final int TRANSACTION_TIMED_OUT = 1031;
    public static final int TOO_MANY_WATCHES = 1032;
    public static final int ACCESSED_UNREADABLE = 1036;
    public static final int PROCESS_BEHIND = 1037;
    public static final int DATABASE_LOCKED = 1038;
    public static final int CLUSTER_VERSION_CHANGED = 1039;
    public static final int COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED = 1042;
    public static final int BATCH_TRANSACTION_THROTTLED = 1051;
    public static final int GRV_PROXY_MEMORY_LIMIT_EXCEEDED = 1078;
    public static final int TAG_THROTTLED = 1213;
    public static final int PROXY_TAG_THROTTLED = 1223;
    public static final int IO_ERROR = 1510;
    public static final int CLIENT_INVALID_OPERATION = 2000;
    public static final int KEY_OUTSIDE_LEGAL_RANGE = 2004;
    public static final int INVERTED_RANGE = 2005;
    public static final int INVALID_MUTATION_TYPE = 2006;
    public static final int USED_DURING_COMMIT = 2017;
    public static final int NO_COMMIT_VERSION = 2021;
    public static final int TRANSACTION_TOO_LARGE = 2101;
    public static final int KEY_TOO_LARGE = 2102;
    public static final int VALUE_TOO_LARGE = 2103;
    public static final int INTERNAL_ERROR = 4100;

    private final int code;
    private final boolean retryLimitReached;

    public KvException(int code, String message) {
        this(code, message, null, false);
    }

    public KvException(int code, String message, Throwable cause) {
        this(code, message, cause, false);
    }

    private KvException(int code, String message, Throwable cause, boolean retryLimitReached) {
        super(code + " " + message, cause);
        this.code = code;
        this.retryLimitReached = retryLimitReached;
    }

    public int code() {
        return code;
    }

    /** fdb_c's {@code FDB_ERROR_PREDICATE_RETRYABLE}: a retry loop may go on, after a check if {@link #maybeCommitted}. */
    public boolean isRetryable() {
        return maybeCommitted() || isRetryableNotCommitted();
    }

    /** fdb_c's {@code FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED}: the attempt certainly did not commit; run the body again. */
    public boolean isRetryableNotCommitted() {
        return switch (code) {
            case NOT_COMMITTED, TRANSACTION_TOO_OLD, FUTURE_VERSION, DATABASE_LOCKED, GRV_PROXY_MEMORY_LIMIT_EXCEEDED,
                 COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED, BATCH_TRANSACTION_THROTTLED, PROCESS_BEHIND, TAG_THROTTLED,
                 PROXY_TAG_THROTTLED -> true;
            default -> false;
        };
    }

    /** fdb_c's {@code FDB_ERROR_PREDICATE_MAYBE_COMMITTED}: only an idempotence check can tell whether it landed. */
    public boolean maybeCommitted() {
        return code == COMMIT_UNKNOWN_RESULT || code == CLUSTER_VERSION_CHANGED;
    }

    /** Thrown by the retry loop when its retry limit was reached; the code is the last attempt's. */
    public boolean retryLimitReached() {
        return retryLimitReached;
    }

    /**
     * The store could not answer now, and the same request may succeed later: it timed out (the
     * cluster is unreachable), the cluster pushed back or is recovering, the retry limit was
     * reached, or the store is closed or stopped writing after an I/O failure. HTTP answers 503.
     */
    public boolean unavailable() {
        if (retryLimitReached) return true;
        return switch (code) {
            case TIMED_OUT, TRANSACTION_TIMED_OUT, TRANSACTION_CANCELLED, IO_ERROR, FUTURE_VERSION, DATABASE_LOCKED,
                 GRV_PROXY_MEMORY_LIMIT_EXCEEDED, COMMIT_PROXY_MEMORY_LIMIT_EXCEEDED, BATCH_TRANSACTION_THROTTLED,
                 PROCESS_BEHIND, TAG_THROTTLED, PROXY_TAG_THROTTLED -> true;
            default -> false;
        };
    }

    /** {@code last} as the retry loop gives up on it after {@code attempts} attempts. */
    public static KvException retryLimitReached(KvException last, int attempts) {
        String message = last.getMessage().substring(String.valueOf(last.code).length() + 1);
        return new KvException(last.code, message + " (gave up after " + attempts + " attempts)", last, true);
    }

    public static KvException notCommitted() {
        return new KvException(NOT_COMMITTED, "not_committed: transaction not committed due to conflict with another transaction");
    }

    public static KvException tooOld() {
        return new KvException(TRANSACTION_TOO_OLD, "transaction_too_old: transaction is too old to perform reads or be committed");
    }

    public static KvException commitUnknown() {
        return new KvException(COMMIT_UNKNOWN_RESULT, "commit_unknown_result: transaction may or may not have committed");
    }
}

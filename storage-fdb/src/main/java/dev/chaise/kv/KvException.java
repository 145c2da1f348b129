package dev.chaise.kv;

/**
 * An error with FoundationDB's code, raised the same way by every backend.
 *
 * <p>Codes follow {@code fdb_c}'s error table so that code written against the seam behaves the
 * same on a cluster and on the embedded engine.
 */
public final class KvException extends RuntimeException {
    public static final int TRANSACTION_TOO_OLD = 1007;
    public static final int FUTURE_VERSION = 1009;
    public static final int NOT_COMMITTED = 1020;
    public static final int COMMIT_UNKNOWN_RESULT = 1021;
    public static final int TRANSACTION_CANCELLED = 1025;
    public static final int TOO_MANY_WATCHES = 1032;
    public static final int ACCESSED_UNREADABLE = 1036;
    public static final int IO_ERROR = 1510;
    public static final int USED_DURING_COMMIT = 2017;
    public static final int NO_COMMIT_VERSION = 2021;
    public static final int KEY_OUTSIDE_LEGAL_RANGE = 2004;
    public static final int INVERTED_RANGE = 2005;
    public static final int INVALID_MUTATION_TYPE = 2006;
    public static final int TRANSACTION_TOO_LARGE = 2101;
    public static final int KEY_TOO_LARGE = 2102;
    public static final int VALUE_TOO_LARGE = 2103;
    public static final int CLIENT_INVALID_OPERATION = 2000;
    public static final int INTERNAL_ERROR = 4100;

    private final int code;

    public KvException(int code, String message) {
        super(code + " " + message);
        this.code = code;
    }

    public KvException(int code, String message, Throwable cause) {
        super(code + " " + message, cause);
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The retry loop may run the body again: the attempt certainly did not commit. */
    public boolean isRetryable() {
        return switch (code) {
            // as fdb_c's FDB_ERROR_PREDICATE_RETRYABLE, less the maybe-committed ones
            case NOT_COMMITTED, TRANSACTION_TOO_OLD, FUTURE_VERSION,
                 1037 /* process_behind */, 1038 /* database_locked */, 1042 /* proxy_memory_limit_exceeded */,
                 1051 /* batch_transaction_throttled */, 1078 /* grv_proxy_memory_limit_exceeded */,
                 1213 /* tag_throttled */ -> true;
            default -> false;
        };
    }

    /** The attempt may or may not have committed; only an idempotence check can tell. */
    public boolean maybeCommitted() {
        return code == COMMIT_UNKNOWN_RESULT || code == 1039 /* cluster_version_changed */;
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

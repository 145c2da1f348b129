package dev.chaise.kv.fdb;

import com.apple.foundationdb.FDBException;
import dev.chaise.kv.KeySelector;
import dev.chaise.kv.KvException;
import dev.chaise.kv.MutationType;
import dev.chaise.kv.StoreTimer;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;

/**
 * Translation between the seam and fdb-java. Everything here is plain Java (no call reaches
 * {@code com.apple.foundationdb.FDB}), so it is unit-tested on machines without {@code libfdb_c}.
 */
final class FdbMapping {
    private FdbMapping() {}

    /** An exhaustive switch: a new seam mutation fails to compile until it is mapped. */
    static com.apple.foundationdb.MutationType toFdb(MutationType type) {
        return switch (type) {
            case ADD -> com.apple.foundationdb.MutationType.ADD;
            case BIT_AND -> com.apple.foundationdb.MutationType.BIT_AND;
            case BIT_OR -> com.apple.foundationdb.MutationType.BIT_OR;
            case BIT_XOR -> com.apple.foundationdb.MutationType.BIT_XOR;
            case MAX -> com.apple.foundationdb.MutationType.MAX;
            case MIN -> com.apple.foundationdb.MutationType.MIN;
            case BYTE_MAX -> com.apple.foundationdb.MutationType.BYTE_MAX;
            case BYTE_MIN -> com.apple.foundationdb.MutationType.BYTE_MIN;
            case APPEND_IF_FITS -> com.apple.foundationdb.MutationType.APPEND_IF_FITS;
            case COMPARE_AND_CLEAR -> com.apple.foundationdb.MutationType.COMPARE_AND_CLEAR;
        };
    }

    static com.apple.foundationdb.KeySelector toFdb(KeySelector s) {
        return new com.apple.foundationdb.KeySelector(s.key(), s.orEqual(), s.offset());
    }

    /**
     * The seam's form of a failure: an {@link FDBException}, bare or wrapped by a future, becomes a
     * {@link KvException} with the same code and message; a cancelled future is 1025. Anything else
     * is returned unwrapped and unchanged.
     */
    static Throwable map(Throwable t) {
        Throwable c = t;
        while ((c instanceof CompletionException || c instanceof ExecutionException) && c.getCause() != null) {
            c = c.getCause();
        }
        if (c instanceof FDBException e) return new KvException(e.getCode(), e.getMessage(), e);
        if (c instanceof CancellationException e) {
            return new KvException(KvException.TRANSACTION_CANCELLED, "transaction_cancelled: operation was cancelled", e);
        }
        if (c instanceof RuntimeException || c instanceof Error) return c;
        return new KvException(KvException.INTERNAL_ERROR, "internal_error: " + c, c);
    }

    /** For {@code throw rethrow(e)}: errors propagate as they are, the rest as {@link #map}ped. */
    static RuntimeException rethrow(Throwable t) {
        Throwable m = map(t);
        if (m instanceof Error e) throw e;
        return (RuntimeException) m;
    }

    /**
     * Starts an fdb operation and blocks on its future, the wait timed as {@code event}. Conflicts,
     * too-old reads and unknown commit results are counted as the embedded engine counts them.
     */
    static <T> T await(StoreTimer timer, StoreTimer.Event event, Supplier<CompletableFuture<T>> op) {
        try {
            CompletableFuture<T> f = op.get();
            return timer.time(event, f::join);
        } catch (RuntimeException e) {
            throw counted(timer, rethrow(e));
        }
    }

    static RuntimeException counted(StoreTimer timer, RuntimeException e) {
        if (e instanceof KvException kv) {
            switch (kv.code()) {
                case KvException.NOT_COMMITTED -> timer.increment(StoreTimer.Counts.CONFLICTS);
                case KvException.TRANSACTION_TOO_OLD -> timer.increment(StoreTimer.Counts.TOO_OLD);
                case KvException.COMMIT_UNKNOWN_RESULT -> timer.increment(StoreTimer.Counts.COMMIT_UNKNOWN);
                default -> { }
            }
        }
        return e;
    }

    /** A synchronous fdb call; some (conflict ranges, options) fail with an {@link FDBException}. */
    static void call(Runnable op) {
        try {
            op.run();
        } catch (RuntimeException e) {
            throw rethrow(e);
        }
    }

    static <T> T call(Supplier<T> op) {
        try {
            return op.get();
        } catch (RuntimeException e) {
            throw rethrow(e);
        }
    }
}

package dev.chaise.kv.embedded;

/**
 * Makes a fraction of commits fail the way a FoundationDB cluster can, for tests of the layers
 * above: 1020 not_committed, 1007 transaction_too_old, and 1021 commit_unknown_result, of which
 * {@code unknownButCommitted} really did commit (as on FDB, where the commit may have landed).
 * Probabilities are per commit of a transaction that writes; read-only commits never fail.
 *
 * <p>A {@link Hook}, if set, is called at each named {@link Point} of the engine's failure paths,
 * on the engine's own thread: it may throw there (a failed write or fsync, an {@link Error}) or
 * block to force an interleaving. Tests of the engine use it; production passes none.
 */
public record FaultInjection(double notCommitted, double tooOld, double commitUnknown, double unknownButCommitted, long seed, Hook hook) {
    public static final FaultInjection NONE = new FaultInjection(0, 0, 0, 0, 0);

    /** Where the engine calls the hook. */
    public enum Point {
        /** A committing thread, after it found the store open and before its request is queued. */
        COMMIT_ENQUEUE,
        /** The leader, when it starts a batch (the batch already taken from the queue). */
        RESOLVE_BATCH,
        /** The leader, before one transaction's writes go to RocksDB (or to a writer thread): throwing means nothing of it was written. */
        BEFORE_WRITE,
        /**
         * The leader or a writer thread, as one transaction's WriteBatch goes to RocksDB: throwing is a
         * failed RocksDB write (which RocksDB may or may not have logged), so the sequencer stops.
         */
        WRITE,
        /** The leader or a writer thread, after one transaction's writes went to RocksDB: throwing means it was written. */
        AFTER_WRITE,
        /** The leader, after it handed one transaction's writes to a writer thread: throwing means they will be written. */
        HANDED_OFF,
        /** The leader, in place of a successful WAL fsync: throwing is a failed fsync. */
        SYNC,
        /** The leader, after its batch is durable and published, before its commits are acknowledged. */
        ACKNOWLEDGE,
        /** A watch whose baseline is being compared with the latest value, while it is being armed. */
        WATCH_ARM,
        /** A range read about to step through RocksDB. */
        ITERATOR_STEP
    }

    /** Called at every {@link Point}; may throw or block. */
    @FunctionalInterface
    public interface Hook {
        void at(Point point);
    }

    public FaultInjection(double notCommitted, double tooOld, double commitUnknown, double unknownButCommitted, long seed) {
        this(notCommitted, tooOld, commitUnknown, unknownButCommitted, seed, null);
    }

    public FaultInjection {
        if (notCommitted < 0 || tooOld < 0 || commitUnknown < 0 || notCommitted + tooOld + commitUnknown > 1) {
            throw new IllegalArgumentException("fault probabilities must be >= 0 and sum to at most 1");
        }
        if (unknownButCommitted < 0 || unknownButCommitted > 1) throw new IllegalArgumentException("unknownButCommitted must be in [0,1]");
    }

    /** Each fault at {@code each}, half of the 1021s really committed. */
    public static FaultInjection uniform(double each, long seed) {
        return new FaultInjection(each, each, each, 0.5, seed);
    }

    /** No random faults, only {@code hook} at every point. */
    public static FaultInjection hooked(Hook hook) {
        return new FaultInjection(0, 0, 0, 0, 0, hook);
    }

    public boolean enabled() {
        return notCommitted + tooOld + commitUnknown > 0;
    }

    /** Calls the hook, if any, at {@code point}. */
    void at(Point point) {
        if (hook != null) hook.at(point);
    }
}

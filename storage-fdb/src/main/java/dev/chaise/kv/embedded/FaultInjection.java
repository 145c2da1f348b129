package dev.chaise.kv.embedded;

/**
 * Makes a fraction of commits fail the way a FoundationDB cluster can, for tests of the layers
 * above: 1020 not_committed, 1007 transaction_too_old, and 1021 commit_unknown_result, of which
 * {@code unknownButCommitted} really did commit (as on FDB, where the commit may have landed).
 * Probabilities are per commit of a transaction that writes; read-only commits never fail.
 */
public record FaultInjection(double notCommitted, double tooOld, double commitUnknown, double unknownButCommitted, long seed) {
    public static final FaultInjection NONE = new FaultInjection(0, 0, 0, 0, 0);

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

    public boolean enabled() {
        return notCommitted + tooOld + commitUnknown > 0;
    }
}

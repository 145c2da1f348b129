package dev.chaise.storage;

/**
 * How a {@link Cursor} reads.
 *
 * @param reverse read the range from its end
 * @param returnLimit at most this many values (rows the mapper skips do not count); 0 for no limit
 * @param rowsPerTransaction rows one transaction reads, skipped ones included
 * @param millisPerTransaction how long one transaction reads, far inside FDB's five seconds
 * @param bytesPerTransaction KV bytes one transaction reads, its mapper's reads included; 0 for no limit
 * @param spanTransactions go on in a new transaction when one reaches its limits; if false the
 *     cursor stops there and says which limit it reached
 */
public record ScanProperties(boolean reverse, long returnLimit, int rowsPerTransaction, long millisPerTransaction,
                             long bytesPerTransaction, boolean spanTransactions) {
    public static final int ROWS_PER_TRANSACTION = 1_000;
    public static final long MILLIS_PER_TRANSACTION = 2_000;

    /** Forward, no limit, across as many transactions as it takes. */
    public static final ScanProperties FORWARD = new ScanProperties(false, 0, ROWS_PER_TRANSACTION, MILLIS_PER_TRANSACTION, 0, true);

    public ScanProperties {
        if (returnLimit < 0) throw new IllegalArgumentException("returnLimit must not be negative");
        if (rowsPerTransaction < 1) throw new IllegalArgumentException("rowsPerTransaction must be positive");
    }

    public static ScanProperties of(boolean reverse, long returnLimit) {
        return FORWARD.reverse(reverse).limit(returnLimit);
    }

    public ScanProperties reverse(boolean r) {
        return new ScanProperties(r, returnLimit, rowsPerTransaction, millisPerTransaction, bytesPerTransaction, spanTransactions);
    }

    public ScanProperties limit(long n) {
        return new ScanProperties(reverse, n, rowsPerTransaction, millisPerTransaction, bytesPerTransaction, spanTransactions);
    }

    public ScanProperties rowsPerTransaction(int n) {
        return new ScanProperties(reverse, returnLimit, n, millisPerTransaction, bytesPerTransaction, spanTransactions);
    }

    public ScanProperties bytesPerTransaction(long n) {
        return new ScanProperties(reverse, returnLimit, rowsPerTransaction, millisPerTransaction, n, spanTransactions);
    }

    public ScanProperties millisPerTransaction(long n) {
        return new ScanProperties(reverse, returnLimit, rowsPerTransaction, n, bytesPerTransaction, spanTransactions);
    }

    /** Held to one transaction: the cursor stops at that transaction's limits. */
    public ScanProperties oneTransaction() {
        return new ScanProperties(reverse, returnLimit, rowsPerTransaction, millisPerTransaction, bytesPerTransaction, false);
    }
}

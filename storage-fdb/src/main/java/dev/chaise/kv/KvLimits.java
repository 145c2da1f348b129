package dev.chaise.kv;

/**
 * FoundationDB's documented limits, enforced by both backends at the same points: key and value
 * sizes when written, transaction size at commit.
 */
public final class KvLimits {
    public static final int MAX_KEY_BYTES = 10_000;
    public static final int MAX_VALUE_BYTES = 100_000;
    public static final long MAX_TRANSACTION_BYTES = 10_000_000;
    /** FDB's MVCC window: a read version older than this fails with 1007. In versions (1e6 a second). */
    public static final long MVCC_WINDOW_VERSIONS = 5_000_000;
    public static final long VERSIONS_PER_SECOND = 1_000_000;
    public static final int MAX_WATCHES = 10_000;

    private KvLimits() {}

    /** The legal range first, then the size, as FDB's ReadYourWritesTransaction::set checks. */
    public static void checkWritableKey(byte[] key) {
        if (key.length > 0 && key[0] == (byte) 0xff) {
            throw new KvException(KvException.KEY_OUTSIDE_LEGAL_RANGE, "key_outside_legal_range: key outside legal range");
        }
        if (key.length > MAX_KEY_BYTES) {
            throw new KvException(KvException.KEY_TOO_LARGE, "key_too_large: key is too large (" + key.length + " bytes)");
        }
    }

    public static void checkValue(byte[] value) {
        if (value.length > MAX_VALUE_BYTES) {
            throw new KvException(KvException.VALUE_TOO_LARGE, "value_too_large: value is too large (" + value.length + " bytes)");
        }
    }

    /** {@code Transaction.setAll}'s checks, before anything is written: every pair as {@code set} checks it, keys ascending. */
    public static void checkSetAll(java.util.List<KeyValue> kvs) {
        for (int i = 0; i < kvs.size(); i++) {
            checkWritableKey(kvs.get(i).key());
            checkValue(kvs.get(i).value());
            if (i > 0 && Keys.compare(kvs.get(i - 1).key(), kvs.get(i).key()) >= 0) {
                throw new KvException(KvException.CLIENT_INVALID_OPERATION, "client_invalid_operation: setAll keys must ascend");
            }
        }
    }

    public static void checkRange(byte[] begin, byte[] end) {
        if (Keys.compare(begin, end) > 0) {
            throw new KvException(KvException.INVERTED_RANGE, "inverted_range: range begin key larger than end key");
        }
        if (end.length > MAX_KEY_BYTES + 1 || begin.length > MAX_KEY_BYTES + 1) {
            throw new KvException(KvException.KEY_TOO_LARGE, "key_too_large: key is too large");
        }
    }

    public static void checkTransactionSize(long bytes) {
        if (bytes > MAX_TRANSACTION_BYTES) {
            throw new KvException(KvException.TRANSACTION_TOO_LARGE, "transaction_too_large: transaction exceeds byte limit (" + bytes + " bytes)");
        }
    }
}

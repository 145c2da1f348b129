package dev.chaise.kv;

import java.util.ArrayList;
import java.util.List;

/**
 * The read side of a transaction. Reads through a {@link Transaction} add read-conflict ranges;
 * reads through its {@link Transaction#snapshot()} view do not.
 */
public interface ReadTransaction {
    /** Unlimited row count for {@link #getRange}. */
    int ROW_LIMIT_UNLIMITED = 0;

    /** The version this transaction reads at, acquired on first use. */
    long getReadVersion();

    /** The value, or null. Sees this transaction's own writes. */
    byte[] get(byte[] key);

    /** The key the selector resolves to; {@code ""} before the first key, {@code \xff} past the last. */
    byte[] getKey(KeySelector selector);

    /** Keys in {@code [begin, end)}, at most {@code limit} of them (0: all), streamed in batches. */
    RangeIterator getRange(byte[] begin, byte[] end, int limit, boolean reverse);

    default RangeIterator getRange(byte[] begin, byte[] end) {
        return getRange(begin, end, ROW_LIMIT_UNLIMITED, false);
    }

    /** Every key starting with {@code prefix}. */
    default RangeIterator getRangeStartsWith(byte[] prefix, int limit, boolean reverse) {
        return getRange(prefix, Keys.strinc(prefix), limit, reverse);
    }

    /**
     * Several range reads at once, each read whole exactly as {@link #getRangeAsList} would (same
     * rows, same conflict ranges), answered in the order of {@code ranges} ({@code {begin, end}}
     * pairs). FDB issues them together, one round trip for all; the embedded engine walks them in
     * key order with one storage iterator. For many small reads, such as RFC C's per-document
     * reads of a batch.
     */
    default List<List<KeyValue>> getRanges(List<byte[][]> ranges, int limit, boolean reverse) {
        List<List<KeyValue>> out = new ArrayList<>(ranges.size());
        for (byte[][] r : ranges) out.add(getRangeAsList(r[0], r[1], limit, reverse));
        return out;
    }

    /** Convenience: the whole range as a list. Only for ranges known to be small. */
    default List<KeyValue> getRangeAsList(byte[] begin, byte[] end, int limit, boolean reverse) {
        List<KeyValue> out = new ArrayList<>();
        try (RangeIterator it = getRange(begin, end, limit, reverse)) {
            it.forEachRemaining(out::add);
        }
        return out;
    }
}

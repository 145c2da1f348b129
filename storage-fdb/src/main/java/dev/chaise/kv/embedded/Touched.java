package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * What one written transaction touched, for the watches and the atomic values' cache: its
 * {@link #keys} (every point and run key, then from {@code stampedFrom} on the versionstamped keys
 * its commit gave), its cleared {@link #ranges}, and its write buffer, which answers for one key
 * with a search. A bulk write touches a dozen keys a document while the watched or cached keys
 * are few, so each of those is looked up in the transaction rather than each written key in
 * them: reading thousands of keys that another thread built was 2.7 % of a {@code _bulk_docs}
 * request's server CPU, on the commit's path after its fsync.
 */
final class Touched {
    private final WriteBuffer writes;
    private final List<byte[]> keys;
    private final List<byte[][]> ranges;
    /** The versionstamped keys: a document's changes row each, in a bulk write. */
    private final List<byte[]> stamped;
    /** Whether they ascend, as they usually do; null until first asked, after the write was handed off. */
    private Boolean stampedAscending;

    Touched(WriteBuffer writes, List<byte[]> keys, int stampedFrom, List<byte[][]> ranges) {
        this.writes = writes;
        this.keys = keys;
        this.ranges = ranges;
        this.stamped = keys.subList(stampedFrom, keys.size());
    }

    private boolean stampedAscending() {
        if (stampedAscending == null) {
            boolean ascending = true;
            for (int i = 1; i < stamped.size() && ascending; i++) ascending = Keys.compare(stamped.get(i - 1), stamped.get(i)) < 0;
            stampedAscending = ascending;
        }
        return stampedAscending;
    }

    List<byte[]> keys() {
        return keys;
    }

    List<byte[][]> ranges() {
        return ranges;
    }

    /** Whether the transaction wrote {@code key}: a point, a run's key, a cleared range or a versionstamped key. */
    boolean touches(byte[] key) {
        if (writes.touches(key)) return true;
        if (stamped.isEmpty()) return false;
        if (stampedAscending()) return Collections.binarySearch(stamped, key, Keys::compare) >= 0;
        for (byte[] s : stamped) {
            if (Arrays.equals(s, key)) return true;
        }
        return false;
    }

    /**
     * Whether looking up {@code held} keys one by one ({@link #touches}: a few map searches, and the
     * versionstamped keys) costs less than going through every touched key.
     */
    boolean cheaperToLookUp(int held) {
        if ((long) held * 64 >= keys.size()) return false; // a PUT's dozen keys: go through them
        long each = stamped.isEmpty() || stampedAscending() ? 64 : 64 + stamped.size();
        return held * each < keys.size();
    }
}

package dev.chaise.kv.embedded;

import dev.chaise.kv.Keys;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.TreeMap;

/**
 * The values the sequencer last wrote to keys it changed by atomic operation, so the next atomic
 * operation on such a key starts from them without a RocksDB read. Every document write adds to
 * its database's counters (RFC B) and each addition needed the counter's latest value: four or
 * five RocksDB reads per PUT in the one batch being resolved (5.8 % of a PUT's server CPU). The
 * sequencer is RocksDB's only writer, so a value it wrote stays RocksDB's latest until it writes
 * the key again: any write that is not an atomic operation (a set, a clear, a versionstamped
 * value or key, a cleared range) drops the key from here. Used only by the leading committer,
 * one at a time (the lead's hand-off orders them); not thread-safe.
 */
final class LatestAtomics {
    /** Counters of the databases written lately; beyond this the map is simply emptied. */
    static final int MAX_KEYS = 4096;

    private final TreeMap<byte[], byte[]> values = new TreeMap<>(Keys::compare);
    /** Cached keys per {@link KeyBuckets} bucket: most written keys are not cached. */
    private final int[] buckets = new int[KeyBuckets.SIZE];

    /** The key's latest value if this knows it, else null (read RocksDB). */
    byte[] get(byte[] key) {
        return buckets[KeyBuckets.of(key)] == 0 ? null : values.get(key);
    }

    /** A transaction was written: what it {@code touched}, and the values its atomic operations gave {@code atomicKeys}. */
    void written(Touched touched, List<byte[]> atomicKeys, List<byte[]> atomicValues) {
        if (!values.isEmpty() && touched.cheaperToLookUp(values.size())) {
            // A bulk write's thousands of keys against a few databases' counters: ask about each counter.
            for (Iterator<byte[]> it = values.keySet().iterator(); it.hasNext(); ) {
                byte[] k = it.next();
                if (touched.touches(k)) {
                    it.remove();
                    buckets[KeyBuckets.of(k)]--;
                }
            }
        } else if (!values.isEmpty()) {
            for (byte[][] r : touched.ranges()) {
                var sub = values.subMap(r[0], true, r[1], false);
                for (byte[] k : sub.keySet()) buckets[KeyBuckets.of(k)]--;
                sub.clear();
            }
            for (byte[] k : touched.keys()) {
                if (buckets[KeyBuckets.of(k)] != 0 && values.remove(k) != null) buckets[KeyBuckets.of(k)]--;
            }
        }
        for (int i = 0; i < atomicKeys.size(); i++) {
            byte[] v = atomicValues.get(i);
            if (v == null) continue; // cleared by the operation (compare-and-clear): dropped above, as a touched key
            if (values.size() >= MAX_KEYS) clear();
            if (values.put(atomicKeys.get(i), v) == null) buckets[KeyBuckets.of(atomicKeys.get(i))]++;
        }
    }

    /** Forgets everything (the next atomic operations read RocksDB). */
    void clear() {
        values.clear();
        Arrays.fill(buckets, 0);
    }
}

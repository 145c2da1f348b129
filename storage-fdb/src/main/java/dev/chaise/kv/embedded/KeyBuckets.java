package dev.chaise.kv.embedded;

/**
 * A cheap filter for "is this key one of the few I hold": a key's bucket comes from its length and
 * last two bytes (keys of one subspace differ mostly at their end), and a holder counts its keys
 * per bucket. A key in an empty bucket is not held, which one array read says; the rest are looked
 * up. Used where a commit's many written keys meet a few watched or cached ones.
 */
final class KeyBuckets {
    static final int SIZE = 1 << 12;

    private KeyBuckets() {}

    static int of(byte[] key) {
        int n = key.length;
        int h = n * 31;
        if (n > 0) h += (key[n - 1] & 0xff) * 7;
        if (n > 1) h += (key[n - 2] & 0xff) * 1031;
        return (h ^ (h >>> 12)) & (SIZE - 1);
    }
}

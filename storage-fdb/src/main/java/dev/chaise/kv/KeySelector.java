package dev.chaise.kv;

/**
 * FoundationDB's key selector: the last key less than (or equal to, if {@code orEqual}) {@code key},
 * moved {@code offset} keys forward. Offset 1 from "last less than" is "first greater or equal".
 */
public record KeySelector(byte[] key, boolean orEqual, int offset) {
    public static KeySelector lastLessThan(byte[] key) { return new KeySelector(key, false, 0); }
    public static KeySelector lastLessOrEqual(byte[] key) { return new KeySelector(key, true, 0); }
    public static KeySelector firstGreaterThan(byte[] key) { return new KeySelector(key, true, 1); }
    public static KeySelector firstGreaterOrEqual(byte[] key) { return new KeySelector(key, false, 1); }

    public KeySelector add(int delta) { return new KeySelector(key, orEqual, offset + delta); }
}

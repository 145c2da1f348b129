package dev.chaise.kv;

import java.util.Arrays;
import java.util.HexFormat;

/** Byte-key helpers. Keys compare as unsigned bytes, as in FoundationDB. */
public final class Keys {
    public static final byte[] EMPTY = new byte[0];
    /** The end of the user key space; keys at or above it are FDB's system keys. */
    public static final byte[] SYSTEM_PREFIX = {(byte) 0xff};

    private Keys() {}

    public static int compare(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    /** The smallest key greater than {@code key}: {@code key + \x00}. */
    public static byte[] keyAfter(byte[] key) {
        byte[] out = Arrays.copyOf(key, key.length + 1);
        return out;
    }

    /**
     * The first key that does not start with {@code prefix}: trailing {@code \xff} bytes dropped,
     * then the last byte incremented (FDB's {@code strinc}).
     */
    public static byte[] strinc(byte[] prefix) {
        int n = prefix.length;
        while (n > 0 && prefix[n - 1] == (byte) 0xff) n--;
        if (n == 0) throw new IllegalArgumentException("key must contain at least one byte not equal to 0xFF");
        byte[] out = Arrays.copyOf(prefix, n);
        out[n - 1]++;
        return out;
    }

    public static boolean startsWith(byte[] key, byte[] prefix) {
        return key.length >= prefix.length && Arrays.equals(key, 0, prefix.length, prefix, 0, prefix.length);
    }

    public static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    public static String printable(byte[] key) {
        StringBuilder sb = new StringBuilder();
        for (byte b : key) {
            int c = b & 0xff;
            if (c >= 32 && c < 127 && c != '\\') sb.append((char) c);
            else sb.append("\\x").append(HexFormat.of().toHexDigits((byte) c));
        }
        return sb.toString();
    }
}

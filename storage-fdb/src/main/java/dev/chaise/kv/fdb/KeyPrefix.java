package dev.chaise.kv.fdb;

import dev.chaise.kv.KeySelector;
import dev.chaise.kv.Keys;
import dev.chaise.kv.Versionstamps;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * The seam's user key space, {@code ""} to {@code \xff}, placed under a prefix of the cluster's
 * (the one FDB's Directory layer gives Chaise's directory), so that Chaise can share a cluster
 * with other applications. The seam's {@code k} is the cluster's {@code prefix + k}; its end,
 * {@code \xff}, is {@code prefix + \xff}. An empty prefix is the cluster's whole user key space.
 * Pure arithmetic, so it is unit-tested without a cluster.
 */
final class KeyPrefix {
    static final KeyPrefix NONE = new KeyPrefix(Keys.EMPTY);

    private final byte[] prefix;
    /** Where the seam's {@code \xff} lands. */
    private final byte[] end;

    KeyPrefix(byte[] prefix) {
        this.prefix = prefix.clone();
        this.end = Keys.concat(this.prefix, Keys.SYSTEM_PREFIX);
    }

    byte[] bytes() {
        return prefix.clone();
    }

    boolean isEmpty() {
        return prefix.length == 0;
    }

    /** A seam key as the cluster stores it. */
    byte[] add(byte[] key) {
        return prefix.length == 0 ? key : Keys.concat(prefix, key);
    }

    KeySelector add(KeySelector s) {
        return prefix.length == 0 ? s : new KeySelector(add(s.key()), s.orEqual(), s.offset());
    }

    /** A cluster key under the prefix, as the seam names it. */
    byte[] strip(byte[] key) {
        return prefix.length == 0 ? key : Arrays.copyOfRange(key, prefix.length, key.length);
    }

    /**
     * The key the cluster resolved a selector to, as the seam names it: a key before the prefix
     * (another application's, or the start of the database) is {@code ""}, one at or past the
     * seam's end is {@code \xff}, as before the first and past the last key of the seam's space.
     */
    byte[] resolved(byte[] key) {
        if (Keys.compare(key, prefix) < 0) return Keys.EMPTY;
        if (Keys.compare(key, end) >= 0) return Keys.SYSTEM_PREFIX;
        return strip(key);
    }

    /** A versionstamped key's operand (key, then the placeholder's 4-byte little-endian offset): prefixed, the offset moved along. */
    byte[] addToVersionstampedKey(byte[] operand) {
        if (prefix.length == 0) return operand;
        int n = operand.length - Versionstamps.OFFSET_BYTES;
        int offset = ByteBuffer.wrap(operand, n, Versionstamps.OFFSET_BYTES).order(ByteOrder.LITTLE_ENDIAN).getInt();
        byte[] out = new byte[prefix.length + operand.length];
        System.arraycopy(prefix, 0, out, 0, prefix.length);
        System.arraycopy(operand, 0, out, prefix.length, n);
        ByteBuffer.wrap(out, prefix.length + n, Versionstamps.OFFSET_BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(offset + prefix.length);
        return out;
    }
}

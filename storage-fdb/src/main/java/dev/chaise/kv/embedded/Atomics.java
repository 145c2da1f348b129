package dev.chaise.kv.embedded;

import dev.chaise.kv.KvLimits;
import dev.chaise.kv.MutationType;
import java.util.Arrays;

/** FoundationDB's atomic mutations (API 520+ semantics), applied to an existing value or null. */
final class Atomics {
    private Atomics() {}

    /** The new value, or null when the key ends up absent. */
    static byte[] apply(MutationType type, byte[] existing, byte[] param) {
        return switch (type) {
            case ADD -> add(resize(existing, param.length), param);
            case BIT_AND -> existing == null ? param.clone() : bitwise(resize(existing, param.length), param, 0);
            case BIT_OR -> bitwise(resize(existing, param.length), param, 1);
            case BIT_XOR -> bitwise(resize(existing, param.length), param, 2);
            case MAX -> existing == null ? param.clone() : pickLittleEndian(resize(existing, param.length), param, true);
            case MIN -> existing == null ? param.clone() : pickLittleEndian(resize(existing, param.length), param, false);
            case BYTE_MAX -> existing == null || Arrays.compareUnsigned(param, existing) > 0 ? param.clone() : existing;
            case BYTE_MIN -> existing == null || Arrays.compareUnsigned(param, existing) < 0 ? param.clone() : existing;
            case APPEND_IF_FITS -> existing == null ? param.clone()
                    : existing.length + param.length > KvLimits.MAX_VALUE_BYTES ? existing : concat(existing, param);
            case COMPARE_AND_CLEAR -> existing != null && Arrays.equals(existing, param) ? null : existing;
        };
    }

    /** The existing value truncated or zero-extended to {@code n} bytes (little-endian operands). */
    private static byte[] resize(byte[] existing, int n) {
        return existing == null ? new byte[n] : Arrays.copyOf(existing, n);
    }

    private static byte[] add(byte[] a, byte[] b) {
        int carry = 0;
        for (int i = 0; i < a.length; i++) {
            int s = (a[i] & 0xff) + (b[i] & 0xff) + carry;
            a[i] = (byte) s;
            carry = s >>> 8;
        }
        return a;
    }

    private static byte[] bitwise(byte[] a, byte[] b, int op) {
        for (int i = 0; i < a.length; i++) {
            a[i] = (byte) switch (op) {
                case 0 -> a[i] & b[i];
                case 1 -> a[i] | b[i];
                default -> a[i] ^ b[i];
            };
        }
        return a;
    }

    private static byte[] pickLittleEndian(byte[] a, byte[] b, boolean max) {
        int cmp = 0;
        for (int i = a.length - 1; i >= 0 && cmp == 0; i--) cmp = Integer.compare(a[i] & 0xff, b[i] & 0xff);
        return (cmp >= 0) == max ? a : b.clone();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}

package dev.chaise.kv;

import com.apple.foundationdb.tuple.Tuple;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The FDB tuple encoding of the element types that make up almost every key and leaf here
 * (integers, strings, byte strings, booleans, null), written straight into a byte buffer.
 * {@link Tuple#pack()} builds an immutable list per element, scans it for versionstamps and sizes
 * it before writing; on a bulk load that was a tenth of the storage layer's CPU. Anything else
 * (doubles, big integers, nested tuples, versionstamps) goes through {@link Tuple}, so the bytes
 * are always the tuple layer's: {@code TupleBytesTest} checks them against it.
 */
public final class TupleBytes {
    private static final byte NULL = 0x00;
    private static final byte BYTES = 0x01;
    private static final byte STRING = 0x02;
    private static final byte NESTED = 0x05;
    private static final byte INT_ZERO = 0x14;
    private static final byte FALSE = 0x26;
    private static final byte TRUE = 0x27;

    private byte[] buf;
    private int len;

    public TupleBytes(int capacity) {
        buf = new byte[Math.max(16, capacity)];
    }

    /** A buffer that starts with {@code prefix} (raw bytes, not an element). */
    public static TupleBytes startingWith(byte[] prefix, int extra) {
        TupleBytes t = new TupleBytes(prefix.length + extra);
        t.raw(prefix);
        return t;
    }

    /** The tuple encoding of {@code items}, as {@code Tuple.from(items).pack()}. */
    public static byte[] pack(Object... items) {
        TupleBytes t = new TupleBytes(32);
        for (Object o : items) t.add(o);
        return t.toArray();
    }

    /** One string element, as {@code Tuple.from(s).pack()}. */
    public static byte[] string(String s) {
        return new TupleBytes(s.length() + 8).add(s).toArray();
    }

    /**
     * One string element of a string the caller has found {@link #wellFormed}: the exploder checks
     * every string for its own error message, and a second scan per leaf showed on bulk loads.
     */
    public static byte[] wellFormedString(String s) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        for (byte b : u) {
            if (b == 0) return new TupleBytes(u.length + 8).escaped(STRING, u).toArray();
        }
        byte[] out = new byte[u.length + 2];
        out[0] = STRING;
        System.arraycopy(u, 0, out, 1, u.length);
        return out; // the last byte stays 0: the terminator
    }

    private static final byte DOUBLE = 0x21;

    /**
     * Decodes {@code bytes[from, to)} as {@code Tuple.fromBytes} would, appending the elements to
     * {@code out}, if every element is null, a string, a byte string, a boolean, a double or an
     * integer that fits a long (8-byte negatives excepted); otherwise returns false, with {@code out} in an unspecified
     * state, and the caller decodes with {@link Tuple}. A document read decodes every leaf's path
     * and value: {@code Tuple.fromBytes} builds a tuple and its list per call, and was most of
     * the imploding's CPU (issue 27). Malformed bytes give false or an exception, never a value.
     */
    public static boolean decodeSimple(byte[] bytes, int from, int to, java.util.List<Object> out) {
        int i = from;
        while (i < to) {
            byte code = bytes[i++];
            if (code == NULL) {
                out.add(null);
            } else if (code == STRING || code == BYTES) {
                int end = i;
                boolean escaped = false;
                while (true) {
                    if (end >= to) return false;
                    if (bytes[end] == 0) {
                        if (end + 1 < to && bytes[end + 1] == (byte) 0xff) {
                            escaped = true;
                            end += 2;
                            continue;
                        }
                        break;
                    }
                    end++;
                }
                if (code == BYTES) out.add(escaped ? unescaped(bytes, i, end) : java.util.Arrays.copyOfRange(bytes, i, end));
                else out.add(escaped ? new String(unescaped(bytes, i, end), StandardCharsets.UTF_8) : new String(bytes, i, end - i, StandardCharsets.UTF_8));
                i = end + 1;
            } else if (code >= INT_ZERO && code <= INT_ZERO + 8) {
                int n = code - INT_ZERO;
                if (i + n > to || (n == 8 && bytes[i] < 0)) return false; // past a long: a BigInteger
                long v = 0;
                for (int j = 0; j < n; j++) v = (v << 8) | (bytes[i + j] & 0xff);
                out.add(v);
                i += n;
            } else if (code >= INT_ZERO - 7 && code < INT_ZERO) {
                int n = INT_ZERO - code;
                if (i + n > to) return false;
                long v = 0;
                for (int j = 0; j < n; j++) v = (v << 8) | (bytes[i + j] & 0xff);
                out.add(v - ((1L << (8 * n)) - 1)); // the ones' complement of the magnitude
                i += n;
            } else if (code == FALSE || code == TRUE) {
                out.add(code == TRUE);
            } else if (code == DOUBLE) {
                if (i + 8 > to) return false;
                long bits = 0;
                for (int j = 0; j < 8; j++) bits = (bits << 8) | (bytes[i + j] & 0xff);
                bits = bits < 0 ? bits ^ Long.MIN_VALUE : ~bits; // positives had the sign bit set, negatives every bit flipped
                out.add(Double.longBitsToDouble(bits));
                i += 8;
            } else {
                return false;
            }
        }
        return true;
    }

    private static byte[] unescaped(byte[] bytes, int from, int to) {
        byte[] u = new byte[to - from];
        int n = 0;
        for (int i = from; i < to; i++) {
            u[n++] = bytes[i];
            if (bytes[i] == 0) i++; // 00 ff stands for 00
        }
        return java.util.Arrays.copyOf(u, n);
    }

    /** One integer element, as {@code Tuple.from(v).pack()}. */
    public static byte[] integer(long v) {
        return new TupleBytes(10).add(v).toArray();
    }

    public TupleBytes raw(byte[] bytes) {
        ensure(bytes.length);
        System.arraycopy(bytes, 0, buf, len, bytes.length);
        len += bytes.length;
        return this;
    }

    public TupleBytes add(Object o) {
        return switch (o) {
            case null -> put(NULL);
            case Long l -> add(l.longValue());
            case Integer i -> add(i.longValue());
            case String s -> add(s);
            case byte[] b -> addBytes(b);
            case Boolean b -> put(b ? TRUE : FALSE);
            case Tuple t -> nested(t);
            default -> raw(Tuple.from(o).pack());
        };
    }

    /** A nested tuple: its elements between 05 and 00, a null among them as 00 ff (the tuple layer's rule inside a nesting). */
    public TupleBytes nested(Tuple t) {
        put(NESTED);
        for (Object o : t.getItems()) {
            if (o == null) put(NULL).put((byte) 0xff);
            else add(o);
        }
        return put(NULL);
    }

    public TupleBytes add(long v) {
        if (v == 0) return put(INT_ZERO);
        if (v == Long.MIN_VALUE) return raw(Tuple.from(v).pack());
        long magnitude = Math.abs(v);
        int n = (71 - Long.numberOfLeadingZeros(magnitude)) / 8; // bytes of the magnitude, 1..8
        long body = v > 0 ? magnitude : ~magnitude; // negatives: one's complement, as the tuple layer
        ensure(n + 1);
        buf[len++] = (byte) (v > 0 ? INT_ZERO + n : INT_ZERO - n);
        for (int shift = (n - 1) * 8; shift >= 0; shift -= 8) buf[len++] = (byte) (body >>> shift);
        return this;
    }

    public TupleBytes add(String s) {
        if (s == null) return put(NULL); // as add(Object): the overload is picked for a null String too
        if (!wellFormed(s)) return raw(Tuple.from(s).pack()); // the tuple layer's own rule for lone surrogates
        return escaped(STRING, s.getBytes(StandardCharsets.UTF_8));
    }

    public TupleBytes addBytes(byte[] b) {
        return escaped(BYTES, b);
    }

    private TupleBytes escaped(byte code, byte[] b) {
        ensure(b.length + 2);
        buf[len++] = code;
        int start = 0;
        for (int i = 0; i < b.length; i++) {
            if (b[i] == 0) {
                ensure(b.length - start + 2); // the rest, this escape and the terminator
                System.arraycopy(b, start, buf, len, i + 1 - start);
                len += i + 1 - start;
                buf[len++] = (byte) 0xff;
                start = i + 1;
            }
        }
        System.arraycopy(b, start, buf, len, b.length - start);
        len += b.length - start;
        buf[len++] = 0;
        return this;
    }

    private TupleBytes put(byte b) {
        ensure(1);
        buf[len++] = b;
        return this;
    }

    public int length() {
        return len;
    }

    public byte[] toArray() {
        return Arrays.copyOf(buf, len);
    }

    private void ensure(int more) {
        if (len + more > buf.length) buf = Arrays.copyOf(buf, Math.max(len + more, buf.length * 2));
    }

    /**
     * True if {@code s} is well-formed UTF-16 (no lone surrogate), so UTF-8 carries it without
     * substitution: the one rule for tuple strings, JSON text and revision ids.
     */
    public static boolean wellFormed(String s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (!Character.isHighSurrogate(c) || i + 1 == n || !Character.isLowSurrogate(s.charAt(i + 1))) return false;
                i++;
            }
        }
        return true;
    }
}

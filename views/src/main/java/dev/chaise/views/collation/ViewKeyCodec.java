package dev.chaise.views.collation;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Map;

/**
 * Encodes a view key (any JSON value) to bytes whose unsigned lexicographic order is CouchDB's view
 * collation ({@link ViewCollation#compare}): RFC E's "key encoding gives CouchDB's collation through
 * plain byte order", so map index rows need no comparator in FDB.
 *
 * <p><b>Not reversible.</b> Strings become ICU sort keys, and {@code 1} and {@code 1.0} encode alike,
 * so the emitted key must be stored as JSON beside the row (RFC E's value is
 * {@code {emitted_key, emitted_value}}).
 *
 * <p><b>Layout.</b> One tag byte per value, in collation order, then:
 * <ul>
 *   <li>null, false, true: nothing more;
 *   <li>numbers: a sign tag (negative, zero, positive); for non-zero {@code 0.D × 10^E} (D the
 *       decimal digits without leading or trailing zeros) the exponent E as a 4-byte sign-flipped
 *       big-endian int, then D two digits a byte ({@code 1 + pair}, an odd tail padded with 0), then
 *       a {@code 0x00} terminator below every digit byte; negative numbers complement all of it;
 *   <li>strings: the ICU sort key, which ends in its only {@code 0x00} byte;
 *   <li>arrays: the elements, then {@link #END}; objects: per member the name encoded as a string
 *       (with its tag) and the value, then {@link #END}. END is below every tag, so a prefix sorts
 *       first.
 * </ul>
 * Every encoding is self-delimiting (prefix-free), so concatenations and tuples sort by their
 * first element first.
 *
 * <p><b>In FDB keys</b> the result is meant to go into the tuple layer as one byte-string element,
 * e.g. {@code Tuple.from(encode(key), docId, dupeId)}. The tuple layer's byte strings keep plain
 * unsigned order (0x00 escaped as 0x00 0xFF, then a 0x00 end), so {@code {key, docid}} sorts by key,
 * then doc id, with no escaping scheme of our own to get right; the cost is one extra byte per
 * 0x00 (one per string and per number).
 *
 * <p><b>Numbers</b> compare by exact value like CouchDB (Erlang compares mixed integers and floats
 * exactly): integers of any size, including beyond double range, keep every digit; a double with an
 * integral value is encoded as that exact integer (1e23 is 99999999999999991611392, not 10^23);
 * other doubles use their shortest round-tripping decimal ({@link Double#toString}), which orders
 * exactly against all doubles and integers because no other double or integer lies between a
 * fractional double and its shortest decimal. {@code -0.0} encodes as zero. (An arbitrary
 * {@code DecimalNode} could fall in that gap; {@link Json#MAPPER} never makes one.)
 *
 * <p><b>Strings</b> use the collator of {@link ViewCollation}: sort keys compare exactly as
 * {@code Collator.compare}. They depend on the ICU/UCA version: an index must be rebuilt if icu4j's
 * collator version changes ({@link #collatorVersion()}), and order can differ from a CouchDB linked
 * against another libicu in characters whose UCA weights changed.
 */
public final class ViewKeyCodec {

    /** CouchDB's view key limit (couch_views {@code key_size_limit}, RFC E's "8 KB"): JSON bytes. */
    public static final int KEY_SIZE_LIMIT = 8000;
    /**
     * FDB's hard key limit. An encoded key this long cannot be stored with any prefix, so it fails
     * early; the writer still checks the whole key (prefix, doc id, dupe id) against FDB's limit.
     */
    public static final int ENCODED_SIZE_LIMIT = 10_000;

    static final byte END = 0x01;
    static final byte NULL = 0x02;
    static final byte FALSE = 0x03;
    static final byte TRUE = 0x04;
    static final byte NEGATIVE = 0x05;
    static final byte ZERO = 0x06;
    static final byte POSITIVE = 0x07;
    static final byte STRING = 0x08;
    static final byte ARRAY = 0x09;
    static final byte OBJECT = 0x0A;

    /** Above every encoded key: an open upper bound for range reads (CouchDB's max key). */
    public static final byte[] MAX = {(byte) 0xFF};

    private ViewKeyCodec() {}

    /**
     * One order's tags, and how it writes a string's bytes after its tag; numbers and the
     * structure (elements or members, then {@link #END}) are common to both orders.
     *
     * @param member written before each object member's name: the string tag here, where a name
     *     is written as a string; {@link RawKeyCodec}'s member marker there
     */
    record Scheme(byte nul, byte fals, byte tru, byte string, byte array, byte object, byte member,
                  java.util.function.BiConsumer<ByteArrayOutputStream, String> text) {}

    /** CouchDB's view collation. */
    static final Scheme COLLATED = new Scheme(NULL, FALSE, TRUE, STRING, ARRAY, OBJECT, STRING, ViewKeyCodec::writeSortKey);

    /** The order-preserving bytes of {@code key}; no size check. */
    public static byte[] encode(JsonNode key) {
        return encode(key, COLLATED);
    }

    static byte[] encode(JsonNode key, Scheme scheme) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(32);
        write(out, key, scheme);
        return out.toByteArray();
    }

    /**
     * {@link #checkKeySize} then {@link #encode}, failing also if the encoding exceeds
     * {@link #ENCODED_SIZE_LIMIT} (ICU sort keys can be longer than the UTF-8 they come from).
     */
    public static byte[] encodeChecked(JsonNode key) {
        return Collation.DEFAULT.encodeChecked(key);
    }

    /** Fails with {@link ViewKeyTooLargeException} if the key's compact JSON exceeds {@link #KEY_SIZE_LIMIT}. */
    public static void checkKeySize(JsonNode key) {
        long size = jsonSize(key);
        if (size > KEY_SIZE_LIMIT) throw new ViewKeyTooLargeException(size, KEY_SIZE_LIMIT, false);
    }

    static long jsonSize(JsonNode key) {
        try {
            return Json.MAPPER.writeValueAsBytes(key).length;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("view key is not serializable JSON", e);
        }
    }

    /** The ICU collator's version: stored with an index, a change means its sort keys are stale. */
    public static String collatorVersion() {
        return ViewCollation.COLLATOR.getVersion().toString();
    }

    private static void write(ByteArrayOutputStream out, JsonNode n, Scheme s) {
        switch (n.getNodeType()) {
            case NULL -> out.write(s.nul());
            case BOOLEAN -> out.write(n.booleanValue() ? s.tru() : s.fals());
            case NUMBER -> writeNumber(out, n);
            case STRING -> {
                out.write(s.string());
                s.text().accept(out, n.textValue());
            }
            case ARRAY -> {
                out.write(s.array());
                for (JsonNode e : n) write(out, e, s);
                out.write(END);
            }
            case OBJECT -> {
                out.write(s.object());
                for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                    Map.Entry<String, JsonNode> e = it.next();
                    out.write(s.member());
                    s.text().accept(out, e.getKey());
                    write(out, e.getValue(), s);
                }
                out.write(END);
            }
            default -> throw new IllegalArgumentException("not a JSON value: " + n.getNodeType());
        }
    }

    private static void writeSortKey(ByteArrayOutputStream out, String s) {
        // toByteArray() ends with the key's 0x00 terminator, the only 0x00 in an ICU sort key.
        out.writeBytes(ViewCollation.COLLATOR.getCollationKey(s).toByteArray());
    }

    /** Both orders' numbers: Erlang compares them by exact value too. */
    private static void writeNumber(ByteArrayOutputStream out, JsonNode n) {
        BigDecimal v = encodingValue(n);
        int sign = v.signum();
        if (sign == 0) {
            out.write(ZERO);
            return;
        }
        v = v.stripTrailingZeros();
        String digits = v.unscaledValue().abs().toString();
        long exponent = (long) digits.length() - v.scale();
        if (exponent != (int) exponent) throw new IllegalArgumentException("number out of range: " + v);
        int flip = sign < 0 ? 0xFF : 0x00;
        out.write(sign < 0 ? NEGATIVE : POSITIVE);
        int e = (int) exponent ^ Integer.MIN_VALUE;
        for (int shift = 24; shift >= 0; shift -= 8) out.write(((e >>> shift) & 0xFF) ^ flip);
        for (int i = 0; i < digits.length(); i += 2) {
            int hi = digits.charAt(i) - '0';
            int lo = i + 1 < digits.length() ? digits.charAt(i + 1) - '0' : 0;
            out.write((1 + hi * 10 + lo) ^ flip);
        }
        out.write(flip);
    }

    /** The value to encode: exact, except fractional doubles take their shortest decimal (see class doc). */
    static BigDecimal encodingValue(JsonNode n) {
        if (n.isDouble() || n.isFloat()) {
            double d = n.doubleValue();
            if (!Double.isFinite(d)) throw new IllegalArgumentException("not a JSON number: " + d);
            return d == Math.rint(d) ? new BigDecimal(d) : new BigDecimal(Double.toString(d));
        }
        return ViewCollation.exactValue(n);
    }
}

package dev.chaise.views.collation;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Encodes a key of a view with {@code options.collation: "raw"} to bytes whose unsigned order is
 * Erlang's term order over the key as CouchDB decodes it ({@link RawOrder}), as couch_mrview
 * compares such a view's keys ({@code maybe_define_less_fun} leaves the btree on {@code <}):
 * numbers, then {@code false < null < true}, then objects, then arrays, then strings byte by byte.
 *
 * <p><b>Layout.</b> One tag byte per value, in that order, then:
 * <ul>
 *   <li>numbers: {@link ViewKeyCodec}'s sign tags and digits (exact value, so {@code 1} and
 *       {@code 1.0} compare equal as in Erlang);
 *   <li>strings: the UTF-8 bytes with {@code 0x00} escaped as {@code 0x00 0xFF}, then {@code 0x00};
 *   <li>arrays: the elements, then {@link #END};
 *   <li>objects ({@code {Props}}, a list of {@code {Name, Value}}): per member {@link #MEMBER}, the
 *       name as a string without its tag, the value; then {@link #END}. Members keep their order,
 *       which matters here as it does in Erlang.
 * </ul>
 * END sorts below every tag and below MEMBER, so a prefix sorts first; every encoding is
 * self-delimiting, so tuples of them sort by their first element first.
 */
final class RawKeyCodec {
    static final byte END = 0x01;
    static final byte MEMBER = 0x02;
    // 0x05-0x07: numbers (ViewKeyCodec's NEGATIVE, ZERO, POSITIVE)
    static final byte FALSE = 0x08;
    static final byte NULL = 0x09;
    static final byte TRUE = 0x0A;
    static final byte OBJECT = 0x0B;
    static final byte ARRAY = 0x0C;
    static final byte STRING = 0x0D;

    private static final ViewKeyCodec.Scheme RAW = new ViewKeyCodec.Scheme(NULL, FALSE, TRUE, STRING, ARRAY, OBJECT, MEMBER, RawKeyCodec::writeUtf8);

    private RawKeyCodec() {}

    static byte[] encode(JsonNode key) {
        return ViewKeyCodec.encode(key, RAW);
    }

    private static void writeUtf8(ByteArrayOutputStream out, String s) {
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            out.write(b);
            if (b == 0) out.write(0xFF);
        }
        out.write(0);
    }
}

package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Erlang's external term format, as {@code term_to_binary(T, [{minor_version, 1}])} writes it:
 * the bytes CouchDB hashes into a revision id ({@link RevHasher}) and a replication id (the
 * replicator's {@code ReplicationId}), and a Nouveau index's signature. Only the terms those are
 * made of: atoms (Latin-1, {@code ATOM_EXT}), binaries, strings (lists of bytes), lists, tuples,
 * the empty map, integers, floats, and
 * JSON as jiffy decodes it ({@link #writeEjson}, streamed from a tree without building terms).
 */
public final class ErlangTerm {
    /** An atom such as {@code remote} or {@code undefined}. */
    public record Atom(String name) {}

    /** A tuple of terms. */
    public record Tuple(List<Object> items) {
        public static Tuple of(Object... items) {
            return new Tuple(List.of(items));
        }
    }

    /** A string: Erlang's list of bytes, as {@code binary_to_list} of its UTF-8 bytes makes it. */
    public record Str(String text) {}

    public static final Atom UNDEFINED = new Atom("undefined");

    private ErlangTerm() {}

    /**
     * JSON as jiffy decodes it: objects {@code {[{Key, Value}]}} with binary keys in their order,
     * strings as binaries, true/false/null atoms, integers and floats.
     */
    public static Object ejson(JsonNode j) {
        if (j == null || j.isNull()) return new Atom("null");
        if (j.isBoolean()) return new Atom(j.booleanValue() ? "true" : "false");
        if (j.isTextual()) return j.textValue().getBytes(StandardCharsets.UTF_8);
        if (j.isIntegralNumber()) return j.bigIntegerValue();
        if (j.isNumber()) return j.doubleValue();
        if (j.isArray()) {
            List<Object> items = new ArrayList<>(j.size());
            for (JsonNode e : j) items.add(ejson(e));
            return items;
        }
        List<Object> props = new ArrayList<>(j.size());
        for (Map.Entry<String, JsonNode> e : j.properties()) props.add(Tuple.of(e.getKey().getBytes(StandardCharsets.UTF_8), ejson(e.getValue())));
        return Tuple.of(props);
    }

    /** {@code term_to_binary(Term, [{minor_version, 1}])}. */
    public static byte[] encode(Object term) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(131);
        try {
            write(out, term);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not throw
        }
        return out.toByteArray();
    }

    /**
     * JSON as jiffy decodes it and {@code term_to_binary} then writes it, straight from the tree:
     * objects {@code {[{Key, Value}]}}, strings as binaries, true/false/null atoms, integers and
     * floats; an array of small non-negative integers is a {@code STRING_EXT}, as any such list.
     */
    static void writeEjson(OutputStream out, JsonNode j) throws IOException {
        switch (j.getNodeType()) {
            case OBJECT -> {
                out.write(104); // SMALL_TUPLE_EXT of one: {Props}
                out.write(1);
                if (j.isEmpty()) {
                    out.write(106);
                    return;
                }
                out.write(108); // LIST_EXT
                u32(out, j.size());
                for (Map.Entry<String, JsonNode> e : j.properties()) {
                    out.write(104);
                    out.write(2);
                    binary(out, MemberNames.of(e.getKey()).utf8());
                    writeEjson(out, e.getValue());
                }
                out.write(106);
            }
            case ARRAY -> {
                if (j.isEmpty()) {
                    out.write(106);
                    return;
                }
                boolean bytes = j.size() <= 65535;
                for (JsonNode e : j) {
                    if (!e.isIntegralNumber() || !e.canConvertToInt() || e.intValue() < 0 || e.intValue() > 255) {
                        bytes = false;
                        break;
                    }
                }
                if (bytes) {
                    out.write(107); // STRING_EXT
                    u16(out, j.size());
                    for (JsonNode e : j) out.write(e.intValue());
                    return;
                }
                out.write(108);
                u32(out, j.size());
                for (JsonNode e : j) writeEjson(out, e);
                out.write(106);
            }
            case STRING -> binary(out, j.textValue().getBytes(StandardCharsets.UTF_8));
            case BOOLEAN -> atom(out, j.booleanValue() ? "true" : "false");
            case NULL, MISSING -> atom(out, "null");
            case NUMBER -> {
                if (!j.isIntegralNumber()) writeFloat(out, j.doubleValue());
                else if (j.canConvertToLong()) writeInteger(out, j.longValue());
                else writeInteger(out, j.bigIntegerValue());
            }
            default -> throw new IllegalArgumentException("no Erlang term for " + j.getNodeType());
        }
    }

    static void atom(OutputStream out, String name) throws IOException {
        byte[] b = name.getBytes(StandardCharsets.ISO_8859_1);
        out.write(100); // ATOM_EXT: what minor_version 1 writes for a Latin-1 atom
        u16(out, b.length);
        out.write(b);
    }

    static void binary(OutputStream out, byte[] b) throws IOException {
        out.write(109); // BINARY_EXT
        u32(out, b.length);
        out.write(b);
    }

    private static void writeFloat(OutputStream out, double d) throws IOException {
        out.write(70); // NEW_FLOAT_EXT
        long bits = Double.doubleToLongBits(d);
        for (int s = 56; s >= 0; s -= 8) out.write((int) (bits >>> s) & 0xff);
    }

    private static void write(OutputStream out, Object t) throws IOException {
        switch (t) {
            case Atom a -> atom(out, a.name());
            case byte[] b -> binary(out, b);
            case String str -> binary(out, str.getBytes(StandardCharsets.UTF_8));
            case Str str -> {
                byte[] b = str.text().getBytes(StandardCharsets.UTF_8);
                List<Object> bytes = new ArrayList<>(b.length);
                for (byte x : b) bytes.add(BigInteger.valueOf(x & 0xff));
                writeList(out, bytes);
            }
            case Tuple tu -> {
                int n = tu.items().size();
                if (n < 256) {
                    out.write(104); // SMALL_TUPLE_EXT
                    out.write(n);
                } else {
                    out.write(105); // LARGE_TUPLE_EXT
                    u32(out, n);
                }
                for (Object o : tu.items()) write(out, o);
            }
            case List<?> l -> writeList(out, l);
            case Map<?, ?> m when m.isEmpty() -> { // #{}: Nouveau's signature term has one
                out.write(116); // MAP_EXT
                u32(out, 0);
            }
            case Integer i -> writeInteger(out, BigInteger.valueOf(i));
            case Long l -> writeInteger(out, BigInteger.valueOf(l));
            case BigInteger i -> writeInteger(out, i);
            case Double d -> writeFloat(out, d);
            default -> throw new IllegalArgumentException("no Erlang term for " + t.getClass());
        }
    }

    /** A list of small integers (0..255) is a STRING_EXT, as term_to_binary writes every such list. */
    private static void writeList(OutputStream out, List<?> l) throws IOException {
        if (l.isEmpty()) {
            out.write(106); // NIL_EXT
            return;
        }
        boolean bytes = l.size() <= 65535;
        for (Object o : l) {
            BigInteger i = o instanceof BigInteger b ? b : o instanceof Integer x ? BigInteger.valueOf(x) : o instanceof Long x ? BigInteger.valueOf(x) : null;
            if (i == null || i.signum() < 0 || i.compareTo(BigInteger.valueOf(255)) > 0) {
                bytes = false;
                break;
            }
        }
        if (bytes) {
            out.write(107); // STRING_EXT
            u16(out, l.size());
            for (Object o : l) out.write(((Number) o).intValue());
            return;
        }
        out.write(108); // LIST_EXT
        u32(out, l.size());
        for (Object o : l) write(out, o);
        out.write(106); // a proper list ends with NIL
    }

    /** {@link #writeInteger(OutputStream, BigInteger)} without a BigInteger for the integers documents hold. */
    static void writeInteger(OutputStream out, long v) throws IOException {
        if (v >= 0 && v <= 255) {
            out.write(97); // SMALL_INTEGER_EXT
            out.write((int) v);
        } else if (v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE) {
            out.write(98); // INTEGER_EXT
            u32(out, (int) v);
        } else {
            writeInteger(out, BigInteger.valueOf(v));
        }
    }

    static void writeInteger(OutputStream out, BigInteger i) throws IOException {
        if (i.signum() >= 0 && i.compareTo(BigInteger.valueOf(255)) <= 0) {
            out.write(97); // SMALL_INTEGER_EXT
            out.write(i.intValue());
        } else if (i.bitLength() < 32) {
            out.write(98); // INTEGER_EXT
            u32(out, i.intValue());
        } else {
            byte[] mag = i.abs().toByteArray(); // big-endian, maybe a leading 0
            int start = mag[0] == 0 ? 1 : 0;
            int n = mag.length - start;
            if (n < 256) {
                out.write(110); // SMALL_BIG_EXT
                out.write(n);
            } else {
                out.write(111); // LARGE_BIG_EXT
                u32(out, n);
            }
            out.write(i.signum() < 0 ? 1 : 0);
            for (int k = mag.length - 1; k >= start; k--) out.write(mag[k]); // little-endian digits
        }
    }

    static void u16(OutputStream out, int v) throws IOException {
        out.write((v >>> 8) & 0xff);
        out.write(v & 0xff);
    }

    static void u32(OutputStream out, int v) throws IOException {
        out.write((v >>> 24) & 0xff);
        out.write((v >>> 16) & 0xff);
        out.write((v >>> 8) & 0xff);
        out.write(v & 0xff);
    }
}

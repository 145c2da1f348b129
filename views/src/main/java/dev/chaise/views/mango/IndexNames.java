package dev.chaise.views.mango;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;

/**
 * The name CouchDB gives an index (and its design document) when the request leaves them out:
 * the SHA-1, in hex, of the Erlang external term format ({@code term_to_binary} with
 * {@code minor_version 1}) of {@code {Def, lists:usort(Opts)}}, where Def is the request's
 * {@code index} as jiffy decodes it and Opts the validated create options. Reproducing it means the
 * same request names the same design document on Chaise as on CouchDB, so clients and scripts
 * that hard-code those names keep working.
 *
 * <p>Only what decoded JSON needs is encoded: objects as {@code {[{Name, Value}, ...]}}, arrays as
 * lists (a list of bytes as a string, as Erlang encodes it), strings as binaries, integers and
 * floats, and the atoms {@code true}, {@code false}, {@code null} and the option names.
 */
final class IndexNames {
    private IndexNames() {}

    /** An Erlang atom among the option values ({@code auto_name}, {@code db_default}). */
    record Atom(String name) {}

    /**
     * @param def the request's {@code index} member
     * @param name the given name, or null ({@code auto_name})
     * @param ddoc the given design document name as given, or null
     * @param w the given {@code w}, or 2
     * @param partitioned the given {@code partitioned}, or null ({@code db_default})
     */
    static String generate(JsonNode def, String type, String name, String ddoc, long w, Boolean partitioned) {
        java.util.TreeMap<String, Object> opts = new java.util.TreeMap<>(); // lists:usort: {Tag, Value} pairs sort by tag
        opts.put("ddoc", ddoc == null ? new Atom("auto_name") : ddoc);
        opts.put("def", def);
        opts.put("name", name == null ? new Atom("auto_name") : name);
        opts.put("partitioned", partitioned == null ? new Atom("db_default") : new Atom(partitioned.toString()));
        opts.put("type", type);
        opts.put("w", w);
        return hash(def, opts);
    }

    /** SHA-1 of {@code {Def, Opts}}, the options in the map's order. */
    static String hash(JsonNode def, java.util.SortedMap<String, Object> opts) {
        Out out = new Out();
        out.write(131);
        out.tuple(2);
        out.json(def);
        out.list(opts.size());
        opts.forEach(out::pair);
        out.write(106); // the list's tail
        return sha1Hex(out.toByteArray());
    }

    static String sha1Hex(byte[] bytes) {
        return HexFormat.of().formatHex(sha1(bytes));
    }

    static byte[] sha1(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-1").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Writes terms in the external term format. */
    static final class Out extends ByteArrayOutputStream {
        void tuple(int arity) {
            write(104);
            write(arity);
        }

        void list(int length) {
            write(108);
            writeBytes(ByteBuffer.allocate(4).putInt(length).array());
        }

        void atom(String a) {
            byte[] b = a.getBytes(StandardCharsets.ISO_8859_1);
            write(100); // ATOM_EXT: minor_version 1 writes atoms as Latin-1
            write(b.length >> 8);
            write(b.length & 0xFF);
            writeBytes(b);
        }

        void binary(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            write(109);
            writeBytes(ByteBuffer.allocate(4).putInt(b.length).array());
            writeBytes(b);
        }

        void pair(String tag, Object value) {
            tuple(2);
            atom(tag);
            switch (value) {
                case Atom a -> atom(a.name());
                case String s -> binary(s);
                case Long l -> integer(BigInteger.valueOf(l));
                case JsonNode j -> json(j);
                default -> throw new IllegalArgumentException(String.valueOf(value));
            }
        }

        void integer(BigInteger v) {
            if (v.signum() >= 0 && v.bitLength() <= 8) {
                write(97);
                write(v.intValue());
            } else if (v.bitLength() <= 31) {
                write(98);
                writeBytes(ByteBuffer.allocate(4).putInt(v.intValue()).array());
            } else {
                byte[] be = v.abs().toByteArray();
                int start = be[0] == 0 ? 1 : 0;
                int n = be.length - start;
                if (n <= 255) {
                    write(110);
                    write(n);
                } else {
                    write(111);
                    writeBytes(ByteBuffer.allocate(4).putInt(n).array());
                }
                write(v.signum() < 0 ? 1 : 0);
                for (int i = be.length - 1; i >= start; i--) write(be[i]); // little-endian digits
            }
        }

        void json(JsonNode n) {
            switch (n.getNodeType()) {
                case NULL -> atom("null");
                case BOOLEAN -> atom(n.booleanValue() ? "true" : "false");
                case STRING -> binary(n.textValue());
                case NUMBER -> {
                    if (n.isIntegralNumber()) {
                        integer(n.bigIntegerValue());
                    } else {
                        write(70); // NEW_FLOAT_EXT
                        writeBytes(ByteBuffer.allocate(8).putDouble(n.doubleValue()).array());
                    }
                }
                case ARRAY -> {
                    if (n.isEmpty()) {
                        write(106);
                    } else if (bytesOnly(n)) {
                        write(107); // STRING_EXT: a list of small integers
                        write(n.size() >> 8);
                        write(n.size() & 0xFF);
                        for (JsonNode x : n) write(x.intValue());
                    } else {
                        list(n.size());
                        for (JsonNode x : n) json(x);
                        write(106);
                    }
                }
                case OBJECT -> {
                    tuple(1);
                    if (n.isEmpty()) {
                        write(106);
                    } else {
                        list(n.size());
                        for (Map.Entry<String, JsonNode> e : n.properties()) {
                            tuple(2);
                            binary(e.getKey());
                            json(e.getValue());
                        }
                        write(106);
                    }
                }
                default -> throw new IllegalArgumentException("not JSON: " + n.getNodeType());
            }
        }

        private static boolean bytesOnly(JsonNode array) {
            if (array.size() > 65535) return false;
            for (JsonNode x : array) {
                if (!x.isIntegralNumber() || x.bigIntegerValue().signum() < 0 || x.bigIntegerValue().bitLength() > 8) return false;
            }
            return true;
        }
    }
}

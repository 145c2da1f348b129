package dev.chaise.storage.rev;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * The revision id of an interactive edit: deterministic, so the same edit made on two replicas
 * gets the same revision (as CouchDB's new_revid, though not bit-compatible with it).
 *
 * <h2>Canonical form</h2>
 * The new hash is the lowercase hex MD5 of the UTF-8 bytes of the canonical JSON text of
 * <pre>[deleted, parent, body, attachments]</pre>
 * <ul>
 *   <li>{@code deleted}: {@code true}/{@code false};
 *   <li>{@code parent}: the parent rev string {@code "pos-hash"}, or {@code null} for pos 1;
 *   <li>{@code body}: the document body (a JSON object); its top-level {@code _}-prefixed
 *       members ({@code _id}, {@code _rev}, {@code _attachments}, …) are left out;
 *   <li>{@code attachments}: {@code [[name, content_type, digest], …]} sorted by name (code points).
 * </ul>
 * The document id is not hashed (CouchDB does not either). Canonical JSON text:
 * <ul>
 *   <li>no whitespace; object members sorted by key, comparing Unicode code points;
 *   <li>strings: {@code "} and {@code \} escaped with a backslash, U+0000–U+001F and unpaired
 *       surrogates as {@code \}{@code uXXXX} (lowercase hex), everything else literal;
 *   <li>numbers by value: {@code <unscaled>e<exponent>} with trailing zeros stripped from the
 *       unscaled integer, so {@code 1}, {@code 1.0}, {@code 10e-1} all become {@code 1e0},
 *       {@code 0} and {@code -0.0} become {@code 0e0}, {@code 1.5} becomes {@code 15e-1};
 *       non-finite numbers are refused;
 *   <li>{@code true}, {@code false}, {@code null} as is; binary nodes as base64 strings.
 * </ul>
 */
public final class RevHasher {

    /** An attachment as it enters the hash; {@code digest} is e.g. {@code "md5-…"}. */
    public record AttachmentDigest(String name, String contentType, String digest) {}

    /**
     * Code point order. UTF-16 order differs from it only where a surrogate meets a unit in
     * U+E000–U+FFFF, so units compare directly with those two ranges swapped.
     */
    private static final Comparator<String> CODE_POINT_ORDER = (a, b) -> {
        int n = Math.min(a.length(), b.length());
        for (int i = 0; i < n; i++) {
            char ca = a.charAt(i);
            char cb = b.charAt(i);
            if (ca != cb) return Integer.compare(codePointRank(ca), codePointRank(cb));
        }
        return Integer.compare(a.length(), b.length());
    };

    private static int codePointRank(char c) {
        if (c < 0xd800) return c;
        if (c < 0xe000) return c + 0x2000; // surrogates: above every BMP unit
        return c - 0x800;
    }

    private RevHasher() {}

    public static RevId newRevId(RevId parent, boolean deleted, JsonNode body, List<AttachmentDigest> attachments) {
        long pos = parent == null ? 1 : parent.pos() + 1;
        return new RevId(pos, hash(parent, deleted, body, attachments));
    }

    /** The new revision's hash (32 lowercase hex chars). */
    public static String hash(RevId parent, boolean deleted, JsonNode body, List<AttachmentDigest> attachments) {
        StringBuilder sb = new StringBuilder();
        sb.append('[').append(deleted).append(',');
        if (parent == null) sb.append("null");
        else writeString(sb, parent.toString());
        sb.append(',');
        writeObject(sb, body, true);
        sb.append(",[");
        List<AttachmentDigest> atts = new ArrayList<>(attachments == null ? List.of() : attachments);
        atts.sort(Comparator.comparing(AttachmentDigest::name, CODE_POINT_ORDER));
        for (int i = 0; i < atts.size(); i++) {
            AttachmentDigest a = atts.get(i);
            if (i > 0) sb.append(',');
            sb.append('[');
            writeNullableString(sb, a.name());
            sb.append(',');
            writeNullableString(sb, a.contentType());
            sb.append(',');
            writeNullableString(sb, a.digest());
            sb.append(']');
        }
        sb.append("]]");
        return hex(md5(sb.toString().getBytes(StandardCharsets.UTF_8)));
    }

    /** The canonical JSON text of {@code node} as defined above (null means JSON null). */
    public static String canonicalJson(JsonNode node) {
        StringBuilder sb = new StringBuilder();
        writeCanonical(sb, node);
        return sb.toString();
    }

    private static void writeCanonical(StringBuilder sb, JsonNode node) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            sb.append("null");
        } else if (node.isObject()) {
            writeObject(sb, node, false);
        } else if (node.isArray()) {
            sb.append('[');
            for (int i = 0; i < node.size(); i++) {
                if (i > 0) sb.append(',');
                writeCanonical(sb, node.get(i));
            }
            sb.append(']');
        } else if (node.isNumber()) {
            writeNumber(sb, node);
        } else if (node.isBoolean()) {
            sb.append(node.booleanValue());
        } else if (node.isTextual()) {
            writeString(sb, node.textValue());
        } else if (node.isBinary()) {
            writeString(sb, node.asText());
        } else {
            throw new IllegalArgumentException("not a JSON value: " + node.getNodeType());
        }
    }

    private static void writeObject(StringBuilder sb, JsonNode node, boolean dropSpecial) {
        if (dropSpecial && (node == null || node.isNull() || node.isMissingNode())) {
            sb.append("{}"); // a body-less deletion hashes as an empty body
            return;
        }
        if (!node.isObject()) {
            if (dropSpecial) throw new IllegalArgumentException("document body must be a JSON object");
            writeCanonical(sb, node);
            return;
        }
        List<Map.Entry<String, JsonNode>> fields = new ArrayList<>(node.size());
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!(dropSpecial && e.getKey().startsWith("_"))) fields.add(e);
        }
        fields.sort(Map.Entry.comparingByKey(CODE_POINT_ORDER));
        sb.append('{');
        for (int i = 0; i < fields.size(); i++) {
            if (i > 0) sb.append(',');
            writeString(sb, fields.get(i).getKey());
            sb.append(':');
            writeCanonical(sb, fields.get(i).getValue());
        }
        sb.append('}');
    }

    private static void writeNumber(StringBuilder sb, JsonNode node) {
        if (node.canConvertToLong() && node.isIntegralNumber()) { // the common case, without BigDecimal
            long v = node.longValue();
            if (v == 0) {
                sb.append("0e0");
                return;
            }
            int zeros = 0;
            while (v % 10 == 0) {
                v /= 10;
                zeros++;
            }
            sb.append(v).append('e').append(zeros);
            return;
        }
        BigDecimal d;
        if (node.isIntegralNumber()) {
            d = new BigDecimal(node.bigIntegerValue());
        } else if (node.isBigDecimal()) {
            d = node.decimalValue();
        } else {
            double v = node.doubleValue();
            if (!Double.isFinite(v)) throw new IllegalArgumentException("non-finite number in document");
            d = BigDecimal.valueOf(v); // shortest decimal that reads back as the same double
        }
        if (d.signum() == 0) {
            sb.append("0e0");
            return;
        }
        d = d.stripTrailingZeros();
        sb.append(d.unscaledValue()).append('e').append(-(long) d.scale());
    }

    private static void writeNullableString(StringBuilder sb, String s) {
        if (s == null) sb.append("null");
        else writeString(sb, s);
    }

    private static void writeString(StringBuilder sb, String s) {
        sb.append('"');
        int plain = 0;
        while (plain < s.length()) { // most strings need no escape: copy them whole
            char c = s.charAt(plain);
            if (c == '"' || c == '\\' || c < 0x20 || Character.isSurrogate(c)) break;
            plain++;
        }
        sb.append(s, 0, plain);
        for (int i = plain; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20) {
                appendEscape(sb, c);
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                sb.append(c).append(s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                appendEscape(sb, c); // UTF-8 cannot carry it; escaping keeps distinct strings distinct
            } else {
                sb.append(c);
            }
        }
        sb.append('"');
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** Lowercase hex; HexFormat's general path was a visible cost per document. */
    private static String hex(byte[] b) {
        char[] out = new char[b.length * 2];
        for (int i = 0; i < b.length; i++) {
            out[2 * i] = HEX[(b[i] >> 4) & 0xf];
            out[2 * i + 1] = HEX[b[i] & 0xf];
        }
        return new String(out);
    }

    private static void appendEscape(StringBuilder sb, char c) {
        sb.append("\\u").append(HexFormat.of().toHexDigits(c));
    }

    /** One digest per thread: getInstance looks up the provider each time, a visible cost per document. */
    private static final ThreadLocal<MessageDigest> MD5 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("MD5");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("MD5 is a required JDK algorithm", e);
        }
    });

    private static byte[] md5(byte[] data) {
        return MD5.get().digest(data); // digest() resets it
    }
}

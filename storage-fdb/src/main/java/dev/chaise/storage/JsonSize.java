package dev.chaise.storage;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * A body's compact JSON size (exactly the bytes {@link Json#MAPPER} writes) and its leaf count,
 * in one walk of the tree. Measuring by serializing cost a tenth of a bulk load's CPU, and the
 * leaf count (the number of RFC A KVs) needed a second walk. Node types whose text is not
 * simple to predict (big decimals, floats, binary) are measured by Jackson itself.
 */
public record JsonSize(long bytes, long leaves) {

    public static JsonSize of(JsonNode node) {
        Walk w = new Walk();
        w.value(node);
        return new JsonSize(w.bytes, w.leaves);
    }

    /** Quoted and escaped as Jackson writes it: UTF-8, short escapes, six characters for other controls and for each surrogate. */
    static long string(String s) {
        long b = 2;
        for (int i = 0, len = s.length(); i < len; i++) {
            char c = s.charAt(i);
            if (c < 0x80) {
                if (c >= 0x20) b += c == '"' || c == '\\' ? 2 : 1;
                else b += c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r' ? 2 : 6;
            } else if (c < 0x800) {
                b += 2;
            } else if (Character.isSurrogate(c)) {
                b += 6; // Jackson's UTF-8 writer escapes each half (COMBINE_UNICODE_SURROGATES_IN_UTF8 is off)
            } else {
                b += 3;
            }
        }
        return b;
    }

    private static final class Walk {
        long bytes;
        long leaves;

        void value(JsonNode n) {
            switch (n.getNodeType()) {
                case OBJECT -> {
                    if (n.isEmpty()) leaves++;
                    bytes += n.size() == 0 ? 2 : 1 + n.size(); // braces and commas
                    for (Map.Entry<String, JsonNode> e : n.properties()) {
                        bytes += MemberNames.of(e.getKey()).jsonSize() + 1; // the colon
                        value(e.getValue());
                    }
                }
                case ARRAY -> {
                    if (n.isEmpty()) leaves++;
                    bytes += n.size() == 0 ? 2 : 1 + n.size();
                    for (JsonNode c : n) value(c);
                }
                case STRING -> {
                    leaves++;
                    bytes += string(n.textValue());
                }
                case NUMBER -> {
                    leaves++;
                    bytes += switch (n.numberType()) {
                        case INT, LONG -> digits(n.longValue());
                        case DOUBLE -> Double.toString(n.doubleValue()).length();
                        default -> byJackson(n);
                    };
                }
                case BOOLEAN -> {
                    leaves++;
                    bytes += n.booleanValue() ? 4 : 5;
                }
                case NULL -> {
                    leaves++;
                    bytes += 4;
                }
                default -> {
                    leaves++;
                    bytes += byJackson(n);
                }
            }
        }

        static long digits(long v) {
            if (v == Long.MIN_VALUE) return 20;
            long n = v < 0 ? 2 : 1;
            long a = Math.abs(v);
            while (a >= 10) {
                a /= 10;
                n++;
            }
            return n;
        }

        static long byJackson(JsonNode n) {
            try {
                return Json.MAPPER.writeValueAsBytes(n).length;
            } catch (JsonProcessingException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}

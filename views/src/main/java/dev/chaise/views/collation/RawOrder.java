package dev.chaise.views.collation;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Map;

/**
 * Erlang's term order over decoded JSON, which Mango uses for {@code _id} ({@code mango_json:cmp_raw})
 * where every other field compares by view collation: numbers, then the atoms {@code false <
 * null < true} (alphabetical), then objects (one-element tuples), then arrays (lists), then
 * strings (binaries, byte by byte in UTF-8). So {@code {"_id": {"$gt": {}}}} matches every
 * document and {@code {"_id": {"$lt": {}}}} none, as PouchDB's test.issue66 shows CouchDB answers.
 * It is also the order of document ids in the special {@code _all_docs} index, and of the keys of a
 * view with {@code options.collation: "raw"} ({@link RawKeyCodec}).
 */
public final class RawOrder {
    private RawOrder() {}

    /** Rank of a JSON type in Erlang's order. */
    public static int rank(JsonNode n) {
        return switch (n.getNodeType()) {
            case NUMBER -> 0;
            case BOOLEAN -> n.booleanValue() ? 3 : 1;
            case NULL -> 2;
            case OBJECT -> 4;
            case ARRAY -> 5;
            case STRING -> 6;
            default -> throw new IllegalArgumentException("not a JSON value: " + n.getNodeType());
        };
    }

    public static int compare(JsonNode a, JsonNode b) {
        int ra = rank(a), rb = rank(b);
        if (ra != rb) return Integer.compare(ra, rb);
        return switch (ra) {
            case 0 -> ViewCollation.compare(a, b); // numbers by exact value, as Erlang compares them
            case 4 -> compareObjects(a, b);
            case 5 -> compareArrays(a, b);
            case 6 -> compareStrings(a.textValue(), b.textValue());
            default -> 0;
        };
    }

    /** UTF-8 bytes, unsigned: how Erlang compares binaries and how the by-id subspace orders ids. */
    public static int compareStrings(String a, String b) {
        return Arrays.compareUnsigned(a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8));
    }

    private static int compareArrays(JsonNode a, JsonNode b) {
        int n = Math.min(a.size(), b.size());
        for (int i = 0; i < n; i++) {
            int c = compare(a.get(i), b.get(i));
            if (c != 0) return c;
        }
        return Integer.compare(a.size(), b.size());
    }

    /** {@code {Props}}: the member lists compared as lists of {@code {Name, Value}} pairs. */
    private static int compareObjects(JsonNode a, JsonNode b) {
        Iterator<Map.Entry<String, JsonNode>> ia = a.properties().iterator(), ib = b.properties().iterator();
        while (ia.hasNext() && ib.hasNext()) {
            Map.Entry<String, JsonNode> ea = ia.next(), eb = ib.next();
            int c = compareStrings(ea.getKey(), eb.getKey());
            if (c != 0) return c;
            c = compare(ea.getValue(), eb.getValue());
            if (c != 0) return c;
        }
        return Boolean.compare(ia.hasNext(), ib.hasNext());
    }
}

package dev.chaise.views.index;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.util.List;

/**
 * What {@link ReduceTree} needs from a reduce function: partial reductions it can compute from
 * rows, merge, sometimes subtract, and store. Implementations are the built-ins and JavaScript
 * reduce (views' query package); a map-only view has none and its tree keeps counts only.
 *
 * <p>Rows and partials always arrive in index order (the order of the map rows), whatever order a
 * query reads them in, so a partial never depends on how the rows were cut into nodes except
 * through {@link #rereduce}'s grouping, which for the built-ins is exact.
 *
 * @param <P> a partial reduction
 */
public interface TreeReducer<P> {

    /** Reduces rows (in index order; possibly none). */
    P reduce(List<Row> rows);

    /** Merges partials (in index order, at least one). */
    P rereduce(List<P> parts);

    /** Whether {@link #subtract} can ever answer: otherwise a removal recomputes from the children. */
    default boolean subtracts() {
        return false;
    }

    /** {@code total} without the rows {@code removed} covers, or null when that cannot be known from the two alone. */
    default P subtract(P total, P removed) {
        return null;
    }

    /**
     * Whether a partial holds a failure whose wording may depend on how rows were cut into nodes
     * (a {@code _sum} error object names the value that broke it; so does a JavaScript failure):
     * {@link ReduceTree#check} then accepts any failure where one is due, as CouchDB's b-tree would
     * give one or another.
     */
    default boolean failed(P partial) {
        return false;
    }

    /** The partial as stored in a tree entry. */
    byte[] encode(P partial);

    P decode(byte[] bytes);

    /**
     * A map row as reducers see it: where it sits in the view (its key after the view's map-range
     * prefix: sort key, doc id, dupe id), and its key and value as stored JSON, parsed on demand.
     */
    final class Row {
        private final byte[] suffix;
        private byte[] stored;
        private String keyJson;
        private String docId;
        private String valueJson;
        private JsonNode key;
        private JsonNode value;

        /** @param docId null to read it from {@code suffix} when asked */
        public Row(byte[] suffix, String keyJson, String docId, String valueJson) {
            this.suffix = suffix;
            this.keyJson = keyJson;
            this.docId = docId;
            this.valueJson = valueJson;
        }

        /** A row as stored: its JSON is decoded only if a reducer asks (a count never does). */
        public static Row stored(byte[] suffix, byte[] value) {
            Row r = new Row(suffix, null, null, null);
            r.stored = value;
            return r;
        }

        public byte[] suffix() {
            return suffix;
        }

        public String keyJson() {
            if (keyJson == null) decodeStored();
            return keyJson;
        }

        public String docId() {
            if (docId == null) docId = com.apple.foundationdb.tuple.Tuple.fromBytes(suffix).getString(1);
            return docId;
        }

        public String valueJson() {
            if (valueJson == null) decodeStored();
            return valueJson;
        }

        private void decodeStored() {
            com.apple.foundationdb.tuple.Tuple t = com.apple.foundationdb.tuple.Tuple.fromBytes(stored);
            keyJson = t.getString(0);
            valueJson = t.getString(1);
            stored = null;
        }

        public JsonNode key() {
            if (key == null) key = parse(keyJson());
            return key;
        }

        public JsonNode value() {
            if (value == null) value = parse(valueJson());
            return value;
        }

        private static JsonNode parse(String json) {
            try {
                return Json.MAPPER.readTree(json);
            } catch (IOException e) {
                throw new IllegalStateException("a stored view row is not JSON", e);
            }
        }
    }
}

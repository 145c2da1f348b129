package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A row of a view result: a map row ({@code id} set), a reduced group ({@code id} null), or a
 * group whose reduce overflowed ({@link #overflow}).
 *
 * @param doc with {@code include_docs}: the document, or a JSON null when it is missing or deleted
 * @param overflow for a group whose JavaScript reduce grew too fast, CouchDB's reason; else null
 */
public record ViewRow(JsonNode key, String id, JsonNode value, JsonNode doc, String overflow) {
    public ViewRow(JsonNode key, String id, JsonNode value, JsonNode doc) {
        this(key, id, value, doc, null);
    }

    /**
     * fabric_view_row's row for a reduce_overflow_error, which couch_mrview_http writes as
     * {@code {"key":null,"error":"reduce_overflow_error","reason":...}}.
     */
    static ViewRow overflowed(String reason) {
        return new ViewRow(com.fasterxml.jackson.databind.node.NullNode.getInstance(), null, null, null, reason);
    }
}

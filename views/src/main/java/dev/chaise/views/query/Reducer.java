package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A reduce function as the query path uses it: an accumulator per group, fed the group's rows in
 * order. Today every group is reduced from its rows as the key range streams by; persisted partial
 * reductions (a B+tree's inner nodes) would arrive through {@link Accumulator#addReduced}, so the
 * query path need not change when they come.
 */
public interface Reducer {

    Accumulator start();

    interface Accumulator {
        /** One map row. */
        void add(JsonNode key, String docId, JsonNode value);

        /** A value this reducer produced earlier over other rows (rereduce). */
        void addReduced(JsonNode reduced);

        /** The group's value. */
        JsonNode result();
    }
}

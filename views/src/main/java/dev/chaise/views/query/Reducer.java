package dev.chaise.views.query;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.views.index.TreeReducer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A reduce function as queries use it: the partial reductions a reduce tree stores
 * ({@link TreeReducer}), and the value CouchDB returns for a group. One implementation per
 * function serves the tree's writers, its readers and the fallback that reduces rows as they
 * stream by while a tree is being built.
 *
 * @param <P> a partial reduction
 */
public interface Reducer<P> extends TreeReducer<P> {

    /** The group's value as CouchDB returns it; a failure kept in the partial is thrown here. */
    JsonNode finish(P partial);

    /** CouchDB's reason when the partial is a reduce_overflow_error, which is a row rather than a failed query; else null. */
    default String overflow(P partial) {
        return null;
    }

    /** The group's row. */
    default ViewRow row(JsonNode key, P partial) {
        String overflow = overflow(partial);
        return overflow != null ? ViewRow.overflowed(overflow) : new ViewRow(key, null, finish(partial), null);
    }

    /** Rows per {@link #reduce} call when a group is reduced from its rows: then one {@link #rereduce}, as a tree does. */
    int CHUNK = 200;

    /**
     * Reduces one group's rows as they stream by. For a descending read the chunks and their
     * partials are put back in index order, so a group's value does not depend on the direction.
     */
    default Accumulator<P> accumulator(boolean descending) {
        return new Accumulator<>(this, descending);
    }

    final class Accumulator<P> {
        private final Reducer<P> reducer;
        private final boolean descending;
        private final List<Row> chunk = new ArrayList<>();
        private final List<P> parts = new ArrayList<>();

        Accumulator(Reducer<P> reducer, boolean descending) {
            this.reducer = reducer;
            this.descending = descending;
        }

        public void add(Row row) {
            chunk.add(row);
            if (chunk.size() >= CHUNK) flush();
        }

        private void flush() {
            if (chunk.isEmpty()) return;
            if (descending) Collections.reverse(chunk);
            parts.add(reducer.reduce(List.copyOf(chunk)));
            chunk.clear();
        }

        /** The group's value (once: it ends the accumulator). */
        public JsonNode result() {
            return reducer.finish(partial());
        }

        /** The group's row under {@code key} (once: it ends the accumulator). */
        public ViewRow row(JsonNode key) {
            return reducer.row(key, partial());
        }

        private P partial() {
            flush();
            if (descending) Collections.reverse(parts);
            return parts.size() == 1 ? parts.getFirst() : reducer.rereduce(parts);
        }
    }
}

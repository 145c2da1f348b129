package dev.chaise.views.index;

/**
 * Where the index side gets each view's reduce function for its tree: the built-ins and
 * JavaScript live in views' query package and engine, which the caller wires in. JavaScript
 * programs are confined to the thread that opened them, so a writer opens its reducers, uses
 * them and closes them on one thread.
 */
public interface Reductions {

    /** Opens the reducers of an index's views; JavaScript programs are opened on first use. */
    Opened open(DesignDoc ddoc);

    /** An index's reducers, for one thread. */
    interface Opened extends AutoCloseable {
        /** The view's reducer, or null for a map-only view (its tree counts rows only). */
        TreeReducer<?> of(int viewId);

        @Override
        void close();
    }

    /** Counts only, for every view: what a caller that never reduces needs. */
    Reductions COUNTS = ddoc -> new Opened() {
        @Override
        public TreeReducer<?> of(int viewId) {
            return null;
        }

        @Override
        public void close() {}
    };
}

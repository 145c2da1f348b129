package dev.chaise.views.search;

/** Hears index builds as they run: the views module shows them in {@code _active_tasks} with views' builds. */
public interface BuildListener {
    /** Hears nothing. */
    BuildListener NONE = (db, ddoc, totalChanges) -> new Build() {
        @Override
        public void done(int changes) {
            // nobody listens
        }

        @Override
        public void ended() {
            // nobody listens
        }
    };

    /** A build of a design document's index starts, with about {@code totalChanges} to index. */
    Build started(String db, String ddoc, long totalChanges);

    /** One running build. */
    interface Build {
        /** {@code changes} more indexed. */
        void done(int changes);

        /** It ended, either way. */
        void ended();
    }
}

package dev.chaise.views;

import dev.chaise.storage.Database;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.Storage;
import dev.chaise.views.index.DesignDoc;
import dev.chaise.views.index.InteractiveViews;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.index.ReduceTree;

/**
 * Owns RFC E's interactive views: the write hook that indexes every document in its own
 * transaction, and when an interactive index may answer from its rows (once its background
 * build has reached the creation versionstamp).
 */
public final class InteractiveIndexes {
    private final Storage storage;
    private final IndexPrograms programs;
    private final IndexBuilds builds;
    private final ReduceTree.Order treeOrder;

    InteractiveIndexes(Storage storage, IndexPrograms programs, IndexBuilds builds, ReduceTree.Order treeOrder) {
        this.storage = storage;
        this.programs = programs;
        this.builds = builds;
        this.treeOrder = treeOrder;
    }

    /**
     * Registers the write hook with storage: from now on, documents written to a database index
     * themselves into its interactive indexes, in their own transactions.
     */
    void enable() {
        // Mango's indexes need no JavaScript engine; JavaScript ones without an engine are not maintained.
        storage.addWriteHook(new InteractiveViews(ddoc -> programs.canMap(ddoc) ? programs.mapProgram(ddoc) : null,
                programs::reducers, treeOrder));
    }

    /**
     * An interactive index answers from its rows once its background build has reached the
     * creation versionstamp; a read before that waits for (runs) the build, as RFC E says.
     * False for an index that is not interactive, or was saved before interactive views were on.
     */
    boolean ready(Database db, DesignDoc ddoc) {
        if (!ddoc.interactive()) return false;
        String sig = ddoc.signature();
        record State(String status, Sequence creation) {}
        State st = db.read(r -> new State(MapIndexSubspace.buildStatus(r.tx(), r.handle(), sig), MapIndexSubspace.creationSeq(r.tx(), r.handle(), sig)));
        if (st.status() == null || st.creation() == null) return false;
        if (st.status().equals(MapIndexSubspace.READY)) return true;
        builds.buildInteractive(db, ddoc, st.creation());
        return true;
    }
}

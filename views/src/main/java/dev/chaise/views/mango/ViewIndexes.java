package dev.chaise.views.mango;

import dev.chaise.storage.Database;
import dev.chaise.views.index.DesignDoc;

/**
 * What Mango reads of the view machinery: design documents as index definitions, and their
 * indexes made ready for a read. The views package implements it and hands it in, so Mango never
 * names that package (which builds Mango's map programs): the dependency runs one way.
 */
public interface ViewIndexes {
    /** The design document {@code ddocId}; 404 {@code missing}/{@code deleted} as for any document. */
    DesignDoc designDoc(Database db, String ddocId);

    /** Makes the design document's indexes ready to read; brings them up to date when {@code update}. */
    void prepare(Database db, DesignDoc ddoc, boolean update);
}

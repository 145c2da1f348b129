package dev.chaise.views.index;

import dev.chaise.kv.Transaction;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.PurgeHook;

/**
 * A purge drops the purged document from every index of its database's design documents, in the
 * purge's transaction (its rows, key ranges and map errors, with the counters). A document that
 * keeps leaves has a new changes row, so background builds map its new winner again, and
 * interactive indexes index it through the write hook the purge calls next. Indexes built later
 * never see what was purged: it is gone from the changes feed and the documents. Reduce trees
 * lose the document's rows in the same transaction.
 */
public final class PurgedDocs implements PurgeHook {
    private final Reductions reductions;

    /** @param reductions each view's reduce function, for the trees the purge updates */
    public PurgedDocs(Reductions reductions) {
        this.reductions = reductions;
    }

    @Override
    public void onPurge(Transaction tx, DbHandle db, String docId, DbReader reader) {
        for (DocInfo d : reader.designDocs()) {
            DesignDoc ddoc;
            try {
                ddoc = DesignDoc.parse(d.id(), reader.get(d.id(), d.rev(), false).body());
            } catch (ViewException e) {
                continue; // not an index definition: it has no rows
            }
            if (ddoc.views().isEmpty()) continue;
            try (Reductions.Opened reducers = reductions.open(ddoc)) {
                ViewIndexer.indexDoc(tx, db, ddoc, docId, null, null, reducers);
            }
        }
    }
}

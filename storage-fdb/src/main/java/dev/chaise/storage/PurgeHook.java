package dev.chaise.storage;

import dev.chaise.kv.Transaction;

/**
 * Work that must commit with a purge: an owner of data derived from documents (views' indexes)
 * drops what it holds for a purged document, in the purge's own transaction. A document that
 * keeps leaves is then written through the {@link DocumentWriteHook}s with its new winner, so
 * indexes that follow writes put its rows back. Storage owns this interface and never depends on
 * its implementations.
 */
@FunctionalInterface
public interface PurgeHook {
    /** @param reader reads of the database in the purge's transaction, as it stood before the purge */
    void onPurge(Transaction tx, DbHandle db, String docId, DbReader reader);
}

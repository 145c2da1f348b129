package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.kv.Transaction;

/**
 * Work that must commit with a document write: interactive views, later Mango indexes. Called
 * inside the document's own transaction, after storage has written its keys. Storage owns this
 * interface and never depends on its implementations.
 */
public interface DocumentWriteHook {

    /**
     * One document's winning revision changed.
     *
     * @param oldWinner the winner before, or null for a new document
     * @param newWinner the winner after
     * @param newBody the new winner's body if this write produced it, else null (the winner is an
     *     older revision, e.g. after a losing branch was extended)
     * @param reader reads of the database in the write's own transaction (with conflicts), for what the hook must read
     */
    record Change(DbHandle db, String docId, RevId oldWinner, boolean oldDeleted, RevId newWinner, boolean newDeleted, ObjectNode newBody,
                  DbReader reader) {}

    void onWrite(Transaction tx, Change change);
}

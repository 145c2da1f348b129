package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Supplier;

/**
 * CouchDB's {@code validate_doc_update}: a check of each document a request writes, against the
 * revision it replaces. Called inside the write's own transaction, after the revision read that
 * decides what the write replaces and before any of the document's keys are written, so the
 * check sees exactly what the write will replace. A {@link StorageException} it throws fails that
 * document only. Storage owns this interface and never depends on its implementations (views runs
 * the JavaScript).
 *
 * <p>Not called for design documents (only database admins may write them) nor for
 * {@code _local} documents, as in CouchDB; nor for a replicated revision the database already
 * has, which CouchDB also takes as a success without checking.
 */
public interface DocumentValidator {

    /** Checks nothing: internal writes. */
    DocumentValidator NONE = snapshot -> null;

    /**
     * The checks of one transaction attempt, or null when the database has nothing to check.
     * Closed on the thread that opened it when the attempt's body ends.
     *
     * @param snapshot the write's transaction, read without conflicts: what the checks read (the
     *     database's functions) does not make a write conflict with another
     */
    Checks open(DbReader snapshot);

    /** This validator's checks, then {@code next}'s; a document must pass both. */
    default DocumentValidator andThen(DocumentValidator next) {
        return snapshot -> {
            Checks first = open(snapshot);
            Checks second;
            try {
                second = next.open(snapshot);
            } catch (RuntimeException e) {
                if (first != null) first.close();
                throw e;
            }
            if (first == null) return second;
            if (second == null) return first;
            return new Checks() {
                @Override
                public void check(ObjectNode newDoc, Supplier<ObjectNode> oldDoc) {
                    first.check(newDoc, oldDoc);
                    second.check(newDoc, oldDoc);
                }

                @Override
                public void close() {
                    try {
                        first.close();
                    } finally {
                        second.close();
                    }
                }
            };
        };
    }

    interface Checks extends AutoCloseable {
        /**
         * @param newDoc the document as the function sees it: {@code _id}, {@code _rev} and
         *     {@code _revisions} (the edited revision for an interactive edit, the new one for a
         *     replicated write), the body, {@code _deleted}, attachment stubs
         * @param oldDoc the revision the write replaces, rendered the same way; null inside if
         *     none. Read once, however often it is asked for
         * @throws StorageException {@code forbidden}, {@code unauthorized}, or
         *     {@link StorageException.Kind#VALIDATION_FAILED} (the function failed)
         */
        void check(ObjectNode newDoc, Supplier<ObjectNode> oldDoc);

        @Override
        void close();
    }
}

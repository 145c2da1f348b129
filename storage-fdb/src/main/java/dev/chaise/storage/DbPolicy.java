package dev.chaise.storage;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One of the rules a database opened for someone ({@link SecuredDb}) applies to its documents:
 * CouchDB's {@code before_doc_update}, {@code validate_doc_update} and {@code after_doc_read}
 * callbacks. The layers above storage register theirs when the server is wired
 * ({@link Storage#addPolicy}): views the design-document checks and validate_doc_update, the
 * auth layer {@code _users}' rules, the replicator {@code _replicator}'s. Storage calls them and
 * never depends on their implementations.
 *
 * <p>A rule that refuses throws a {@link StorageException}: for a write, that document alone fails
 * with its error (a {@code _bulk_docs} row); for a read, the document is not shown.
 */
public interface DbPolicy {

    /**
     * A database was just created ({@link Storage#create}), whoever created it: what a policy keeps
     * in every database of its kind (the users database's {@code _design/_auth}) is written here,
     * through {@code asServer}, the new database opened for the server itself.
     */
    default void created(SecuredDb asServer) {}

    /**
     * Whether {@code db}'s user may write document {@code docId} at all, decided from the id alone,
     * so that a request can be refused before its body is read (an attachment upload). Every write
     * asks it again before {@link #beforeUpdate}.
     */
    default void checkWriter(SecuredDb db, String docId) {}

    /**
     * A document a client (or a replication) is about to write, before any transaction: the
     * document to write instead (a password hashed, an owner set), or the same one.
     *
     * @param newEdits false for a replicated revision ({@code new_edits=false})
     */
    default DocUpdate beforeUpdate(SecuredDb db, DocUpdate doc, boolean newEdits) {
        return doc;
    }

    /**
     * Whether {@code db}'s user may read document {@code docId} at all, decided from the id alone
     * and before the read, so that a refusal does not depend on whether the document exists.
     */
    default void checkReader(SecuredDb db, String docId) {}

    /** The checks every document of one write request by {@code db}'s user meets inside its transaction, or null for none. */
    default DocumentValidator validator(SecuredDb db) {
        return null;
    }

    /** A document (rendered as the client would get it) as {@code db}'s user may see it: the same, a reduced copy, or a refusal. */
    default ObjectNode afterRead(SecuredDb db, ObjectNode doc) {
        return doc;
    }
}

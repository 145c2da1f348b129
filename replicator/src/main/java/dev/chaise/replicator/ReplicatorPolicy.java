package dev.chaise.replicator;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DbPolicy;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;

/**
 * {@code _replicator}'s rules as a {@link DbPolicy}: a client's document gets its owner and must
 * parse as a replication ({@link ReplicatorDocs#beforeUpdate}). Replicated writes
 * ({@code new_edits=false}) pass as they come, as in CouchDB, and so do the replicator's own
 * writes of a job's state, made as the server.
 */
public final class ReplicatorPolicy implements DbPolicy {

    @Override
    public DocUpdate beforeUpdate(SecuredDb db, DocUpdate doc, boolean newEdits) {
        if (!newEdits || !db.name().equals(ReplicatorDocs.DB) || db.user().isServer()) return doc;
        ObjectNode body;
        try {
            body = ReplicatorDocs.beforeUpdate(doc.id(), doc.body(), doc.deleted(), db.user().name(), db.user().roles(), db.isAdmin());
        } catch (ReplicationException e) {
            throw new StorageException(StorageException.Kind.FORBIDDEN, e.reason());
        }
        return body == doc.body() ? doc : doc.withBody(body);
    }
}

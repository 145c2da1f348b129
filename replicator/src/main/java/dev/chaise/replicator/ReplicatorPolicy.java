package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.DbPolicy;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;

/**
 * {@code _replicator}'s rules as a {@link DbPolicy}: a client's document gets its owner and must
 * parse as a replication ({@link ReplicatorDocs#beforeUpdate}). Replicated writes
 * ({@code new_edits=false}) pass as they come, as in CouchDB, and so do the replicator's own
 * writes of a job's state, made as the server. A user who is not a database admin reads another
 * user's replication without its credentials (CouchDB's {@code after_doc_read}).
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

    @Override
    public ObjectNode afterRead(SecuredDb db, ObjectNode doc) {
        if (!db.name().equals(ReplicatorDocs.DB) || db.isAdmin() || doc.path("_id").asText("").startsWith(DocumentJson.DESIGN_PREFIX)) return doc;
        JsonNode owner = doc.get(ReplicatorDocs.OWNER);
        if (owner != null && owner.isTextual() && owner.textValue().equals(db.user().name())) return doc;
        ObjectNode out = doc.deepCopy();
        for (String side : new String[] {"source", "target"}) {
            JsonNode e = out.get(side);
            if (e == null) continue;
            if (e.isTextual()) out.put(side, withoutPassword(e.textValue()));
            else if (e.isObject()) ((ObjectNode) e).remove(java.util.List.of("headers", "auth"));
        }
        return out;
    }

    /** {@code http://user:pass@host/db} as {@code http://host/db}; anything else as it is. */
    static String withoutPassword(String url) {
        return URL_CREDENTIALS.matcher(url).replaceFirst("http$1://$2");
    }

    private static final java.util.regex.Pattern URL_CREDENTIALS = java.util.regex.Pattern.compile("^http(s)?://[^:/@]+:[^@]+@(.*)$");
}

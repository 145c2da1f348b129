package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.RevId;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A client's document JSON to a {@link DocumentStore.DocUpdate} and back, with CouchDB's rules for
 * ids and for the special {@code _} members.
 */
public final class DocumentJson {
    public static final String DESIGN_PREFIX = "_design/";
    /** The first id after every {@code _design/} id ('0' follows '/'); no valid document has it. */
    public static final String DESIGN_END = "_design0";
    public static final String LOCAL_PREFIX = "_local/";

    private DocumentJson() {}

    /** CouchDB's document id rules; throws {@code illegal_docid}. */
    public static void validateId(String id) {
        if (id == null || id.isEmpty()) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must not be empty");
        if (id.startsWith("_") && !(id.startsWith(DESIGN_PREFIX) || id.startsWith(LOCAL_PREFIX))) {
            throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Only reserved document ids may start with underscore.");
        }
    }

    public static boolean isLocal(String id) {
        return id.startsWith(LOCAL_PREFIX);
    }

    /** What a client's document says, before it is turned into an update. */
    public record Parsed(String id, RevId rev, boolean deleted, ObjectNode body, EditBranch revisions) {}

    /**
     * Splits a document into its special members and the user's body.
     *
     * @param urlId the id from the URL, which wins over {@code _id} as in CouchDB; null for _bulk_docs
     */
    public static Parsed parse(JsonNode json, String urlId) {
        if (json == null || !json.isObject()) throw StorageException.badRequest("Document must be a JSON object");
        String id = urlId;
        RevId rev = null;
        boolean deleted = false;
        JsonNode revisions = null;
        ObjectNode body = Json.NODES.objectNode();
        for (Map.Entry<String, JsonNode> f : json.properties()) {
            String name = f.getKey();
            JsonNode v = f.getValue();
            if (!name.startsWith("_")) {
                body.set(name, v);
                continue;
            }
            switch (name) {
                case "_id" -> {
                    if (!v.isTextual()) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must be a string");
                    if (urlId == null) id = v.textValue();
                }
                case "_rev" -> {
                    if (!v.isTextual()) throw StorageException.badRequest(RevId.INVALID);
                    rev = RevId.parse(v.textValue());
                }
                case "_deleted" -> deleted = v.isBoolean() && v.booleanValue();
                case "_revisions" -> revisions = v;
                case "_attachments" -> {
                    if (!v.isObject()) throw StorageException.badRequest("_attachments must be an object");
                    if (!v.isEmpty()) body.set(name, v); // resolved to stored metadata by the write (AttachmentsSubspace)
                }
                case "_conflicts", "_deleted_conflicts", "_revs_info", "_local_seq" -> { } // ignored, as CouchDB does
                // kept in the body, as CouchDB keeps them for replication documents and per-document access
                case "_replication_state", "_replication_state_time", "_replication_state_reason", "_replication_id",
                     "_replication_stats", "_access" -> body.set(name, v);
                default -> throw new StorageException(StorageException.Kind.DOC_VALIDATION, "Bad special document member: " + name);
            }
        }
        if (id != null) validateId(id);
        EditBranch path = revisions == null ? null : revisionsPath(revisions, deleted);
        // Where _rev and _revisions disagree, _revisions wins, as in CouchDB (PouchDB can send both that way).
        return new Parsed(id, path != null ? path.leaf() : rev, deleted, body, path);
    }

    private static EditBranch revisionsPath(JsonNode r, boolean deleted) {
        JsonNode start = r.get("start");
        JsonNode ids = r.get("ids");
        if (start == null || !start.canConvertToLong() || ids == null || !ids.isArray() || ids.isEmpty() || start.asLong() < ids.size()) {
            throw StorageException.badRequest("_revisions must be {\"start\": N, \"ids\": [...]} with N at least the number of ids");
        }
        List<String> hashes = new ArrayList<>(ids.size());
        for (JsonNode h : ids) {
            if (!h.isTextual()) throw StorageException.badRequest(RevId.INVALID);
            hashes.add(RevId.parseHash(h.textValue()));
        }
        return EditBranch.fromRevisions(start.asLong(), hashes, deleted);
    }

    /**
     * The update for a parsed document. With {@code newEdits} false the incoming path is
     * {@code _revisions}, or the single {@code _rev}.
     */
    public static DocumentStore.DocUpdate toUpdate(Parsed p, boolean newEdits) {
        if (p.id() == null) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must not be empty");
        if (newEdits) {
            RevId base = p.revisions() != null ? p.revisions().leaf() : p.rev();
            return DocumentStore.DocUpdate.edit(p.id(), base, p.deleted(), p.body());
        }
        EditBranch path = p.revisions() != null ? p.revisions() : p.rev() == null ? null : EditBranch.root(p.rev(), p.deleted());
        if (path == null) throw StorageException.badRequest("When `new_edits: false`, the document needs `_rev` or `_revisions` specified.");
        return DocumentStore.DocUpdate.replicated(p.id(), path, p.body());
    }

    /**
     * {@link #render}, plus {@code _conflicts} (CouchDB's order) when the document was read with
     * its branches and has any: as map functions, {@code include_docs=true&conflicts=true} and
     * {@code _find} with {@code conflicts} see it.
     */
    public static ObjectNode renderWithConflicts(DocumentStore.StoredDoc d) {
        ObjectNode out = render(d);
        if (d.branches() == null) return out;
        java.util.List<dev.chaise.storage.rev.RevId> conflicts = dev.chaise.storage.rev.EditBranches.conflicts(d.branches());
        if (!conflicts.isEmpty()) {
            var a = out.putArray("_conflicts");
            conflicts.forEach(r -> a.add(r.toString()));
        }
        return out;
    }

    /** {@code {"_id", "_rev", ...body, "_deleted": true}}: the document as CouchDB returns it. */
    public static ObjectNode render(DocumentStore.StoredDoc d) {
        ObjectNode out = Json.NODES.objectNode();
        out.put("_id", d.id());
        out.put("_rev", d.rev().toString());
        out.setAll(d.body());
        if (d.deleted()) out.put("_deleted", true);
        return out;
    }
}

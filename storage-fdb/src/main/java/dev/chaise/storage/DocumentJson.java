package dev.chaise.storage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A client's document JSON to a {@link DocUpdate} and back, with CouchDB's rules for ids and for
 * the special {@code _} members: one parser for every kind of document, {@code _local} ones included.
 */
public final class DocumentJson {
    public static final String DESIGN_PREFIX = "_design/";
    /** The first id after every {@code _design/} id ('0' follows '/'); no valid document has it. */
    public static final String DESIGN_END = "_design0";
    public static final String LOCAL_PREFIX = "_local/";

    private DocumentJson() {}

    /** CouchDB's document id rules ({@code couch_doc:validate_docid}); throws {@code illegal_docid}. */
    public static void validateId(String id) {
        if (id == null || id.isEmpty()) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must not be empty");
        if (id.equals(DESIGN_PREFIX) || id.equals(LOCAL_PREFIX)) {
            throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Illegal document id `" + id + "`");
        }
        if (!isUtf8(id)) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must be valid UTF-8");
        if (id.startsWith("_") && !(id.startsWith(DESIGN_PREFIX) || id.startsWith(LOCAL_PREFIX))) {
            throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Only reserved document ids may start with underscore.");
        }
    }

    public static boolean isLocal(String id) {
        return id.startsWith(LOCAL_PREFIX);
    }

    /**
     * What a client's document says, before it is turned into an update.
     *
     * @param revisions {@code _revisions}, or null; where it and {@code _rev} disagree it wins, as in CouchDB
     */
    public record Parsed(String id, RevId rev, boolean deleted, ObjectNode body, Revisions revisions) {
        public Parsed withId(String newId) {
            return new Parsed(newId, rev, deleted, body, revisions);
        }

        public Parsed withRev(RevId newRev) {
            return new Parsed(id, newRev, deleted, body, revisions);
        }

        public Parsed withBody(ObjectNode newBody) {
            return new Parsed(id, rev, deleted, newBody, revisions);
        }
    }

    /** A {@code _local} document as a client sends it: its revision is CouchDB's {@code 0-N}, kept as text. */
    public record LocalUpdate(String id, String rev, boolean deleted, ObjectNode body) {}

    /** A document's special members and the user's body, as the one parser below splits them. */
    private record Fields(String id, String rev, boolean deleted, JsonNode revisions, ObjectNode body) {}

    /**
     * Splits a document into its special members and the user's body.
     *
     * @param urlId the id from the URL, which wins over {@code _id} as in CouchDB; null for _bulk_docs
     */
    public static Parsed parse(JsonNode json, String urlId) {
        Fields f = fields(json, urlId);
        RevId rev = f.rev() == null ? null : RevId.parse(f.rev());
        Revisions revs = f.revisions() == null ? null : revisions(f.revisions());
        // Where _rev and _revisions disagree, _revisions wins, as in CouchDB (PouchDB can send both that way).
        return new Parsed(f.id(), revs != null ? new RevId(revs.start(), revs.ids().getFirst()) : rev, f.deleted(), f.body(), revs);
    }

    /**
     * A {@code _local} document, by the same rules as any other: its {@code _rev} stays text
     * ({@code 0-N}), and its attachments are dropped, as CouchDB keeps none for local documents.
     */
    public static LocalUpdate parseLocal(JsonNode json, String urlId) {
        Fields f = fields(json, urlId);
        if (f.revisions() != null) checkRevisionsShape(f.revisions()); // a local document keeps no history, only its number
        ObjectNode body = f.body();
        body.remove("_attachments");
        return new LocalUpdate(f.id(), f.revisions() == null ? f.rev() : localRev(f.revisions()), f.deleted(), body);
    }

    private static Fields fields(JsonNode json, String urlId) {
        if (json == null || !json.isObject()) throw StorageException.badRequest("Document must be a JSON object");
        String id = urlId;
        String rev = null;
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
                    rev = v.textValue();
                }
                case "_deleted" -> {
                    // CouchDB takes only a boolean; anything else is an unknown special member
                    if (!v.isBoolean()) throw new StorageException(StorageException.Kind.DOC_VALIDATION, "Bad special document member: _deleted");
                    deleted = v.booleanValue();
                }
                case "_revisions" -> revisions = v;
                case "_attachments" -> {
                    // couch_doc:transfer_fields takes only an object; anything else is an unknown special member
                    if (!v.isObject()) throw new StorageException(StorageException.Kind.DOC_VALIDATION, "Bad special document member: _attachments");
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
        return new Fields(id, rev, deleted, revisions, body);
    }

    /** CouchDB's own checks of {@code _revisions} (couch_doc's transfer_fields), which is all a {@code _local} document gets. */
    private static void checkRevisionsShape(JsonNode r) {
        if (!r.isObject() || !r.path("start").canConvertToLong() || !r.path("start").isIntegralNumber()) {
            throw new StorageException(StorageException.Kind.DOC_VALIDATION, "_revisions.start isn't an integer.");
        }
        if (!r.path("ids").isArray()) throw new StorageException(StorageException.Kind.DOC_VALIDATION, "_revisions.ids isn't a array.");
        for (JsonNode id : r.get("ids")) {
            if (!id.isTextual()) throw new StorageException(StorageException.Kind.DOC_VALIDATION, "RevId isn't a string");
        }
    }

    /**
     * A {@code _local} document's revision from {@code _revisions}, which CouchDB reads after
     * {@code _rev} (couch_doc:transfer_fields) and numbers from
     * (couch_db_updater:increment_local_doc_revs): {@code {"start": 0, "ids": ["N"]}} is {@code 0-N};
     * another start, or no id, is an invalid rev.
     */
    private static String localRev(JsonNode r) {
        JsonNode ids = r.get("ids");
        if (r.get("start").asLong() != 0 || ids.isEmpty()) throw StorageException.badRequest(RevId.INVALID);
        return "0-" + ids.get(0).textValue();
    }

    private static Revisions revisions(JsonNode r) {
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
        return new Revisions(start.asLong(), hashes);
    }

    /**
     * The update for a parsed document. With {@code newEdits} false the incoming path is
     * {@code _revisions}, or the single {@code _rev}.
     */
    public static DocUpdate toUpdate(Parsed p, boolean newEdits) {
        if (p.id() == null) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must not be empty");
        if (newEdits) return DocUpdate.edit(p.id(), p.rev(), p.deleted(), p.body());
        EditBranch path = p.revisions() != null ? EditBranch.fromRevisions(p.revisions().start(), p.revisions().ids(), p.deleted())
                : p.rev() == null ? null : EditBranch.root(p.rev(), p.deleted());
        if (path == null) throw StorageException.badRequest("When `new_edits: false`, the document needs `_rev` or `_revisions` specified.");
        return DocUpdate.replicated(p.id(), path, p.body());
    }

    /**
     * {@link #render}, plus {@code _conflicts} (CouchDB's order) when the document was read with
     * its branches and has any: as map functions, {@code include_docs=true&conflicts=true} and
     * {@code _find} with {@code conflicts} see it.
     */
    public static ObjectNode renderWithConflicts(StoredDoc d) {
        return render(d, Meta.CONFLICTS, Integer.MAX_VALUE);
    }

    /** What a read may add to a document ({@code GET /{db}/{doc}}'s options), in the order CouchDB writes them. */
    public record Meta(boolean revs, boolean revsInfo, boolean conflicts, boolean deletedConflicts, boolean localSeq) {
        public static final Meta NONE = new Meta(false, false, false, false, false);
        public static final Meta CONFLICTS = new Meta(false, false, true, false, false);

        /** Whether the document must be read with its branches for this. */
        public boolean needsBranches() {
            return revs || revsInfo || conflicts || deletedConflicts;
        }
    }

    /**
     * {@code _id}, {@code _rev}, the body, {@code _deleted}, then what {@code meta} asks for of a
     * document read with its branches. {@code _revisions} shows at most {@code revsLimit}
     * revisions, as couch_db:make_doc cuts the path: a document written before {@code _revs_limit}
     * was lowered keeps its longer history until its next write, but is read as stemmed.
     */
    public static ObjectNode render(StoredDoc d, Meta meta, int revsLimit) {
        ObjectNode out = render(d);
        List<EditBranch> branches = d.branches();
        if (branches != null) {
            if (meta.revs()) {
                Revisions h = EditBranches.history(branches, d.rev());
                if (h != null) {
                    ObjectNode r = out.putObject("_revisions");
                    r.put("start", h.start());
                    ArrayNode ids = r.putArray("ids");
                    h.ids().subList(0, Math.min(h.ids().size(), Math.max(1, revsLimit))).forEach(ids::add);
                }
            }
            if (meta.revsInfo()) {
                EditBranch b = EditBranches.findLeaf(branches, d.rev());
                if (b != null) {
                    ArrayNode a = out.putArray("_revs_info");
                    for (RevInfo i : EditBranches.revsInfo(b)) a.addObject().put("rev", i.rev().toString()).put("status", i.status().json());
                }
            }
            if (meta.conflicts()) addRevs(out, "_conflicts", EditBranches.conflicts(branches));
            if (meta.deletedConflicts()) addRevs(out, "_deleted_conflicts", EditBranches.deletedConflicts(branches));
        }
        if (meta.localSeq() && d.seq() != null) out.put("_local_seq", d.seq().toHex());
        return out;
    }

    /** CouchDB leaves an empty list out. */
    private static void addRevs(ObjectNode out, String name, List<RevId> revs) {
        if (revs.isEmpty()) return;
        ArrayNode a = out.putArray(name);
        revs.forEach(r -> a.add(r.toString()));
    }

    /** A {@code _local} document as CouchDB returns it. */
    public static ObjectNode render(LocalDoc d) {
        ObjectNode out = Json.NODES.objectNode().put("_id", d.id()).put("_rev", d.rev());
        if (d.body() != null) out.setAll(d.body());
        return out;
    }

    /**
     * {@code {"_id", "_rev", ...body, "_deleted": true}}: the document as CouchDB returns it, its
     * attachment stubs without how they are stored ({@code encoding}, {@code encoded_length}: see
     * {@link #showEncoding}).
     */
    public static ObjectNode render(StoredDoc d) {
        ObjectNode out = Json.NODES.objectNode();
        out.put("_id", d.id());
        out.put("_rev", d.rev().toString());
        out.setAll(d.body());
        if (d.deleted()) out.put("_deleted", true);
        if (d.body().get("_attachments") instanceof ObjectNode atts && hasEncoding(atts)) {
            ObjectNode copy = atts.deepCopy();
            for (JsonNode m : copy) {
                if (m instanceof ObjectNode o) o.remove(List.of("encoding", "encoded_length"));
            }
            out.set("_attachments", copy);
        }
        return out;
    }

    private static boolean hasEncoding(ObjectNode atts) {
        for (JsonNode m : atts) if (m.has("encoding")) return true;
        return false;
    }

    /**
     * Adds {@code encoding} and {@code encoded_length} to the stubs of {@code rendered} (what
     * {@link #render} made of {@code d}) whose bodies are stored encoded: {@code att_encoding_info=true},
     * and the multipart answers that send such bodies as stored.
     */
    public static void showEncoding(StoredDoc d, ObjectNode rendered) {
        if (!(d.body().get("_attachments") instanceof ObjectNode stored) || !hasEncoding(stored)) return;
        if (!(rendered.get("_attachments") instanceof ObjectNode atts)) return;
        for (Map.Entry<String, JsonNode> e : atts.properties()) {
            JsonNode s = stored.get(e.getKey());
            if (s == null || !s.has("encoding") || !(e.getValue() instanceof ObjectNode o)) continue;
            o.set("encoding", s.get("encoding"));
            o.set("encoded_length", s.get("encoded_length"));
        }
    }

    /**
     * CouchDB's rule for attachment names: not starting with {@code _}, and valid UTF-8 (here: no
     * unpaired surrogate, which a JSON escape can make and UTF-8 cannot carry). Anything else,
     * control characters included, is a name.
     */
    public static void validateAttachmentName(String name) {
        if (name.startsWith("_")) throw StorageException.badRequest("Attachment name '" + name + "' starts with prohibited character '_'");
        if (!isUtf8(name)) throw StorageException.badRequest("Attachment name is not UTF-8 encoded");
    }

    /**
     * Whether {@code s} can be written as UTF-8: no unpaired surrogate, which a JSON escape can
     * make, and which the HTTP layer puts where a URL's bytes were not UTF-8.
     */
    public static boolean isUtf8(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return false;
            }
        }
        return true;
    }
}

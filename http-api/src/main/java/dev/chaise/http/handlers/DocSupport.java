package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.auth.Access;
import dev.chaise.http.auth.UsersDatabase;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentStore;
import dev.chaise.storage.DocumentStore.StoredDoc;
import dev.chaise.storage.LocalDocuments;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.EditBranches;
import dev.chaise.storage.rev.RevId;
import dev.chaise.storage.rev.RevInfo;
import dev.chaise.storage.rev.Revisions;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/** What the document endpoints share: rendering, revisions from the request, design and local document rules. */
final class DocSupport {
    static final String NOT_DB_ADMIN = "You are not a db or server admin.";
    static final String NEEDS_REV = "When `new_edits: false`, the document needs `_rev` or `_revisions` specified";
    private static final Pattern LOCAL_REV = Pattern.compile("0-[0-9]{1,18}");

    private DocSupport() {}

    /** What {@code GET /{db}/{doc}} may add to a document, in the order CouchDB writes them. */
    record Meta(boolean revs, boolean revsInfo, boolean conflicts, boolean deletedConflicts, boolean localSeq) {
        static final Meta NONE = new Meta(false, false, false, false, false);

        boolean needsBranches() {
            return revs || revsInfo || conflicts || deletedConflicts;
        }
    }

    /** {@code _id}, {@code _rev}, the body, {@code _deleted}, then what {@code meta} asks for. */
    static ObjectNode render(StoredDoc d, Meta meta) {
        ObjectNode out = DocumentJson.render(d);
        List<EditBranch> branches = d.branches();
        if (branches != null) {
            if (meta.revs()) {
                Revisions h = EditBranches.history(branches, d.rev());
                if (h != null) {
                    ObjectNode r = out.putObject("_revisions");
                    r.put("start", h.start());
                    ArrayNode ids = r.putArray("ids");
                    h.ids().forEach(ids::add);
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

    /** The local document as CouchDB returns it. */
    static ObjectNode render(LocalDocuments.LocalDoc d) {
        ObjectNode out = Json.NODES.objectNode().put("_id", d.id()).put("_rev", d.rev());
        if (d.body() != null) out.setAll(d.body());
        return out;
    }

    /**
     * The revision a write names: {@code ?rev=} and the {@code If-Match} header, which must agree
     * with each other and with {@code bodyRev} (the document's own {@code _rev}) when both are
     * given. Null if none is given.
     */
    static String requestRev(Request req, String bodyRev) {
        String qs = req.query("rev");
        if (bodyRev != null && qs != null && !bodyRev.equals(qs)) {
            throw HttpError.badRequest("Document rev from request body and query string have different values");
        }
        String explicit = bodyRev != null ? bodyRev : qs;
        String ifMatch = req.header("If-Match");
        if (ifMatch != null) ifMatch = unquote(ifMatch.strip());
        if (explicit != null && ifMatch != null && !explicit.equals(ifMatch)) {
            throw HttpError.badRequest("Document rev and etag have different values");
        }
        return explicit != null ? explicit : ifMatch;
    }

    static String unquote(String s) {
        return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"") ? s.substring(1, s.length() - 1) : s;
    }

    /** CouchDB's {@code check_is_admin} for design documents: 401 even to a signed-in member. */
    static void checkDesignWriter(Access.Db db, String id) {
        if (id.startsWith(DocumentJson.DESIGN_PREFIX) && !db.security().isAdmin(db.user())) throw HttpError.unauthorized(NOT_DB_ADMIN);
    }

    /** The request user's validate_doc_update checks: every write of a document by a client goes through them. */
    static dev.chaise.storage.DocumentValidator validator(dev.chaise.views.ViewService views, Access.Db db) {
        dev.chaise.storage.DocumentValidator functions = views.validator(db.user().name(), db.user().roles());
        return db.name().equals(UsersDatabase.NAME) ? UsersDatabase.rules(db.user(), db.security()).andThen(functions) : functions;
    }

    /** The document as it is stored: in {@code _users}, a plaintext password hashed. */
    static DocumentJson.Parsed beforeUpdate(UsersDatabase users, Access.Db db, DocumentJson.Parsed p) {
        com.fasterxml.jackson.databind.node.ObjectNode body = users.hashPassword(db.name(), p.body());
        return body == p.body() ? p : new DocumentJson.Parsed(p.id(), p.rev(), p.deleted(), body, p.revisions());
    }

    /** A design document's index definitions must parse before it is saved, as CouchDB checks them: 400 invalid_design_doc. */
    static void validateDesign(DocumentJson.Parsed p) {
        if (p.id() != null && p.id().startsWith(DocumentJson.DESIGN_PREFIX) && !p.deleted()) {
            dev.chaise.views.index.DesignDoc.parse(p.id(), p.body());
        }
    }

    /**
     * Inlines attachment bodies as base64 into a rendered document: all of them for
     * {@code sincePos} 0 ({@code attachments=true}), those with a revpos above it for
     * {@code atts_since}; a negative {@code sincePos} leaves stubs.
     */
    static void inlineAttachments(dev.chaise.kv.ReadTransaction tx, dev.chaise.storage.DbHandle h, String id, ObjectNode doc, long sincePos) {
        dev.chaise.storage.AttachmentsSubspace.inline(tx, h, id, doc, sincePos);
    }

    /** The {@code sincePos} of {@link #inlineAttachments} for a request: atts_since's newest position, attachments=true, or stubs. */
    static long attsSince(com.fasterxml.jackson.databind.JsonNode attsSince, boolean attachments) {
        if (attsSince != null && attsSince.isArray()) {
            long since = 0;
            for (var r : attsSince) if (r.isTextual()) since = Math.max(since, dev.chaise.storage.rev.RevId.parse(r.textValue()).pos());
            return since;
        }
        return attachments ? 0 : -1;
    }

    static boolean isDesignWriter(Access.Db db) {
        return db.security().isAdmin(db.user());
    }

    /** A server-generated document id: 32 random hex digits, as a CouchDB uuid looks. */
    static String newId() {
        byte[] b = new byte[16];
        ThreadLocalRandom.current().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    /** The {@code Location} of a document, as CouchDB builds it from the Host header. */
    static String location(Request req, String db, String id) {
        String host = req.header("Host");
        String path = "/" + URLEncoder.encode(db, StandardCharsets.UTF_8).replace("+", "%20") + "/";
        for (String prefix : List.of(DocumentJson.DESIGN_PREFIX, DocumentJson.LOCAL_PREFIX)) {
            if (id.startsWith(prefix)) return (host == null ? "" : "http://" + host) + path + prefix + encode(id.substring(prefix.length()));
        }
        return (host == null ? "" : "http://" + host) + path + encode(id);
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    static ObjectNode okRow(String id, String rev) {
        ObjectNode o = Json.NODES.objectNode().put("ok", true).put("id", id);
        if (rev != null) o.put("rev", rev);
        return o;
    }

    static ObjectNode errorRow(String id, String rev, String error, String reason) {
        ObjectNode o = Json.NODES.objectNode();
        if (id != null) o.put("id", id);
        if (rev != null) o.put("rev", rev);
        return o.put("error", error).put("reason", reason);
    }

    // ---------------------------------------------------------------- _local documents

    /** A local document as a client sends it. */
    record LocalUpdate(String id, String rev, boolean deleted, ObjectNode body) {}

    /**
     * CouchDB's rules for a local document: the URL's id wins, {@code _rev} must look like
     * {@code 0-N}, meta members are ignored and other {@code _} members refused.
     */
    static LocalUpdate parseLocal(JsonNode json, String urlId) {
        if (json == null || !json.isObject()) throw StorageException.badRequest("Document must be a JSON object");
        String id = urlId;
        String rev = null;
        boolean deleted = false;
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
                    if (!v.isBoolean()) throw new StorageException(StorageException.Kind.DOC_VALIDATION, "Bad special document member: _deleted");
                    deleted = v.booleanValue();
                }
                // _local documents keep no attachments: CouchDB drops them, and so do we.
                case "_attachments", "_revisions", "_conflicts", "_deleted_conflicts", "_revs_info", "_local_seq" -> { }
                default -> throw new StorageException(StorageException.Kind.DOC_VALIDATION, "Bad special document member: " + name);
            }
        }
        return new LocalUpdate(id, rev, deleted, body);
    }

    static void checkLocalRev(String rev) {
        if (rev != null && !LOCAL_REV.matcher(rev).matches()) throw StorageException.badRequest(RevId.INVALID);
    }

    /**
     * Writes a local document the way CouchDB 3 does: the last write wins, whatever revision the
     * client names (CouchDB checks none for local documents). The storage layer checks the current
     * revision, so this names the current one, retrying if another writer got in between.
     */
    static LocalDocuments.LocalDoc writeLocal(DocumentStore docs, String db, String id, boolean deleted, ObjectNode body) {
        for (int attempt = 0; ; attempt++) {
            String current;
            try {
                current = docs.getLocal(db, id).rev();
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
                current = null;
            }
            try {
                return docs.putLocal(db, id, current, deleted, body);
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.CONFLICT || attempt >= 8) throw e;
            }
        }
    }
}

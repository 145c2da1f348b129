package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.auth.Access;
import dev.chaise.http.auth.UsersDatabase;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.RevId;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/** What the document endpoints share: rendering, revisions from the request, design and local document rules. */
final class DocSupport {
    static final String NOT_DB_ADMIN = Access.NOT_DB_ADMIN;
    static final String NEEDS_REV = "When `new_edits: false`, the document needs `_rev` or `_revisions` specified";
    private static final Pattern LOCAL_REV = Pattern.compile("0-[0-9]{1,18}");

    private DocSupport() {}

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

    /** CouchDB's {@code check_is_admin} for design documents: 401 to an anonymous caller, 403 to a signed-in one. */
    static void checkDesignWriter(Access.Db db, String id) {
        if (id.startsWith(DocumentJson.DESIGN_PREFIX)) Access.checkIsAdmin(db);
    }

    /** The request user's validate_doc_update checks: every write of a document by a client goes through them. */
    static dev.chaise.storage.DocumentValidator validator(dev.chaise.views.DesignDocChecks checks, Access.Db db) {
        dev.chaise.storage.DocumentValidator functions = checks.validator(db.user().name(), db.user().roles());
        return db.name().equals(UsersDatabase.NAME) ? UsersDatabase.rules(db.user(), db.security()).andThen(functions) : functions;
    }

    /**
     * The document as it is stored: in {@code _users}, only one's own (404 otherwise, as
     * {@code couch_users_db:before_doc_update}), a plaintext password hashed, and the stored hash
     * kept when its owner, who never sees it, updates it without a new password.
     */
    static DocumentJson.Parsed beforeUpdate(UsersDatabase users, Access.Db db, DocumentJson.Parsed p) {
        UsersDatabase.checkWriter(db, p.id());
        ObjectNode body = users.hashPassword(db.name(), users.keepPassword(db, p.id(), p.body()));
        return body == p.body() ? p : p.withBody(body);
    }

    /**
     * {@code _replicator}'s rules for a client's write (CouchDB's before_doc_update): the document
     * gets its owner, and one that does not parse as a replication is refused with 403. Replicated
     * writes ({@code new_edits=false}) pass as they come, as in CouchDB.
     */
    static DocumentJson.Parsed replicatorRules(Access.Db db, DocumentJson.Parsed p, boolean newEdits) {
        if (!newEdits || !db.name().equals(dev.chaise.replicator.ReplicatorDocs.DB)) return p;
        ObjectNode body = dev.chaise.replicator.ReplicatorDocs.beforeUpdate(p.id(), p.body(), p.deleted(), db.user().name(), db.user().roles(),
                db.security().isAdmin(db.user()));
        return body == p.body() ? p : p.withBody(body);
    }

    /** A design document's views must parse and compile before it is saved, as CouchDB checks them ({@link dev.chaise.views.DesignDocChecks#checkDesign}). */
    static void validateDesign(dev.chaise.views.DesignDocChecks checks, DocumentJson.Parsed p) {
        if (p.id() != null && p.id().startsWith(DocumentJson.DESIGN_PREFIX) && !p.deleted()) checks.checkDesign(p.id(), p.body());
    }

    /** The {@code sincePos} of {@link dev.chaise.storage.DbReader#inlineAttachments} for a request: atts_since's newest position, attachments=true, or stubs. */
    static long attsSince(com.fasterxml.jackson.databind.JsonNode attsSince, boolean attachments) {
        if (attsSince != null && attsSince.isArray()) {
            long since = 0;
            for (var r : attsSince) if (r.isTextual()) since = Math.max(since, dev.chaise.storage.RevId.parse(r.textValue()).pos());
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

    /** A path segment as CouchDB's url_encode writes it in a Location ({@code /} too is encoded). */
    static String encode(String s) {
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

    static void checkLocalRev(String rev) {
        if (rev != null && !LOCAL_REV.matcher(rev).matches()) throw StorageException.badRequest(RevId.INVALID);
    }
}

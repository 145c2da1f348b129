package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.Database;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.DocInfo;
import dev.chaise.storage.DocUpdate;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentJson.Meta;
import dev.chaise.storage.LocalDoc;
import dev.chaise.storage.RevId;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One document at a time: {@code GET/HEAD/PUT/DELETE/COPY} on {@code /{db}/{doc}},
 * {@code /{db}/_design/{name}} and {@code /{db}/_local/{name}}, and {@code POST /{db}}.
 */
public final class DocumentHandlers {
    private static final Logger log = LoggerFactory.getLogger(DocumentHandlers.class);

    private final Access access;
    private final Uuids uuids;

    public DocumentHandlers(Access access, Uuids uuids) {
        this.access = access;
        this.uuids = uuids;
    }

    public void register(Router r) {
        r.add("POST", "/{db}", this::post);
        Router.Handler get = access.readsNeverWait() ? Router.bounded(this::get, DocumentHandlers::boundedGet) : this::get;
        for (String path : List.of("/{db}/{docid}", "/{db}/_design/{ddoc}")) {
            r.add("GET", path, get);
            r.add("PUT", path, this::put);
            r.add("DELETE", path, this::delete);
            r.add("COPY", path, this::copy);
        }
        r.add("GET", "/{db}/_local/{ldoc}", this::getLocal);
        r.add("PUT", "/{db}/_local/{ldoc}", this::putLocal);
        r.add("DELETE", "/{db}/_local/{ldoc}", this::deleteLocal);
        r.add("COPY", "/{db}/_local/{ldoc}", this::copy);
        for (String m : List.of("GET", "PUT", "DELETE", "COPY", "POST")) {
            r.add(m, "/{db}/_local", req -> {
                throw HttpError.badRequest("Invalid _local document id.");
            });
            r.add(m, "/{db}/_local/{ldoc}/{att...}", req -> {
                throw HttpError.badRequest("_local documents do not accept attachments.");
            });
        }
    }

    private static String docId(Request req) {
        if (req.param("ddoc") != null) return DocumentJson.DESIGN_PREFIX + req.param("ddoc");
        if (req.param("ldoc") != null) return DocumentJson.LOCAL_PREFIX + req.param("ldoc");
        String id = req.param("docid");
        // chttpd_db: "_local/" on its own (the path's _local%2F) names no local document
        if (DocumentJson.LOCAL_PREFIX.equals(id)) throw HttpError.badRequest("Invalid _local document id.");
        return id;
    }

    /** The document id a read names, once the user may read it: 404 for an id no document can have, then the policies' say. */
    private static String readable(Request req, SecuredDb db) {
        String id = docId(req);
        if (!validId(id)) throw StorageException.notFound("missing"); // no document can have it
        db.requirePartition(id);
        db.checkReader(id);
        return id;
    }

    private SecuredDb member(Request req) {
        return access.database(req, SecuredDb.Level.MEMBER);
    }

    // ---------------------------------------------------------------- GET

    private Response get(Request req) throws Exception {
        String openRevs = req.query("open_revs");
        if (openRevs != null) {
            SecuredDb db = member(req);
            return openRevs(req, db, readable(req, db), openRevs);
        }
        record Read(SecuredDb db, StoredDoc doc, ObjectNode body, long attsSince, boolean related) {}
        // Opened and read in one transaction: the directory entry is read once (issue 27).
        Read read = access.read(req, SecuredDb.Level.MEMBER, (db, r) -> {
            String id = readable(req, db);
            boolean meta = flag(req, "meta");
            // With latest=true CouchDB opens the winner whatever rev was asked for.
            RevId rev = req.query("rev") == null || flag(req, "latest") ? null : RevId.parse(req.query("rev"));
            Meta m = new Meta(flag(req, "revs"), meta || flag(req, "revs_info"), rev == null && (meta || flag(req, "conflicts")),
                    rev == null && (meta || flag(req, "deleted_conflicts")), meta || flag(req, "local_seq"));
            long attsSince = attsSince(req);
            // chttpd_db:send_doc_efficiently: bodies as multipart/related parts, sent as stored, each stub saying how.
            boolean related = attsSince >= 0 && OpenRevs.accepts(req.header("Accept"), "multipart/related");
            boolean encodingInfo = related || flag(req, "att_encoding_info");
            StoredDoc doc = r.get(id, rev, m.needsBranches());
            ObjectNode rendered = db.render(doc, m);
            if (encodingInfo) DocumentJson.showEncoding(doc, rendered);
            if (!related && rendered.has("_attachments")) r.inlineAttachments(doc, rendered, attsSince);
            return new Read(db, doc, rendered, attsSince, related);
        });
        StoredDoc d = read.doc();
        ObjectNode body = read.body();
        // CouchDB sends an ETag only for a document without meta members.
        boolean hasMeta = body.has("_revs_info") || body.has("_conflicts") || body.has("_deleted_conflicts") || body.has("_local_seq");
        MultipartDocs.Bodies bodies = read.related() ? MultipartDocs.stored(read.db().database(), d.id(), read.attsSince()) : null;
        if (hasMeta) return docResponse(body, bodies);
        String etag = "\"" + d.rev() + "\"";
        if (etagMatches(req, etag)) return notModified(etag);
        return docResponse(body, bodies).withHeader("ETag", etag);
    }

    /**
     * A document as chttpd's send_doc_efficiently sends it: with attachment bodies asked for
     * ({@code attachments=true}, {@code atts_since}) and a client that accepts
     * {@code multipart/related} (no Accept header accepts anything, as in mochiweb), {@code bodies}
     * is set: {@code multipart/related}, the JSON first, each body marked {@code "follows": true},
     * then the bodies as stored, in the JSON's order (JSON if none follows). Otherwise JSON.
     */
    private static Response docResponse(ObjectNode body, MultipartDocs.Bodies bodies) throws Exception {
        if (bodies == null || !body.has("_attachments")) return Response.json(200, body);
        return MultipartDocs.related(body, bodies);
    }

    /** {@code attachments=true} or {@code atts_since=[revs]}: which attachment bodies go inline, as base64 (-1: none). */
    private static long attsSince(Request req) {
        JsonNode since = dev.chaise.http.Queries.json(req, "atts_since");
        if (since != null && !since.isArray()) throw HttpError.badRequest("`atts_since` must be a JSON array of revisions");
        return DocSupport.attsSince(since, flag(req, "attachments"));
    }

    /** As chttpd:etag_match: If-None-Match split at commas and spaces, a weak {@code W/} prefix ignored; no {@code *}. */
    static boolean etagMatches(Request req, String etag) {
        String inm = req.header("If-None-Match");
        if (inm == null) return false;
        for (String t : inm.split("[, ]+")) {
            if ((t.startsWith("W/") ? t.substring(2) : t).equals(etag)) return true;
        }
        return false;
    }

    static Response notModified(String etag) {
        return new Response.Full(304, List.of(new Response.Header("ETag", etag)), new byte[0]);
    }

    /**
     * A document GET whose work is one read of the document and its rendering as one JSON body:
     * no {@code open_revs} (a streamed answer), no attachment bodies ({@code attachments},
     * {@code atts_since}: inline or as multipart/related, of any size).
     */
    static boolean boundedGet(Request req) {
        return req.query("open_revs") == null && req.query("attachments") == null && req.query("atts_since") == null;
    }

    /** CouchDB reads doc options only when exactly {@code true}; anything else is ignored, not an error. */
    private static boolean flag(Request req, String name) {
        return "true".equals(req.query(name));
    }

    private static boolean validId(String id) {
        try {
            DocumentJson.validateId(id);
            return true;
        } catch (StorageException e) {
            return false;
        }
    }

    /** {@code open_revs}: the given revisions (or every leaf), as JSON or as CouchDB's multipart/mixed. */
    private Response openRevs(Request req, SecuredDb sdb, String id, String spec) throws Exception {
        Database db = sdb.database();
        List<RevId> asked = null;
        if (!spec.equals("all")) {
            JsonNode list;
            try {
                list = Json.MAPPER.readTree(spec);
            } catch (Exception e) {
                throw HttpError.badRequest("invalid UTF-8 JSON");
            }
            if (list == null || !list.isArray()) throw HttpError.badRequest("open_revs must be \"all\" or a JSON array of revisions");
            asked = new ArrayList<>();
            for (JsonNode r : list) {
                if (!r.isTextual()) throw StorageException.badRequest(RevId.INVALID);
                asked.add(RevId.parse(r.textValue()));
            }
        }
        boolean revs = flag(req, "revs");
        boolean latest = flag(req, "latest");
        List<RevId> wanted = asked;
        long attsSince = DocSupport.attsSince(dev.chaise.http.Queries.json(req, "atts_since"), flag(req, "attachments"));
        boolean multipart = acceptsMultipartMixed(req.header("Accept"));
        // As multipart (the replicator's way) attachment bodies are streamed from storage after the
        // read, so a document with a body of any size passes through a few hundred KB.
        // chttpd_db: a multipart answer sends bodies as stored, each stub saying how (att_encoding_info).
        boolean encodingInfo = multipart || flag(req, "att_encoding_info");
        List<ObjectNode> parts = db.read(r -> OpenRevs.read(sdb, r, id, wanted, revs, latest, multipart ? -1 : attsSince, encodingInfo, false));
        if (asked == null && parts.isEmpty()) throw StorageException.notFound("missing");
        if (!multipart) return Response.json(200, parts);
        String boundary = MultipartDocs.boundary();
        // send_docs_multipart always adds `attachments`: bodies follow, all of them or those after atts_since.
        MultipartDocs.Bodies bodies = MultipartDocs.stored(db, id, Math.max(attsSince, 0));
        return new Response.Streamed(200, List.of(new Response.Header("Content-Type", "multipart/mixed; boundary=\"" + boundary + "\"")), out -> {
            try {
                MultipartDocs.text(out, "--" + boundary);
                for (ObjectNode p : parts) {
                    if (p.has("ok")) MultipartDocs.writeDoc(out, p.get("ok"), false, bodies);
                    else MultipartDocs.writeError(out, p);
                    MultipartDocs.text(out, "\r\n--" + boundary);
                }
                MultipartDocs.text(out, "--");
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    /** As mochiweb's {@code accepts_content_type}: no Accept header accepts anything. */
    static boolean acceptsMultipartMixed(String accept) {
        return OpenRevs.accepts(accept, "multipart/mixed");
    }

    // ---------------------------------------------------------------- writes

    private Response put(Request req) throws Exception {
        String ct = req.contentType();
        boolean related = ct != null && ct.startsWith("multipart/related");
        // A plain PUT's one transaction is the write's; attachment parts are stored before it, in the database as opened.
        SecuredDb db = related ? member(req) : access.databaseToUpdate(req, SecuredDb.Level.MEMBER);
        String id = docId(req);
        db.validateDocId(id);
        // multipart/related: the replicator's document with attachment bodies as parts.
        MultipartRelated.Parsed multipart = related
                ? MultipartRelated.read(req.header("Content-Type"), Bodies.stream(req), (name, meta, in) -> db.readAttachment(id, name, meta, in))
                : null;
        JsonNode json = multipart != null ? multipart.doc() : Bodies.json(req); // CouchDB does not insist on a JSON Content-Type here
        boolean newEdits = !"false".equals(req.query("new_edits"));
        DocumentJson.Parsed p = DocumentJson.parse(json, id);
        String rev = DocSupport.requestRev(req, p.rev() == null ? null : p.rev().toString());
        if (rev != null && p.rev() == null) p = p.withRev(RevId.parse(rev));
        if (!newEdits && p.rev() == null) throw HttpError.badRequest(DocSupport.NEEDS_REV);
        boolean batch = "ok".equals(req.query("batch"));
        DocUpdate u = DocumentJson.toUpdate(p, newEdits);
        if (multipart != null) u = u.withStored(multipart.stored());
        UpdateResult r = write(db, u, newEdits, batch);
        if (batch) return Response.json(202, DocSupport.okRow(id, null));
        return Response.json(p.deleted() ? 200 : 201, DocSupport.okRow(id, r.rev().toString()))
                .withHeader("ETag", "\"" + r.rev() + "\"")
                .withHeader("Location", DocSupport.location(req, db.name(), id));
    }

    /**
     * One document through the store. {@code batch=ok} is answered 202 before CouchDB knows the
     * outcome, so its failures are only logged there; here the write is done first (it is
     * durable when acknowledged anyway) and its failure likewise not reported.
     */
    private static UpdateResult write(SecuredDb db, DocUpdate u, boolean newEdits, boolean batch) {
        UpdateResult r = db.update(List.of(u), newEdits).getFirst();
        if (r.ok()) return r;
        if (batch) {
            log.debug("batch=ok write of {} failed: {}", u.id(), r.error().getMessage());
            return r;
        }
        throw r.error();
    }

    private Response post(Request req) throws Exception {
        SecuredDb db = member(req);
        Bodies.requireContentType(req, Response.JSON);
        JsonNode json = Bodies.json(req);
        if (json.isObject() && json.path("_id").isTextual() && DocumentJson.isLocal(json.get("_id").textValue())) {
            DocumentJson.LocalUpdate u = DocumentJson.parseLocal(json, null);
            DocSupport.checkLocalRev(u.rev());
            LocalDoc d = db.writeLocal(u.id(), u.rev(), u.deleted(), u.body());
            return Response.json(201, DocSupport.okRow(u.id(), d.rev())).withHeader("Location", DocSupport.location(req, db.name(), u.id()));
        }
        DocumentJson.Parsed p = DocumentJson.parse(json, null);
        if (p.id() != null) db.validateDocId(p.id());
        String id = p.id() != null ? p.id() : uuids.next();
        db.requirePartition(id); // a generated id has no partition
        p = p.withId(id);
        boolean batch = "ok".equals(req.query("batch"));
        UpdateResult r = write(db, DocumentJson.toUpdate(p, true), true, batch);
        if (batch) return Response.json(202, DocSupport.okRow(id, null));
        return Response.json(201, DocSupport.okRow(id, r.rev().toString())).withHeader("Location", DocSupport.location(req, db.name(), id));
    }

    private Response delete(Request req) {
        SecuredDb db = member(req);
        String id = docId(req);
        DocumentJson.validateId(id);
        db.requirePartition(id);
        // CouchDB opens the document first: a missing or deleted one is a 404, not a conflict.
        DocInfo w = db.database().winner(id);
        if (w == null) throw StorageException.notFound("missing");
        if (w.deleted()) throw StorageException.notFound("deleted");
        String rev = DocSupport.requestRev(req, null);
        if (rev == null) throw StorageException.conflict();
        RevId base = RevId.parse(rev);
        UpdateResult r = write(db, DocUpdate.edit(id, base, true, Json.NODES.objectNode()), true, false);
        return Response.json(200, DocSupport.okRow(id, r.rev().toString())).withHeader("ETag", "\"" + r.rev() + "\"");
    }

    /** {@code COPY} with {@code Destination: id} or {@code id?rev=...}, relative as CouchDB requires. */
    private Response copy(Request req) {
        SecuredDb db = member(req);
        String id = docId(req);
        String dest = req.header("Destination");
        if (dest == null) throw HttpError.badRequest("Destination header is mandatory for COPY.");
        if (dest.startsWith("http://") || dest.startsWith("https://")) throw HttpError.badRequest("Destination URL must be relative.");
        String destRev = null;
        int q = dest.indexOf('?');
        if (q >= 0) {
            String qs = dest.substring(q + 1);
            dest = dest.substring(0, q);
            int eq = qs.indexOf('=');
            if (eq < 0) throw StorageException.badRequest(RevId.INVALID);
            destRev = qs.substring(eq + 1);
        }
        String destId;
        try {
            destId = req.unquote(dest); // chttpd:unquote, '+' as decode_plus_to_space says
        } catch (HttpError e) {
            throw HttpError.badRequest("Destination header is not a valid URL path");
        }
        db.validateDocId(destId);
        String srcRev = DocSupport.requestRev(req, null);

        ObjectNode body;
        if (DocumentJson.isLocal(id)) {
            body = db.getLocal(id).body().deepCopy();
        } else {
            if (!validId(id)) throw StorageException.notFound("missing");
            db.requirePartition(id);
            StoredDoc src = db.database().get(id, srcRev == null ? null : RevId.parse(srcRev), false);
            // A copy carries no more than its reader may see; what a policy leaves whole is copied as stored.
            ObjectNode rendered = DocumentJson.render(src);
            ObjectNode seen = db.visible(rendered);
            body = seen == rendered ? src.body().deepCopy() : seen.deepCopy();
            body.remove(List.of("_id", "_rev"));
        }
        String newRev;
        if (DocumentJson.isLocal(destId)) {
            DocSupport.checkLocalRev(destRev);
            newRev = db.writeLocal(destId, destRev, false, body).rev();
        } else {
            RevId base = destRev == null ? null : RevId.parse(destRev);
            newRev = write(db, DocUpdate.edit(destId, base, false, body), true, false).rev().toString();
        }
        return Response.json(201, DocSupport.okRow(destId, newRev))
                .withHeader("Location", DocSupport.location(req, db.name(), destId))
                .withHeader("ETag", "\"" + newRev + "\"");
    }

    // ---------------------------------------------------------------- _local

    private Response getLocal(Request req) {
        SecuredDb db = member(req);
        String id = docId(req);
        LocalDoc d = db.getLocal(id);
        String etag = "\"" + d.rev() + "\"";
        if (etagMatches(req, etag)) return notModified(etag);
        return Response.json(200, DocumentJson.render(d)).withHeader("ETag", etag);
    }

    private Response putLocal(Request req) throws Exception {
        SecuredDb db = member(req);
        String id = docId(req);
        DocumentJson.validateId(id);
        DocumentJson.LocalUpdate u = DocumentJson.parseLocal(Bodies.json(req), id);
        String rev = DocSupport.requestRev(req, u.rev());
        DocSupport.checkLocalRev(rev);
        LocalDoc d = db.writeLocal(id, rev, u.deleted(), u.body());
        return Response.json(u.deleted() ? 200 : 201, DocSupport.okRow(id, d.rev()))
                .withHeader("ETag", "\"" + d.rev() + "\"")
                .withHeader("Location", DocSupport.location(req, db.name(), id));
    }

    private Response deleteLocal(Request req) {
        SecuredDb db = member(req);
        String id = docId(req);
        DocumentJson.validateId(id);
        db.getLocal(id); // 404 first, as CouchDB
        String rev = DocSupport.requestRev(req, null);
        DocSupport.checkLocalRev(rev);
        LocalDoc d = db.writeLocal(id, rev, true, Json.NODES.objectNode());
        return Response.json(200, DocSupport.okRow(id, d.rev())).withHeader("ETag", "\"" + d.rev() + "\"");
    }
}

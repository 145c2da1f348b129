package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.Database;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.RevId;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a replicator asks a peer beyond documents and changes: {@code _revs_diff},
 * {@code _missing_revs} and {@code _bulk_get}. Each reads many documents' edit branches (RFC C)
 * in a few snapshot transactions, so a large request stays within FoundationDB's five seconds.
 */
public final class ReplicationHandlers {
    /** {@code _bulk_get} reads bodies too: a few documents per transaction. */
    static final int DOCS_PER_TRANSACTION = 50;
    private static final Set<String> BULK_GET_REFUSED = Set.of("open_revs", "new_edits", "w", "rev", "atts_since");

    private final Access access;

    private final dev.chaise.stats.Counter bulkRequests;

    public ReplicationHandlers(Access access) {
        this.access = access;
        this.bulkRequests = dev.chaise.http.metrics.HttpdStats.of(access.stats()).bulkRequests();
    }

    public void register(Router r) {
        r.add("POST", "/{db}/_revs_diff", req -> revsDiff(req, false));
        r.add("POST", "/{db}/_missing_revs", req -> revsDiff(req, true));
        r.add("POST", "/{db}/_bulk_get", this::bulkGet);
    }

    // ---------------------------------------------------------------- _revs_diff, _missing_revs

    /**
     * {@code {id: [revs]}} in; the ids with revisions this database lacks out. CouchDB's
     * {@code possible_ancestors} are the leaves whose position is below the highest missing one
     * (left out when empty); {@code _missing_revs} answers the missing ones only.
     */
    private Response revsDiff(Request req, boolean missingRevsOnly) {
        SecuredDb db = access.database(req, SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        List<String> ids = new ArrayList<>(body.size());
        List<List<RevId>> asked = new ArrayList<>(body.size());
        for (Map.Entry<String, JsonNode> e : body.properties()) {
            JsonNode revs = e.getValue();
            if (!revs.isArray()) throw StorageException.badRequest(RevId.INVALID);
            List<RevId> list = new ArrayList<>(revs.size());
            for (JsonNode r : revs) {
                if (!r.isTextual()) throw StorageException.badRequest(RevId.INVALID);
                list.add(RevId.parse(r.textValue()));
            }
            ids.add(e.getKey());
            asked.add(list);
        }
        ObjectNode out = Json.NODES.objectNode();
        ObjectNode target = missingRevsOnly ? out.putObject("missing_revs") : out;
        for (Database.RevsDiff d : db.database().revsDiff(ids, asked)) {
            if (missingRevsOnly) {
                strings(target.putArray(d.id()), d.missing());
                continue;
            }
            ObjectNode row = target.putObject(d.id());
            strings(row.putArray("missing"), d.missing());
            if (!d.possibleAncestors().isEmpty()) strings(row.putArray("possible_ancestors"), d.possibleAncestors());
        }
        return Response.json(200, out);
    }

    private static void strings(ArrayNode into, List<RevId> revs) {
        for (RevId r : revs) into.add(r.toString());
    }

    // ---------------------------------------------------------------- _bulk_get

    /** One requested document: what to open, or the error it already earned (CouchDB's rev: the raw value, or null). */
    private record Wanted(JsonNode id, List<RevId> revs, ObjectNode error, JsonNode attsSince) {}

    /**
     * {@code {docs: [{id, rev?, atts_since?}]}}: each document's revision (every leaf without
     * {@code rev}), with {@code revs} and {@code latest} as {@code open_revs} takes them, in the
     * request's order. An entry that cannot be opened gets CouchDB's error object in its place; only
     * a body without {@code docs} fails the whole request. JSON unless the client accepts only
     * multipart, as CouchDB decides (the CouchDB replicator and PouchDB ask for JSON).
     */
    private Response bulkGet(Request req) throws Exception {
        bulkRequests.increment();
        SecuredDb db = access.database(req, SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode list = body.get("docs");
        if (list == null || !list.isArray()) throw HttpError.badRequest("Missing JSON list of 'docs'.");
        for (String q : BULK_GET_REFUSED) {
            if (req.query(q) != null) throw HttpError.badRequest("\"" + q + "\" query parameter is not acceptable");
        }
        boolean revs = "true".equals(req.query("revs"));
        boolean latest = "true".equals(req.query("latest"));
        boolean attachments = "true".equals(req.query("attachments"));

        List<Wanted> wanted = new ArrayList<>(list.size());
        for (JsonNode d : list) wanted.add(parse(d));
        List<ObjectNode> results = new ArrayList<>(wanted.size());
        for (int i = 0; i < wanted.size(); i += DOCS_PER_TRANSACTION) {
            List<Wanted> chunk = wanted.subList(i, Math.min(wanted.size(), i + DOCS_PER_TRANSACTION));
            results.addAll(db.database().read(r -> {
                List<ObjectNode> out = new ArrayList<>(chunk.size());
                for (Wanted w : chunk) out.add(result(db, r, w, revs, latest, attachments));
                return out;
            }));
        }
        String accept = req.header("Accept");
        boolean multipart = !OpenRevs.accepts(accept, Response.JSON)
                && (OpenRevs.accepts(accept, "multipart/mixed") || OpenRevs.accepts(accept, "multipart/related"));
        if (!multipart) return Response.json(200, Json.NODES.objectNode().set("results", Json.NODES.arrayNode().addAll(results)));
        return multipart(results, OpenRevs.accepts(accept, "multipart/mixed") ? "multipart/mixed" : "multipart/related");
    }

    private static Wanted parse(JsonNode d) {
        if (!d.isObject() || d.isEmpty()) return new Wanted(null, null, error(null, null, "bad_request", "document must be a JSON object"), null);
        JsonNode id = d.get("id");
        if (id == null) return new Wanted(null, null, error(null, null, "bad_request", "document id missed"), null);
        try {
            if (!id.isTextual()) throw new StorageException(StorageException.Kind.ILLEGAL_DOCID, "Document id must be a string");
            DocumentJson.validateId(id.textValue());
        } catch (StorageException e) {
            return new Wanted(id, null, error(id, null, e.error(), e.reason()), null);
        }
        JsonNode rev = d.get("rev");
        List<RevId> revs = null;
        if (rev != null && !rev.isNull()) {
            try {
                if (!rev.isTextual()) throw StorageException.badRequest(RevId.INVALID);
                revs = List.of(RevId.parse(rev.textValue()));
            } catch (StorageException e) {
                return new Wanted(id, null, error(id, rev, e.error(), e.reason()), null);
            }
        }
        JsonNode since = d.get("atts_since");
        if (since != null && !since.isNull()) {
            if (!since.isArray()) return new Wanted(id, null, error(id, since, "bad_request", "att_since value must be array of revs."), null);
            for (JsonNode s : since) {
                try {
                    if (!s.isTextual()) throw StorageException.badRequest(RevId.INVALID);
                    RevId.parse(s.textValue());
                } catch (StorageException e) {
                    return new Wanted(id, null, error(id, s, e.error(), e.reason()), null);
                }
            }
        }
        return new Wanted(id, revs, null, since);
    }

    /** {@code {"id": id, "docs": [...]}} for one requested document. */
    private static ObjectNode result(SecuredDb db, DbReader r, Wanted w, boolean revs, boolean latest, boolean attachments) {
        ObjectNode row = Json.NODES.objectNode();
        row.set("id", w.id() == null ? Json.NODES.nullNode() : w.id());
        ArrayNode out = row.putArray("docs");
        if (w.error() != null) {
            out.add(w.error());
            return row;
        }
        String id = w.id().textValue();
        // An empty atts_since asks for nothing more than attachments= does, as in CouchDB.
        List<ObjectNode> parts = OpenRevs.read(db, r, id, w.revs(), revs, latest,
                DocSupport.attsSince(w.attsSince() != null && w.attsSince().isEmpty() ? null : w.attsSince(), attachments), false, true);
        // A missing document without a rev: CouchDB names the rev "undefined".
        if (parts.isEmpty()) out.add(error(w.id(), Json.NODES.textNode("undefined"), "not_found", "missing"));
        for (ObjectNode p : parts) {
            out.add(p.has("ok") || p.has("error") ? p : error(w.id(), p.get("missing"), "not_found", "missing"));
        }
        return row;
    }

    private static ObjectNode error(JsonNode id, JsonNode rev, String error, String reason) {
        ObjectNode e = Json.NODES.objectNode();
        ObjectNode in = e.putObject("error");
        in.set("id", id == null ? Json.NODES.nullNode() : id);
        in.set("rev", rev == null ? Json.NODES.nullNode() : rev);
        in.put("error", error).put("reason", reason);
        return e;
    }

    /** CouchDB's multipart _bulk_get: one part per revision or error, JSON bodies (no attachments yet). */
    private static Response multipart(List<ObjectNode> results, String type) throws Exception {
        String boundary = MultipartDocs.boundary();
        MultipartDocs.Buffer out = new MultipartDocs.Buffer();
        for (ObjectNode row : results) {
            for (JsonNode p : row.get("docs")) {
                MultipartDocs.text(out, "\r\n--" + boundary);
                if (p.has("ok")) MultipartDocs.writeDoc(out, p.get("ok"), true, MultipartDocs.INLINE);
                else MultipartDocs.writeError(out, p.get("error"));
            }
        }
        if (!results.isEmpty()) MultipartDocs.text(out, "\r\n--" + boundary + "--\r\n");
        return new Response.Full(200, List.of(new Response.Header("Content-Type", type + "; boundary=\"" + boundary + "\"")), out.bytes.toByteArray());
    }
}

package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Queries;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.Router;
import dev.chaise.http.auth.Access;
import dev.chaise.storage.DbHandle;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.DocumentStore;
import dev.chaise.storage.DocumentStore.DocInfo;
import dev.chaise.storage.DocumentStore.StoredDoc;
import dev.chaise.storage.DocumentStore.UpdateResult;
import dev.chaise.storage.LocalDocuments;
import dev.chaise.storage.RangeCursor;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.rev.EditBranch;
import dev.chaise.storage.rev.EditBranches;
import dev.chaise.storage.rev.RevId;
import dev.chaise.storage.rev.RevInfo;
import dev.chaise.storage.rev.Revisions;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Documents, {@code _bulk_docs}, {@code _all_docs} and {@code _changes} (normal and longpoll).
 * Continuous and eventsource feeds answer 501 until they are built.
 */
public final class DocumentHandlers {
    private static final long DEFAULT_LONGPOLL_MS = 60_000;

    private final DocumentStore docs;
    private final Access access;

    public DocumentHandlers(DocumentStore docs, Access access) {
        this.docs = docs;
        this.access = access;
    }

    public void register(Router r) {
        r.add("POST", "/{db}", this::post);
        r.add("POST", "/{db}/_bulk_docs", this::bulkDocs);
        r.add("GET", "/{db}/_all_docs", req -> allDocs(req, null));
        r.add("POST", "/{db}/_all_docs", req -> {
            Bodies.requireContentType(req, Response.JSON);
            JsonNode keys = Bodies.jsonObject(req).get("keys");
            if (keys == null || !keys.isArray()) throw HttpError.badRequest("`keys` body member must be an array.");
            return allDocs(req, keys);
        });
        r.add("GET", "/{db}/_design_docs", this::designDocs);
        r.add("GET", "/{db}/_local_docs", this::localDocs);
        r.add("GET", "/{db}/_changes", req -> changes(req, null));
        r.add("POST", "/{db}/_changes", req -> changes(req, Bodies.jsonObject(req)));
        for (String prefix : List.of("/{db}/{docid}", "/{db}/_design/{ddoc}")) {
            r.add("GET", prefix, this::get);
            r.add("PUT", prefix, this::put);
            r.add("DELETE", prefix, this::delete);
            r.add("COPY", prefix, this::copy);
        }
        r.add("GET", "/{db}/_local/{ldoc}", this::getLocal);
        r.add("PUT", "/{db}/_local/{ldoc}", this::putLocal);
        r.add("DELETE", "/{db}/_local/{ldoc}", this::deleteLocal);
    }

    private static String docId(Request req) {
        return req.param("ddoc") != null ? DocumentJson.DESIGN_PREFIX + req.param("ddoc") : req.param("docid");
    }

    /** Design documents are written by database admins only, as in CouchDB. */
    private Access.Db db(Request req, String id, boolean write) {
        boolean design = id != null && id.startsWith(DocumentJson.DESIGN_PREFIX);
        return access.database(req, req.param("db"), write && design ? Access.Level.DB_ADMIN : Access.Level.MEMBER);
    }

    // ---------------------------------------------------------------- single documents

    private Response get(Request req) throws Exception {
        String id = docId(req);
        Access.Db db = db(req, id, false);
        if (!id.startsWith(DocumentJson.DESIGN_PREFIX)) DocumentJson.validateId(id);
        String openRevs = req.query("open_revs");
        if (openRevs != null) return openRevs(req, db.name(), id, openRevs);
        RevId rev = req.query("rev") == null ? null : RevId.parse(req.query("rev"));
        boolean meta = Queries.bool(req, "meta", false);
        boolean revs = Queries.bool(req, "revs", false);
        boolean revsInfo = meta || Queries.bool(req, "revs_info", false);
        boolean conflicts = meta || Queries.bool(req, "conflicts", false);
        boolean deletedConflicts = meta || Queries.bool(req, "deleted_conflicts", false);
        boolean needBranches = revs || revsInfo || conflicts || deletedConflicts || Queries.bool(req, "latest", false);
        if (rev != null && Queries.bool(req, "latest", false)) rev = latest(db.name(), id, rev);
        StoredDoc d = docs.get(db.name(), id, rev, needBranches);
        String etag = "\"" + d.rev() + "\"";
        if (etag.equals(req.header("If-None-Match"))) return new Response.Full(304, List.of(new Response.Header("ETag", etag)), new byte[0]);
        ObjectNode out = render(d, revs, revsInfo, conflicts && rev == null, deletedConflicts && rev == null);
        if (Queries.bool(req, "local_seq", false) && d.seq() != null) out.put("_local_seq", d.seq().toHex());
        return Response.json(200, out).withHeader("ETag", etag);
    }

    private RevId latest(String db, String id, RevId rev) {
        for (EditBranch b : docs.branches(db, id)) {
            if (b.contains(rev)) return b.leaf();
        }
        return rev;
    }

    static ObjectNode render(StoredDoc d, boolean revs, boolean revsInfo, boolean conflicts, boolean deletedConflicts) {
        ObjectNode out = DocumentJson.render(d);
        List<EditBranch> branches = d.branches();
        if (branches == null) return out;
        if (conflicts) {
            List<RevId> c = EditBranches.conflicts(branches);
            if (!c.isEmpty()) c.forEach(r -> out.withArray("_conflicts").add(r.toString()));
        }
        if (deletedConflicts) {
            List<RevId> c = EditBranches.deletedConflicts(branches);
            if (!c.isEmpty()) c.forEach(r -> out.withArray("_deleted_conflicts").add(r.toString()));
        }
        if (revsInfo) {
            EditBranch b = EditBranches.findLeaf(branches, d.rev());
            if (b != null) {
                ArrayNode a = out.putArray("_revs_info");
                for (RevInfo i : EditBranches.revsInfo(b)) a.addObject().put("rev", i.rev().toString()).put("status", i.status().json());
            }
        }
        if (revs) {
            Revisions h = EditBranches.history(branches, d.rev());
            if (h != null) {
                ObjectNode r = out.putObject("_revisions");
                r.put("start", h.start());
                h.ids().forEach(r.putArray("ids")::add);
            }
        }
        return out;
    }

    private Response openRevs(Request req, String db, String id, String spec) throws Exception {
        List<EditBranch> branches = docs.branches(db, id);
        List<RevId> wanted = new ArrayList<>();
        if (spec.equals("all")) {
            for (EditBranch b : EditBranches.leaves(branches)) wanted.add(b.leaf());
        } else {
            JsonNode list;
            try {
                list = Json.MAPPER.readTree(spec);
            } catch (Exception e) {
                throw HttpError.badRequest("Invalid open_revs value");
            }
            if (!list.isArray()) throw HttpError.badRequest("Invalid open_revs value");
            for (JsonNode r : list) wanted.add(RevId.parse(r.asText()));
        }
        if (wanted.isEmpty() && spec.equals("all")) throw StorageException.notFound("missing");
        boolean revs = Queries.bool(req, "revs", false);
        List<ObjectNode> parts = new ArrayList<>();
        for (RevId r : wanted) {
            RevId leaf = Queries.bool(req, "latest", false) ? latestIn(branches, r) : r;
            ObjectNode part = Json.NODES.objectNode();
            try {
                StoredDoc d = docs.get(db, id, leaf, true);
                part.set("ok", render(d, revs, false, false, false));
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
                part.put("missing", r.toString());
            }
            parts.add(part);
        }
        String accept = req.header("Accept");
        if (accept != null && accept.contains("application/json")) return Response.json(200, parts);
        // multipart/mixed, one JSON part per revision, as CouchDB answers the replicator
        String boundary = HexFormat.of().formatHex(random(16));
        StringBuilder sb = new StringBuilder();
        for (ObjectNode p : parts) {
            sb.append("--").append(boundary).append("\r\nContent-Type: application/json");
            if (p.has("missing")) sb.append("; error=\"true\"");
            sb.append("\r\n\r\n").append(Json.MAPPER.writeValueAsString(p.has("ok") ? p.get("ok") : p)).append("\r\n");
        }
        sb.append("--").append(boundary).append("--");
        return Response.text(200, "multipart/mixed; boundary=\"" + boundary + "\"", sb.toString());
    }

    private static RevId latestIn(List<EditBranch> branches, RevId rev) {
        for (EditBranch b : branches) {
            if (b.contains(rev)) return b.leaf();
        }
        return rev;
    }

    private Response put(Request req) throws Exception {
        String id = docId(req);
        Access.Db db = db(req, id, true);
        DocumentJson.validateId(id);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        String rev = req.query("rev") != null ? req.query("rev") : stripQuotes(req.header("If-Match"));
        if (rev != null && !body.has("_rev")) body.put("_rev", rev);
        boolean newEdits = Queries.bool(req, "new_edits", true);
        DocumentJson.Parsed p = DocumentJson.parse(body, id);
        UpdateResult r = docs.update(db.name(), List.of(DocumentJson.toUpdate(p, newEdits)), newEdits).getFirst();
        if (!r.ok()) throw r.error();
        if ("ok".equals(req.query("batch"))) return Response.json(202, okBody(id, null));
        return created(req, db.name(), id, r.rev());
    }

    private Response post(Request req) throws Exception {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        DocumentJson.Parsed p = DocumentJson.parse(body, null);
        String id = p.id() != null ? p.id() : newId();
        if (id.startsWith(DocumentJson.DESIGN_PREFIX)) access.database(req, db.name(), Access.Level.DB_ADMIN);
        p = new DocumentJson.Parsed(id, p.rev(), p.deleted(), p.body(), p.revisions());
        UpdateResult r = docs.update(db.name(), List.of(DocumentJson.toUpdate(p, true)), true).getFirst();
        if (!r.ok()) throw r.error();
        if ("ok".equals(req.query("batch"))) return Response.json(202, okBody(id, null));
        return created(req, db.name(), id, r.rev());
    }

    private Response delete(Request req) {
        String id = docId(req);
        Access.Db db = db(req, id, true);
        DocumentJson.validateId(id);
        String rev = req.query("rev") != null ? req.query("rev") : stripQuotes(req.header("If-Match"));
        if (rev == null) throw StorageException.conflict();
        UpdateResult r = docs.update(db.name(), List.of(DocumentStore.DocUpdate.edit(id, RevId.parse(rev), true, Json.NODES.objectNode())), true).getFirst();
        if (!r.ok()) throw r.error();
        return Response.json(200, okBody(id, r.rev())).withHeader("ETag", "\"" + r.rev() + "\"");
    }

    private Response copy(Request req) {
        String id = docId(req);
        Access.Db db = db(req, id, false);
        String dest = req.header("Destination");
        if (dest == null || dest.isBlank()) throw HttpError.badRequest("Destination header is mandatory for COPY.");
        String destId = dest;
        RevId destRev = null;
        int q = dest.indexOf("?rev=");
        if (q >= 0) {
            destId = dest.substring(0, q);
            destRev = RevId.parse(dest.substring(q + 5));
        }
        destId = java.net.URLDecoder.decode(destId, StandardCharsets.UTF_8);
        DocumentJson.validateId(destId);
        if (destId.startsWith(DocumentJson.DESIGN_PREFIX)) access.database(req, db.name(), Access.Level.DB_ADMIN);
        RevId srcRev = req.query("rev") == null ? null : RevId.parse(req.query("rev"));
        StoredDoc src = docs.get(db.name(), id, srcRev, false);
        UpdateResult r = docs.update(db.name(), List.of(DocumentStore.DocUpdate.edit(destId, destRev, false, src.body().deepCopy())), true).getFirst();
        if (!r.ok()) throw r.error();
        return created(req, db.name(), destId, r.rev());
    }

    private static Response created(Request req, String db, String id, RevId rev) {
        String host = req.header("Host");
        String location = (host == null ? "" : "http://" + host) + "/" + URLEncoder.encode(db, StandardCharsets.UTF_8) + "/"
                + (id.startsWith(DocumentJson.DESIGN_PREFIX) ? DocumentJson.DESIGN_PREFIX + URLEncoder.encode(id.substring(8), StandardCharsets.UTF_8)
                : URLEncoder.encode(id, StandardCharsets.UTF_8));
        return Response.json(201, okBody(id, rev)).withHeader("ETag", "\"" + rev + "\"").withHeader("Location", location);
    }

    private static ObjectNode okBody(String id, RevId rev) {
        ObjectNode o = Json.NODES.objectNode().put("ok", true).put("id", id);
        if (rev != null) o.put("rev", rev.toString());
        return o;
    }

    private static String stripQuotes(String s) {
        if (s == null) return null;
        return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"") ? s.substring(1, s.length() - 1) : s;
    }

    static String newId() {
        return HexFormat.of().formatHex(random(16));
    }

    private static byte[] random(int n) {
        byte[] b = new byte[n];
        ThreadLocalRandom.current().nextBytes(b);
        return b;
    }

    // ---------------------------------------------------------------- _local

    private Response getLocal(Request req) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        String id = DocumentJson.LOCAL_PREFIX + req.param("ldoc");
        LocalDocuments.LocalDoc d = docs.getLocal(db.name(), id);
        ObjectNode out = Json.NODES.objectNode().put("_id", id).put("_rev", d.rev());
        out.setAll(d.body());
        return Response.json(200, out);
    }

    private Response putLocal(Request req) throws Exception {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        String id = DocumentJson.LOCAL_PREFIX + req.param("ldoc");
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode rev = body.remove("_rev");
        body.remove("_id");
        body.remove("_revisions");
        String baseRev = req.query("rev") != null ? req.query("rev") : rev == null ? null : rev.asText();
        boolean deleted = body.path("_deleted").asBoolean(false);
        body.remove("_deleted");
        for (var it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (f.startsWith("_")) throw new StorageException(StorageException.Kind.DOC_VALIDATION, "Bad special document member: " + f);
        }
        LocalDocuments.LocalDoc d = docs.putLocal(db.name(), id, baseRev, deleted, body);
        return Response.json(201, Json.NODES.objectNode().put("ok", true).put("id", id).put("rev", d.rev()));
    }

    private Response deleteLocal(Request req) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        String id = DocumentJson.LOCAL_PREFIX + req.param("ldoc");
        String rev = req.query("rev");
        if (rev == null) throw StorageException.conflict();
        LocalDocuments.LocalDoc d = docs.putLocal(db.name(), id, rev, true, Json.NODES.objectNode());
        return Response.json(200, Json.NODES.objectNode().put("ok", true).put("id", id).put("rev", d.rev()));
    }

    // ---------------------------------------------------------------- _bulk_docs

    private Response bulkDocs(Request req) throws Exception {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode list = body.get("docs");
        if (list == null || !list.isArray()) throw HttpError.badRequest("POST body must include `docs` parameter.");
        boolean newEdits = !body.has("new_edits") || body.get("new_edits").asBoolean(true);
        boolean allOrNothing = body.path("all_or_nothing").asBoolean(false);
        // Each document is parsed on its own: a bad one is an error row, not a failed request.
        List<DocumentStore.DocUpdate> updates = new ArrayList<>();
        List<Integer> positions = new ArrayList<>();
        ObjectNode[] rows = new ObjectNode[list.size()];
        for (int i = 0; i < list.size(); i++) {
            JsonNode doc = list.get(i);
            String id = doc.path("_id").isTextual() ? doc.get("_id").textValue() : null;
            try {
                DocumentJson.Parsed p = DocumentJson.parse(doc, null);
                if (p.id() == null) p = new DocumentJson.Parsed(newId(), p.rev(), p.deleted(), p.body(), p.revisions());
                if (p.id().startsWith(DocumentJson.DESIGN_PREFIX)) access.database(req, db.name(), Access.Level.DB_ADMIN);
                if (DocumentJson.isLocal(p.id())) {
                    rows[i] = localInBulk(db.name(), p);
                    continue;
                }
                updates.add(DocumentJson.toUpdate(p, newEdits));
                positions.add(i);
            } catch (StorageException e) {
                rows[i] = errorRow(id, e.error(), e.reason());
            } catch (HttpError e) {
                rows[i] = errorRow(id, e.error(), e.reason());
            }
        }
        List<UpdateResult> results = allOrNothing ? docs.updateAllOrNothing(db.name(), updates, newEdits) : docs.update(db.name(), updates, newEdits);
        for (int k = 0; k < results.size(); k++) {
            UpdateResult r = results.get(k);
            rows[positions.get(k)] = r.ok() ? Json.NODES.objectNode().put("ok", true).put("id", r.id()).put("rev", r.rev().toString())
                    : errorRow(r.id(), r.error().error(), r.error().reason());
        }
        ArrayNode out = Json.NODES.arrayNode();
        for (ObjectNode row : rows) {
            if (!newEdits && row.has("ok")) continue; // new_edits=false reports only failures, as CouchDB 3
            out.add(row); // success rows keep "ok": true, as CouchDB sends and PouchDB checks
        }
        return Response.json(201, out);
    }

    private ObjectNode localInBulk(String db, DocumentJson.Parsed p) {
        LocalDocuments.LocalDoc d = docs.putLocal(db, p.id(), p.rev() == null ? null : "0-" + p.rev().pos(), p.deleted(), p.body());
        return Json.NODES.objectNode().put("ok", true).put("id", p.id()).put("rev", d.rev());
    }

    private static ObjectNode errorRow(String id, String error, String reason) {
        ObjectNode o = Json.NODES.objectNode();
        if (id != null) o.put("id", id);
        return o.put("error", error).put("reason", reason);
    }

    // ---------------------------------------------------------------- _all_docs

    private Response allDocs(Request req, JsonNode keysBody) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        boolean includeDocs = Queries.bool(req, "include_docs", false);
        boolean conflicts = includeDocs && Queries.bool(req, "conflicts", false);
        boolean descending = Queries.bool(req, "descending", false);
        boolean inclusiveEnd = Queries.bool(req, "inclusive_end", true);
        long limit = Queries.nonNegative(req, "limit", 0);
        boolean limited = req.query("limit") != null;
        long skip = Queries.nonNegative(req, "skip", 0);
        boolean updateSeq = Queries.bool(req, "update_seq", false);
        JsonNode keys = keysBody != null ? keysBody : Queries.json(req, "keys");
        JsonNode key = Queries.json(req, "key");
        String start = textKey(Queries.json(req, "startkey", "start_key"), "startkey");
        String end = textKey(Queries.json(req, "endkey", "end_key"), "endkey");
        if (key != null) {
            start = textKey(key, "key");
            end = start;
            inclusiveEnd = true;
        }
        DocumentStore.DbInfo info = docs.info(db.name());
        String dbName = db.name();
        String fStart = start;
        String fEnd = end;
        boolean fInclusive = inclusiveEnd;
        return Response.jsonStream(200, out -> {
            out.write("{\"total_rows\":" + info.docCount() + ",\"rows\":[\r\n");
            boolean first = true;
            if (keys != null) {
                if (!keys.isArray()) throw HttpError.badRequest("`keys` member must be an array.");
                long n = 0;
                for (JsonNode k : keys) {
                    if (n++ < skip) continue;
                    if (limited && n - skip > limit) break;
                    first = writeRow(out, first, keyRow(dbName, k, includeDocs, conflicts));
                }
            } else if (!limited || limit > 0) {
                writeRows(out, docs.allDocs(dbName, fStart, fEnd, fInclusive, descending, limited ? limit + skip : 0,
                        (tx, h, kv) -> row(tx, h, DocumentStore.byIdRow(tx, h, kv), includeDocs, conflicts)), skip);
            }
            out.write("\r\n]");
            if (updateSeq) out.write(",\"update_seq\":" + Json.MAPPER.writeValueAsString(seqString(info.updateSeq())));
            out.write("}\n");
        });
    }

    /** {@code _all_docs} restricted to {@code _design/} ids, as CouchDB defines it. */
    private Response designDocs(Request req) {
        boolean descending = Queries.bool(req, "descending", false);
        String lo = DocumentJson.DESIGN_PREFIX;
        String hi = "_design0"; // the first id after every _design/ id
        String start = textKey(Queries.json(req, "startkey", "start_key"), "startkey");
        String end = textKey(Queries.json(req, "endkey", "end_key"), "endkey");
        String first = descending ? max(start == null ? hi : start, lo) : max(start == null ? lo : start, lo);
        String last = descending ? max(end == null ? lo : end, lo) : min(end == null ? hi : end, hi);
        if (descending) first = min(first, hi);
        return rangeOfIds(req, first, last, descending);
    }

    private static String max(String a, String b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    private static String min(String a, String b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private Response rangeOfIds(Request req, String start, String end, boolean descending) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        boolean includeDocs = Queries.bool(req, "include_docs", false);
        boolean inclusiveEnd = Queries.bool(req, "inclusive_end", true) && !"_design0".equals(end);
        long limit = Queries.nonNegative(req, "limit", 0);
        boolean limited = req.query("limit") != null;
        long skip = Queries.nonNegative(req, "skip", 0);
        String dbName = db.name();
        return Response.jsonStream(200, out -> {
            out.write("{\"total_rows\":null,\"rows\":[\r\n");
            if (!limited || limit > 0) {
                writeRows(out, docs.allDocs(dbName, start, end, inclusiveEnd, descending, limited ? limit + skip : 0,
                        (tx, h, kv) -> row(tx, h, DocumentStore.byIdRow(tx, h, kv), includeDocs, false)), skip);
            }
            out.write("\r\n]}\n");
        });
    }

    /** {@code _local_docs}: local documents by id; their revisions are {@code 0-N}. */
    private Response localDocs(Request req) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        boolean includeDocs = Queries.bool(req, "include_docs", false);
        boolean descending = Queries.bool(req, "descending", false);
        boolean inclusiveEnd = Queries.bool(req, "inclusive_end", true);
        long limit = Queries.nonNegative(req, "limit", 0);
        boolean limited = req.query("limit") != null;
        long skip = Queries.nonNegative(req, "skip", 0);
        String start = textKey(Queries.json(req, "startkey", "start_key"), "startkey");
        String end = textKey(Queries.json(req, "endkey", "end_key"), "endkey");
        String dbName = db.name();
        return Response.jsonStream(200, out -> {
            out.write("{\"total_rows\":null,\"rows\":[\r\n");
            if (!limited || limit > 0) {
                RangeCursor<LocalDocuments.LocalDoc> local = docs.localDocs(dbName, start, end, inclusiveEnd, descending, limited ? limit + skip : 0, includeDocs);
                writeRows(out, new Iterator<>() {
                    public boolean hasNext() {
                        return local.hasNext();
                    }

                    public ObjectNode next() {
                        LocalDocuments.LocalDoc d = local.next();
                        ObjectNode row = Json.NODES.objectNode().put("id", d.id()).put("key", d.id());
                        row.putObject("value").put("rev", d.rev());
                        if (includeDocs) {
                            ObjectNode doc = Json.NODES.objectNode().put("_id", d.id()).put("_rev", d.rev());
                            doc.setAll(d.body());
                            row.set("doc", doc);
                        }
                        return row;
                    }
                }, skip);
            }
            out.write("\r\n]}\n");
        });
    }

    private static String textKey(JsonNode k, String name) {
        if (k == null) return null;
        if (!k.isTextual()) throw HttpError.queryParseError("Invalid value for `" + name + "`: document ids are strings");
        return k.textValue();
    }

    private ObjectNode row(dev.chaise.kv.ReadTransaction tx, DbHandle h, DocInfo d, boolean includeDocs, boolean conflicts) {
        ObjectNode row = Json.NODES.objectNode().put("id", d.id()).put("key", d.id());
        row.putObject("value").put("rev", d.rev().toString());
        if (includeDocs) {
            StoredDoc doc = DocumentStore.get(tx, h, d.id(), d.rev(), conflicts);
            row.set("doc", render(doc, false, false, conflicts, false));
        }
        return row;
    }

    private ObjectNode keyRow(String db, JsonNode k, boolean includeDocs, boolean conflicts) {
        if (!k.isTextual()) return Json.NODES.objectNode().set("key", k).deepCopy();
        String id = k.textValue();
        return docs.kv().run(tx -> {
            DbHandle h = docs.databases().open(tx, db);
            DocInfo d = DocumentStore.winner(tx, h, id);
            if (d == null) return Json.NODES.objectNode().put("key", id).put("error", "not_found");
            if (d.deleted()) {
                ObjectNode row = Json.NODES.objectNode().put("id", id).put("key", id);
                row.putObject("value").put("rev", d.rev().toString()).put("deleted", true);
                if (includeDocs) row.putNull("doc");
                return row;
            }
            return row(tx, h, d, includeDocs, conflicts);
        });
    }

    /** Streams rows after dropping the first {@code skip}; the caller has written the opening bracket. */
    private static void writeRows(ResponseStream out, Iterator<ObjectNode> rows, long skip) throws Exception {
        boolean first = true;
        long skipped = 0;
        while (rows.hasNext()) {
            ObjectNode row = rows.next();
            if (skipped++ < skip) continue;
            first = writeRow(out, first, row);
        }
    }

    private static boolean writeRow(ResponseStream out, boolean first, ObjectNode row) throws Exception {
        if (!first) out.write(",\r\n");
        out.write(Json.MAPPER.writeValueAsString(row));
        out.flush();
        return false;
    }

    private static String seqString(Sequence s) {
        return s == null ? "0" : s.toHex();
    }

    // ---------------------------------------------------------------- _changes

    private Response changes(Request req, ObjectNode body) throws Exception {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        String feed = req.query("feed", "normal");
        if (!feed.equals("normal") && !feed.equals("longpoll")) {
            throw new HttpError(501, "not_implemented", "feed=" + feed + " is not supported yet; use normal or longpoll.");
        }
        boolean includeDocs = Queries.bool(req, "include_docs", false);
        boolean conflicts = includeDocs && Queries.bool(req, "conflicts", false);
        boolean descending = Queries.bool(req, "descending", false);
        boolean allDocsStyle = "all_docs".equals(req.query("style"));
        long limit = Queries.nonNegative(req, "limit", 0);
        boolean limited = req.query("limit") != null;
        long timeout = Queries.nonNegative(req, "timeout", DEFAULT_LONGPOLL_MS);
        Set<String> docIds = docIdsFilter(req, body);
        String sinceParam = req.query("since", "0");
        Sequence since = switch (sinceParam) {
            case "0" -> null;
            case "now" -> docs.info(db.name()).updateSeq();
            default -> Sequence.parse(sinceParam);
        };
        String dbName = db.name();
        List<ObjectNode> rows = collect(dbName, since, descending, limited ? limit : 0, includeDocs, conflicts, allDocsStyle, docIds);
        if (rows.isEmpty() && feed.equals("longpoll") && !descending) {
            var woke = docs.watchWrites(dbName);
            // Re-check: a write between the scan and arming the watch would otherwise be missed.
            rows = collect(dbName, since, false, limited ? limit : 0, includeDocs, conflicts, allDocsStyle, docIds);
            if (rows.isEmpty()) {
                try {
                    woke.get(timeout, TimeUnit.MILLISECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    // timeout: an empty result, as CouchDB
                } finally {
                    woke.cancel(false);
                }
                rows = collect(dbName, since, false, limited ? limit : 0, includeDocs, conflicts, allDocsStyle, docIds);
            }
        }
        String lastSeq = rows.isEmpty() ? (since == null ? "0" : since.toHex()) : rows.getLast().get("seq").asText();
        List<ObjectNode> result = rows;
        return Response.jsonStream(200, out -> {
            out.write("{\"results\":[\n");
            boolean first = true;
            for (ObjectNode row : result) {
                if (!first) out.write(",\n");
                out.write(Json.MAPPER.writeValueAsString(row));
                first = false;
            }
            out.write("\n],\n\"last_seq\":" + Json.MAPPER.writeValueAsString(lastSeq) + ",\"pending\":0}\n");
        });
    }

    private static Set<String> docIdsFilter(Request req, ObjectNode body) throws Exception {
        String filter = req.query("filter");
        if (filter == null) return null;
        if (!filter.equals("_doc_ids")) {
            throw new HttpError(501, "not_implemented", "filter=" + filter + " is not supported yet; _doc_ids is.");
        }
        JsonNode ids = body != null && body.has("doc_ids") ? body.get("doc_ids") : req.query("doc_ids") == null ? null : Json.MAPPER.readTree(req.query("doc_ids"));
        if (ids == null || !ids.isArray()) throw HttpError.badRequest("`doc_ids` filter parameter is not a list of doc ids.");
        Set<String> set = new HashSet<>();
        for (JsonNode id : ids) set.add(id.asText());
        return set;
    }

    private List<ObjectNode> collect(String db, Sequence since, boolean descending, long limit, boolean includeDocs, boolean conflicts,
                                     boolean allDocsStyle, Set<String> docIds) {
        List<ObjectNode> rows = new ArrayList<>();
        RangeCursor<ObjectNode> c = docs.changes(db, descending ? null : since, descending, docIds == null ? limit : 0, (tx, h, ch) -> {
            if (docIds != null && !docIds.contains(ch.id())) return null;
            ObjectNode row = Json.NODES.objectNode().put("seq", ch.seq().toHex()).put("id", ch.id());
            ArrayNode revs = row.putArray("changes");
            if (allDocsStyle && ch.branchCount() > 1) { // RFC D: only then read the branches
                for (EditBranch b : EditBranches.leaves(DocumentStore.branches(tx, h, ch.id()))) revs.addObject().put("rev", b.leaf().toString());
            } else {
                revs.addObject().put("rev", ch.rev().toString());
            }
            if (ch.deleted()) row.put("deleted", true);
            if (includeDocs) {
                StoredDoc d = DocumentStore.get(tx, h, ch.id(), ch.rev(), conflicts);
                row.set("doc", render(d, false, false, conflicts, false));
            }
            return row;
        });
        while (c.hasNext() && (limit <= 0 || rows.size() < limit)) rows.add(c.next());
        return rows;
    }
}

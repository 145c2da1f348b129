package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.StoredDoc;
import dev.chaise.storage.UpdateResult;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DesignFunctions;
import java.math.BigInteger;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * CouchDB's design-document functions over HTTP ({@code chttpd_show}): {@code _update}
 * ({@code /{db}/_design/{ddoc}/_update/{name}[/{docid}]}) and {@code _show}
 * ({@code .../_show/{name}[/{docid}]}). Each opens the database for a member first, reads the
 * document the function is given through the door (as the user may see it, with
 * {@code _conflicts}), runs the function ({@link DesignFunctions}), writes what an update returns
 * through the door (so validate_doc_update and every rule apply) and answers with the response
 * object the function built, as {@code chttpd_external:send_external_response} renders it.
 */
public final class DesignFunctionHandlers {
    private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE");

    private final DesignFunctions functions;
    private final Access access;

    public DesignFunctionHandlers(DesignFunctions functions, Access access) {
        this.functions = functions;
        this.access = access;
    }

    public void register(Router r) {
        // CouchDB runs these for any method; the update function itself refuses GET.
        for (String m : METHODS) {
            r.add(m, "/{db}/_design/{ddoc}/_update", req -> invalidPath(req, "update_error"));
            r.add(m, "/{db}/_design/{ddoc}/_update/{rest...}", this::update);
            r.add(m, "/{db}/_design/{ddoc}/_show", req -> invalidPath(req, "show_error"));
            r.add(m, "/{db}/_design/{ddoc}/_show/{rest...}", this::show);
        }
    }

    private SecuredDb member(Request req) {
        return access.database(req, SecuredDb.Level.MEMBER);
    }

    /** A path without the function's name: 404, after the caller was let in. */
    private Response invalidPath(Request req, String error) {
        member(req);
        throw new HttpError(404, error, "Invalid path.");
    }

    private static String ddocId(Request req) {
        return DocumentJson.DESIGN_PREFIX + req.param("ddoc");
    }

    /** The document id after the function's name ({@code /{db}/_design/{ddoc}/_x/{name}/a/b} is {@code a/b}), or null. */
    private static String docId(Request req) {
        List<String> p = req.path();
        return p.size() > 5 ? String.join("/", p.subList(5, p.size())) : null;
    }

    // ---------------------------------------------------------------- _update

    private Response update(Request req) {
        SecuredDb db = member(req);
        String name = req.path().get(4);
        DesignFunctions.Design d = functions.design(db.database(), ddocId(req));
        d.requireFunction("updates", name);
        String docId = docId(req);
        ObjectNode doc = docId == null ? null : openDoc(db, docId);
        DesignFunctions.Updated u = functions.update(d, name, doc, requestObject(req, db, docId));
        if (u.doc() == null) return external(u.response(), 200, List.of());
        DocumentJson.Parsed parsed = DocumentJson.parse(u.doc(), null);
        DocumentJson.validateId(parsed.id());
        UpdateResult written = db.updateOne(DocumentJson.toUpdate(parsed, true), true);
        return external(u.response(), 201, List.of(
                new Response.Header("X-Couch-Update-NewRev", written.rev().toString()),
                new Response.Header("X-Couch-Id", DocSupport.encode(parsed.id()))));
    }

    /** The document a function is given: as this user may see it, with {@code _conflicts}; null if there is none. */
    private static ObjectNode openDoc(SecuredDb db, String id) {
        try {
            StoredDoc d = db.database().get(id, null, true);
            return db.render(d, DocumentJson.Meta.CONFLICTS);
        } catch (StorageException e) {
            if (e.kind() == StorageException.Kind.NOT_FOUND) return null;
            throw e;
        }
    }

    // ---------------------------------------------------------------- _show

    private Response show(Request req) {
        SecuredDb db = member(req);
        String name = req.path().get(4);
        DesignFunctions.Design d = functions.design(db.database(), ddocId(req));
        d.requireFunction("shows", name);
        String docId = docId(req);
        ObjectNode doc = docId == null ? null : openDoc(db, docId);
        String etag = showEtag(req, d, doc);
        if (DocumentHandlers.etagMatches(req, etag)) return DocumentHandlers.notModified(etag);
        JsonNode resp = functions.show(d, name, doc, requestObject(req, db, docId));
        // The ETag is CouchDB's, never the function's: it cannot be checked without running the function.
        return external(resp, 200, List.of(new Response.Header("ETag", etag), new Response.Header("Vary", "Accept")));
    }

    /** chttpd_show's show_etag: the design document's and the document's revisions, the Accept header and the user's roles. */
    private static String showEtag(Request req, DesignFunctions.Design d, ObjectNode doc) {
        String docRev = doc == null ? "nil" : doc.path("_rev").asText();
        String accept = String.valueOf(req.header("Accept"));
        List<String> roles = req.user() == null ? List.of() : req.user().roles();
        String term = Json.write(Json.MAPPER.valueToTree(List.of(d.rev(), docRev, accept, roles)));
        try {
            byte[] md5 = MessageDigest.getInstance("MD5").digest(term.getBytes(StandardCharsets.UTF_8));
            return "\"" + new BigInteger(1, md5).toString(36).toUpperCase(Locale.ROOT) + "\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has MD5", e);
        }
    }

    // ---------------------------------------------------------------- the request object

    /**
     * CouchDB's {@code req} ({@code chttpd_external:json_req_obj}): the database's info, a fresh
     * uuid, the document id, method, paths, query (with {@code key}, {@code startkey},
     * {@code endkey} and {@code descending} decoded from JSON), headers without credentials
     * (CouchDB scrubs {@code Authorization}, {@code Cookie} and {@code X-Auth-CouchDB-Token}), the
     * body as text ({@code "undefined"} when none was sent), the peer, a form body's fields, no
     * cookies (scrubbed too), the user and the security object.
     */
    static ObjectNode requestObject(Request req, SecuredDb db, String docId) {
        ObjectNode r = Json.NODES.objectNode();
        r.set("info", Json.MAPPER.valueToTree(DatabaseHandlers.info(db.database().info())));
        r.put("uuid", DocSupport.newId());
        if (docId == null) r.putNull("id");
        else r.put("id", docId);
        r.put("method", req.method());
        ArrayNode path = Json.NODES.arrayNode();
        req.path().forEach(path::add);
        r.set("requested_path", path);
        r.set("path", path.deepCopy());
        r.put("raw_path", req.rawUri());
        ObjectNode query = r.putObject("query");
        for (Map.Entry<String, List<String>> e : req.query().entrySet()) {
            if (e.getValue().isEmpty()) continue;
            String v = e.getValue().getLast();
            switch (e.getKey()) {
                case "key", "startkey", "endkey", "descending" -> query.set(e.getKey(), dev.chaise.http.Queries.json(req, e.getKey()));
                default -> query.put(e.getKey(), v);
            }
        }
        ObjectNode headers = r.putObject("headers");
        req.headers().forEach(h -> {
            String n = h.getKey();
            if (!n.equalsIgnoreCase("authorization") && !n.equalsIgnoreCase("cookie") && !n.equalsIgnoreCase("x-auth-couchdb-token")) {
                headers.put(n, h.getValue());
            }
        });
        boolean hasBody = req.headers().contains("Content-Length") || req.headers().contains("Transfer-Encoding");
        String body = hasBody ? new String(req.body(), StandardCharsets.UTF_8) : null;
        r.put("body", body == null ? "undefined" : body);
        r.put("peer", peer(req.remoteAddress()));
        ObjectNode form = r.putObject("form");
        String ct = req.contentType();
        if (body != null && ct != null && ct.startsWith("application/x-www-form-urlencoded") && (req.method().equals("POST") || req.method().equals("PUT"))) {
            for (String pair : body.split("&")) {
                if (pair.isEmpty()) continue;
                int eq = pair.indexOf('=');
                form.put(formDecode(eq < 0 ? pair : pair.substring(0, eq)), eq < 0 ? "" : formDecode(pair.substring(eq + 1)));
            }
        }
        r.putObject("cookie");
        ObjectNode user = r.putObject("userCtx");
        user.put("db", db.name());
        if (req.user() != null && req.user().name() != null) user.put("name", req.user().name());
        else user.putNull("name");
        ArrayNode roles = user.putArray("roles");
        if (req.user() != null) req.user().roles().forEach(roles::add);
        r.set("secObj", db.security().json());
        return r;
    }

    private static String formDecode(String s) {
        try {
            return URLDecoder.decode(s, StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return s; // a stray '%' stays as sent
        }
    }

    /** The client's address without the port, as CouchDB's {@code peer}. */
    private static String peer(String remote) {
        String s = remote.startsWith("/") ? remote.substring(1) : remote;
        int colon = s.lastIndexOf(':');
        return colon > 0 && s.indexOf(':') == colon ? s.substring(0, colon) : s;
    }

    // ---------------------------------------------------------------- the response object

    /**
     * chttpd_external's {@code send_external_response}: {@code code} (else {@code defaultCode}),
     * then {@code json} (sent as JSON), {@code body} (text/html), or {@code base64} (binary), with
     * {@code headers}; {@code set} replaces headers of the same name (CouchDB's own: the ETag, the
     * new revision). A body that is not JSON gets CouchDB's {@code Content-Security-Policy: sandbox}
     * first. Any other member is an {@code external_response_error}.
     */
    static Response external(JsonNode resp, int defaultCode, List<Response.Header> set) {
        int code = defaultCode;
        JsonNode json = null;
        byte[] data = new byte[0];
        String ctype = Response.JSON;
        List<Response.Header> headers = new ArrayList<>();
        for (Map.Entry<String, JsonNode> e : resp.properties()) {
            JsonNode v = e.getValue();
            switch (e.getKey()) {
                case "code" -> code = v.asInt(defaultCode);
                case "stop" -> { }
                case "json" -> {
                    json = v;
                    ctype = Response.JSON;
                }
                case "body" -> {
                    data = v.asText().getBytes(StandardCharsets.UTF_8);
                    ctype = "text/html; charset=utf-8";
                }
                case "base64" -> {
                    try {
                        data = Base64.getMimeDecoder().decode(v.asText());
                    } catch (IllegalArgumentException x) {
                        throw new HttpError(500, "external_response_error", "Invalid base64 data from external server");
                    }
                    ctype = "application/binary";
                }
                case "headers" -> {
                    headers.clear();
                    if (v.isObject()) for (Map.Entry<String, JsonNode> h : v.properties()) headers.add(new Response.Header(h.getKey(), h.getValue().asText()));
                }
                default -> throw new HttpError(500, "external_response_error", "Invalid data from external server: {<<\"" + e.getKey() + "\">>," + v + "}");
            }
        }
        for (Response.Header s : set) headers.removeIf(h -> h.name().equalsIgnoreCase(s.name()));
        headers.addAll(set);
        if (headers.stream().noneMatch(h -> h.name().equalsIgnoreCase("Content-Type"))) headers.addFirst(new Response.Header("Content-Type", ctype));
        if (json != null) {
            byte[] b = Json.write(json).getBytes(StandardCharsets.UTF_8);
            byte[] body = java.util.Arrays.copyOf(b, b.length + 1);
            body[b.length] = '\n';
            return new Response.Full(code, List.copyOf(headers), body);
        }
        headers.addFirst(new Response.Header("Content-Security-Policy", "sandbox"));
        return new Response.Full(code, List.copyOf(headers), data);
    }
}

package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Request;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.json.Json;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/** CouchDB's request object for JavaScript functions: what show, list, update and filter functions get as {@code req}. */
final class JsonReqObject {
    private JsonReqObject() {}

    /**
     * CouchDB's {@code req} ({@code chttpd_external:json_req_obj}): the database's info, a fresh
     * uuid, the document id, method, paths, query (with {@code key}, {@code startkey},
     * {@code endkey} and {@code descending} decoded from JSON), headers without credentials
     * (CouchDB scrubs {@code Authorization}, {@code Cookie} and {@code X-Auth-CouchDB-Token}), the
     * body as text ({@code "undefined"} when none was sent), the peer, a form body's fields, no
     * cookies (scrubbed too), the user and the security object.
     */
    static ObjectNode of(Request req, SecuredDb db, String docId, String uuid, String body) {
        ObjectNode r = Json.NODES.objectNode();
        r.set("info", Json.MAPPER.valueToTree(DatabaseHandlers.info(db.info())));
        r.put("uuid", uuid);
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
}

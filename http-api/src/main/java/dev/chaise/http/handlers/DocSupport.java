package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.RevId;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.regex.Pattern;

/** What the document endpoints share: revisions and ids from the request, rows, locations. */
final class DocSupport {
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

    /** The {@code sincePos} of {@link dev.chaise.storage.DbReader#inlineAttachments} for a request: atts_since's newest position, attachments=true, or stubs. */
    static long attsSince(com.fasterxml.jackson.databind.JsonNode attsSince, boolean attachments) {
        if (attsSince != null && attsSince.isArray()) {
            long since = 0;
            for (var r : attsSince) if (r.isTextual()) since = Math.max(since, dev.chaise.storage.RevId.parse(r.textValue()).pos());
            return since;
        }
        return attachments ? 0 : -1;
    }

    /** The {@code Location} of a document: its absolute URL as the client reached the server ({@link Request#absoluteUri}). */
    static String location(Request req, String db, String id) {
        String path = "/" + encode(db) + "/";
        for (String prefix : List.of(DocumentJson.DESIGN_PREFIX, DocumentJson.LOCAL_PREFIX)) {
            if (id.startsWith(prefix)) return req.absoluteUri(path + prefix + encode(id.substring(prefix.length())));
        }
        return req.absoluteUri(path + encode(id));
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

    // ---------------------------------------------------------------- _local documents

    static void checkLocalRev(String rev) {
        if (rev != null && !LOCAL_REV.matcher(rev).matches()) throw StorageException.badRequest(RevId.INVALID);
    }
}

package dev.chaise.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.storage.json.Json;
import java.io.IOException;
import java.io.UncheckedIOException;

/** Query parameters parsed the way CouchDB's view/list endpoints parse them, with its error reasons. */
public final class Queries {
    private Queries() {}

    public static boolean bool(Request req, String name, boolean fallback) {
        String v = req.query(name);
        if (v == null) return fallback;
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw HttpError.queryParseError("Invalid boolean parameter: \"" + v + "\"");
        };
    }

    /** A non-negative integer ({@code limit}, {@code skip}). */
    public static long nonNegative(Request req, String name, long fallback) {
        String v = req.query(name);
        if (v == null) return fallback;
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw HttpError.queryParseError("Invalid value for integer: \"" + v + "\"");
        }
        if (n < 0) throw HttpError.queryParseError("Invalid value for positive integer: \"" + v + "\"");
        return n;
    }

    /** A JSON-encoded parameter ({@code startkey="a"}), or null if absent; bad JSON is 400 "invalid UTF-8 JSON". */
    public static JsonNode json(Request req, String name) {
        String v = req.query(name);
        if (v == null) return null;
        try {
            JsonNode n = Json.MAPPER.readTree(v);
            if (n == null || n.isMissingNode()) throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
            return n;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The first of several spellings that is present ({@code startkey}, {@code start_key}). */
    public static JsonNode json(Request req, String name, String alias) {
        JsonNode n = json(req, name);
        return n != null ? n : json(req, alias);
    }
}

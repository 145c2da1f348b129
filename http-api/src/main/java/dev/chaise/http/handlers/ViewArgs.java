package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.ErrorMapper;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.storage.json.Json;
import dev.chaise.views.query.ViewQuery;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads view query parameters ({@code _all_docs}, {@code _design_docs}, {@code _local_docs} and
 * {@code _view}) as couch_mrview_http reads them: first the POST body's members (already JSON),
 * then the query string (JSON-encoded keys), which wins. Errors are CouchDB's
 * {@code query_parse_error}s; {@link ViewQuery#validate} then checks them against the view.
 */
final class ViewArgs {
    private ViewArgs() {}

    static ViewQuery parse(Request req, ObjectNode body) {
        return parse(req, body, false);
    }

    /**
     * @param bodyWins {@code POST .../queries}: the query string is the base and each query's
     *     members override it (multi_query_view); elsewhere the query string wins
     */
    static ViewQuery parse(Request req, ObjectNode body, boolean bodyWins) {
        Builder b = new Builder();
        if (bodyWins) query(b, req);
        if (body != null) {
            for (Map.Entry<String, JsonNode> e : body.properties()) b.set(e.getKey(), e.getValue(), null);
        }
        if (!bodyWins) query(b, req);
        return b.build();
    }

    private static void query(Builder b, Request req) {
        for (Map.Entry<String, List<String>> e : req.query().entrySet()) {
            for (String v : e.getValue()) b.set(e.getKey(), null, v);
        }
    }

    private static final class Builder {
        List<JsonNode> keys;
        JsonNode key;
        JsonNode startKey;
        JsonNode endKey;
        Boolean reduce;
        Boolean group;
        Long groupLevel;
        ViewQuery.Update update = ViewQuery.Update.TRUE;
        boolean sorted = true;
        String startDocId;
        String endDocId;
        boolean inclusiveEnd = true;
        String partition;
        long limit = Long.MAX_VALUE;
        long skip;
        boolean descending;
        boolean includeDocs;
        Boolean conflicts;
        boolean updateSeq;

        /** One parameter: {@code json} from a body, or {@code text} from the query string. */
        void set(String name, JsonNode json, String text) {
            switch (name) {
                case "key" -> key = decode(json, text);
                case "keys" -> {
                    JsonNode k = decode(json, text);
                    if (!k.isArray()) throw HttpError.badRequest(json != null ? "`keys` member must be an array." : "`keys` parameter must be an array."); // couch_mrview_util
                    keys = new ArrayList<>();
                    k.forEach(keys::add);
                }
                case "startkey", "start_key" -> startKey = decode(json, text);
                case "endkey", "end_key" -> endKey = decode(json, text);
                case "startkey_docid", "start_key_doc_id" -> startDocId = docId(json, text, "start_key_docid");
                case "endkey_docid", "end_key_doc_id" -> endDocId = docId(json, text, "end_key_docid");
                case "limit" -> limit = positive(json, text);
                case "skip" -> skip = positive(json, text);
                case "descending" -> descending = bool(json, text);
                case "inclusive_end" -> inclusiveEnd = bool(json, text);
                case "include_docs" -> includeDocs = bool(json, text);
                case "conflicts" -> conflicts = bool(json, text);
                case "update_seq" -> updateSeq = bool(json, text);
                case "sorted" -> sorted = bool(json, text);
                case "attachments", "att_encoding_info" -> bool(json, text); // read by the include_docs renderer
                case "stable" -> { // ignored, as RFC E says; still validated as CouchDB does
                    String v = json != null ? json.asText() : text;
                    if (!v.equals("true") && !v.equals("false")) throw HttpError.queryParseError("Invalid value for `stable`.");
                }
                case "reduce" -> reduce = bool(json, text);
                case "group" -> group = bool(json, text);
                case "group_level" -> groupLevel = positive(json, text);
                case "stale" -> {
                    String v = json != null ? json.asText() : text;
                    if (v.equals("ok")) update = ViewQuery.Update.FALSE; // RFC E: stale=ok is update=false
                    else if (v.equals("update_after")) update = ViewQuery.Update.LAZY;
                    else throw HttpError.queryParseError("Invalid value for `stale`.");
                }
                case "update" -> {
                    String v = (json != null ? json.asText() : text).toLowerCase(Locale.ROOT);
                    update = switch (v) {
                        case "true" -> ViewQuery.Update.TRUE;
                        case "false" -> ViewQuery.Update.FALSE;
                        case "lazy" -> ViewQuery.Update.LAZY;
                        default -> throw HttpError.queryParseError("Invalid value for `update`.");
                    };
                }
                case "partition" -> {
                    partition = json != null ? json.asText() : text; // couch_mrview_http:parse_param
                    dev.chaise.storage.Partitions.validatePartition(partition);
                }
                default -> { } // CouchDB keeps unknown parameters as "extra" and ignores them
            }
        }

        ViewQuery build() {
            JsonNode s = key != null ? key : startKey;
            JsonNode e = key != null ? key : endKey;
            return new ViewQuery(keys, s, startDocId, e, endDocId, inclusiveEnd, descending, skip, limit, includeDocs,
                    conflicts, updateSeq, reduce, group, groupLevel, update, sorted, key != null, partition);
        }

        private static JsonNode decode(JsonNode json, String text) {
            if (json != null) return json;
            try {
                JsonNode n = Json.MAPPER.readTree(text);
                if (n == null || n.isMissingNode()) throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
                return n;
            } catch (java.io.IOException e) {
                throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
            }
        }

        private static String docId(JsonNode json, String text, String name) {
            if (json == null) return text;
            if (!json.isTextual()) throw HttpError.queryParseError("`" + name + "` must be a string.");
            return json.textValue();
        }

        private static boolean bool(JsonNode json, String text) {
            if (json != null && json.isBoolean()) return json.booleanValue();
            String v = json != null ? json.toString() : text;
            return switch (v.toLowerCase(Locale.ROOT)) {
                case "true" -> true;
                case "false" -> false;
                default -> throw HttpError.queryParseError("Invalid boolean parameter: " + (json != null ? v : "\"" + v + "\""));
            };
        }

        private static long positive(JsonNode json, String text) {
            long n;
            if (json != null) {
                if (!json.isIntegralNumber() || !json.canConvertToLong()) throw HttpError.queryParseError("Invalid value for integer: " + json);
                n = json.longValue();
            } else {
                try {
                    n = Long.parseLong(text);
                } catch (NumberFormatException e) {
                    throw HttpError.queryParseError("Invalid value for integer: \"" + text + "\"");
                }
            }
            if (n < 0) throw HttpError.queryParseError("Invalid value for positive integer: " + (json != null ? json.toString() : "\"" + text + "\""));
            return n;
        }
    }
}

package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.ErrorMapper;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.storage.json.Json;
import dev.chaise.views.mango.MangoException;
import dev.chaise.views.mango.Selector;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The parameters of {@code _changes}, parsed with CouchDB's rules and error reasons (all 400
 * {@code bad_request}). Only exactly {@code true} turns a flag on; unknown parameters are ignored.
 *
 * @param since the raw {@code since} ({@code Last-Event-ID} for an eventsource reconnection), quotes removed
 * @param limit {@link Long#MAX_VALUE} when not given
 * @param heartbeat milliseconds between heartbeats, or null for none
 * @param timeout milliseconds to wait for a change when there is no heartbeat
 * @param seqInterval emit {@code seq} only every this many rows, or null for every row
 */
record ChangesArgs(Feed feed, String since, boolean descending, long limit, boolean includeDocs, boolean conflicts,
                   boolean allDocsStyle, Long heartbeat, long timeout, Long seqInterval, String filterName, boolean attachments,
                   boolean attEncodingInfo) {
    /** {@code [chttpd] changes_timeout}: the default wait, and the longest one. */
    static final long DEFAULT_TIMEOUT_MS = 60_000;

    enum Feed { NORMAL, LONGPOLL, CONTINUOUS, EVENTSOURCE }

    /** What a change must pass to be sent. */
    sealed interface Filter {
        record None() implements Filter {}

        record DocIds(Set<String> ids) implements Filter {}

        record Design() implements Filter {}

        record Mango(Selector selector) implements Filter {}

        /** A JavaScript test ({@code filter=ddoc/name} or {@code filter=_view}), opened on the thread that streams. */
        record Js(java.util.function.Supplier<dev.chaise.views.DocFilters.DocFilter> open) implements Filter {}
    }

    static ChangesArgs parse(Request req) {
        Feed feed = switch (req.query("feed", "normal")) {
            case "normal" -> Feed.NORMAL;
            case "longpoll" -> Feed.LONGPOLL;
            case "continuous", "live" -> Feed.CONTINUOUS;
            case "eventsource" -> Feed.EVENTSOURCE;
            default -> throw HttpError.badRequest("Supported `feed` types: normal, continuous, live, longpoll, eventsource");
        };
        String since = req.query("since", "0");
        if (req.query("last-event-id") != null) since = req.query("last-event-id");
        // A browser's EventSource reconnects with the last id it saw.
        if (feed == Feed.EVENTSOURCE && req.header("Last-Event-ID") != null) since = req.header("Last-Event-ID");
        since = DocSupport.unquote(since.strip());

        long limit = Long.MAX_VALUE;
        if (req.query("limit") != null) {
            limit = integer(req.query("limit"), "The limit parameter should be a non-negative integer");
            // CouchDB counts a negative limit down and never reaches zero: every change (measured on 3.5.0).
            if (limit < 0) limit = Long.MAX_VALUE;
        }
        Long heartbeat = null;
        String hb = req.query("heartbeat");
        if (hb != null) {
            if (hb.equals("true")) {
                heartbeat = DEFAULT_TIMEOUT_MS;
            } else {
                long v = integer(hb, "Invalid heartbeat value. Expecting a positive integer value (in milliseconds).");
                if (v <= 0) throw HttpError.badRequest("The heartbeat value should be a positive integer (in milliseconds).");
                heartbeat = Math.min(v, DEFAULT_TIMEOUT_MS);
            }
        }
        long timeout = DEFAULT_TIMEOUT_MS;
        if (req.query("timeout") != null) {
            long v = integer(req.query("timeout"), "The timeout parameter should be a non-negative integer");
            if (v < 0) throw HttpError.badRequest("The timeout value should be a non-negative integer");
            timeout = Math.min(v, DEFAULT_TIMEOUT_MS);
        }
        Long seqInterval = null;
        if (req.query("seq_interval") != null) {
            long v;
            try {
                v = Long.parseLong(req.query("seq_interval"));
            } catch (NumberFormatException e) {
                v = 0;
            }
            if (v <= 0) throw HttpError.badRequest("invalid_seq_interval");
            seqInterval = v;
        }
        String style = req.query("style", "main_only");
        if (!style.equals("main_only") && !style.equals("all_docs")) throw HttpError.badRequest("`style` must be main_only or all_docs");
        return new ChangesArgs(feed, since, "true".equals(req.query("descending")), limit, "true".equals(req.query("include_docs")),
                "true".equals(req.query("conflicts")), style.equals("all_docs"), heartbeat, timeout, seqInterval, req.query("filter"),
                "true".equals(req.query("attachments")), "true".equals(req.query("att_encoding_info")));
    }

    private static long integer(String v, String reason) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw HttpError.badRequest(reason);
        }
    }

    /**
     * The built-in filters. Design-document filters ({@code ddoc/name}) and {@code _view} are
     * resolved by the handler, which must read the design document; this answers null for them.
     */
    Filter builtInFilter(Request req, ObjectNode body) {
        String f = filterName;
        if (f == null || f.isEmpty()) return new Filter.None();
        return switch (f) {
            case "_doc_ids" -> new Filter.DocIds(docIds(req, body));
            case "_design" -> new Filter.Design();
            case "_selector" -> {
                if (!req.method().equals("POST")) throw HttpError.badRequest("Selector must be specified in POST payload");
                JsonNode sel = body == null ? null : body.get("selector");
                if (sel == null || !sel.isObject()) throw HttpError.badRequest("Selector error: expected a JSON object");
                JsonNode fields = body.get("fields");
                if (fields != null && !fields.isArray()) throw HttpError.badRequest("Selector error: fields must be JSON array");
                try {
                    yield new Filter.Mango(Selector.parse(sel));
                } catch (MangoException e) {
                    throw HttpError.badRequest(e.reason());
                }
            }
            default -> null;
        };
    }

    private static Set<String> docIds(Request req, ObjectNode body) {
        JsonNode ids;
        if (req.method().equals("POST")) {
            ids = body == null ? null : body.get("doc_ids");
        } else {
            String q = req.query("doc_ids");
            try {
                ids = q == null ? null : Json.MAPPER.readTree(q);
            } catch (Exception e) {
                throw HttpError.badRequest(ErrorMapper.INVALID_JSON);
            }
        }
        String reason = "`doc_ids` filter parameter is not a list of doc ids.";
        if (ids == null || !ids.isArray()) throw HttpError.badRequest(reason);
        Set<String> out = new LinkedHashSet<>();
        for (JsonNode id : ids) {
            if (!id.isTextual()) throw HttpError.badRequest(reason);
            out.add(id.textValue());
        }
        return out;
    }
}

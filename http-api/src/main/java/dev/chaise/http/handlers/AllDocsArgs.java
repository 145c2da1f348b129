package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.views.query.ViewQuery;
import java.util.List;

/**
 * The parameters of {@code _all_docs}, {@code _design_docs} and {@code _local_docs}: a view query
 * on a map-only view whose keys are doc ids.
 *
 * @param keys null unless {@code keys} was given
 * @param startKey {@code startkey}, else {@code startkey_docid} as a string; null if neither
 * @param limit {@link Long#MAX_VALUE} if not given
 * @param partition the partition a partitioned database's query keeps to, or null
 */
record AllDocsArgs(List<JsonNode> keys, JsonNode startKey, JsonNode endKey, boolean inclusiveEnd, long limit, long skip,
                   boolean descending, boolean includeDocs, boolean conflicts, boolean updateSeq, boolean attachments,
                   boolean attEncodingInfo, String partition) {

    /** As a list function over {@code _all_docs} reads it: no partition, no query limit. */
    static AllDocsArgs parse(Request req, ObjectNode body) {
        return parse(req, body, false, false, null);
    }

    /**
     * @param bodyWins one query of {@code .../queries}: its members override the query string
     * @param partitioned whether the database is: only then is {@code partition} a parameter
     * @param limits the server's query limits, or null for none
     */
    static AllDocsArgs parse(Request req, ObjectNode body, boolean bodyWins, boolean partitioned, QueryLimits limits) {
        // chttpd_db's own check, before the view arguments' (whose message differs)
        if (body != null && body.has("keys") && !body.get("keys").isArray()) throw HttpError.badRequest("`keys` body member must be an array.");
        ViewQuery q = ViewArgs.parse(req, body, bodyWins);
        q.validate(false);
        // couch_mrview_util:validate_all_docs_args
        if (q.partition() != null && !partitioned) throw HttpError.queryParseError("`partition` parameter is not supported on this db");
        if (limits != null) q = limits.apply(q);
        JsonNode s = q.startKey() != null ? q.startKey() : q.startDocId() == null ? null : TextNode.valueOf(q.startDocId());
        JsonNode e = q.endKey() != null ? q.endKey() : q.endDocId() == null ? null : TextNode.valueOf(q.endDocId());
        return new AllDocsArgs(q.keys(), s, e, q.keyGiven() || q.inclusiveEnd(), q.limit(), q.skip(), q.descending(), q.includeDocs(),
                Boolean.TRUE.equals(q.conflicts()), q.updateSeq(), ViewHandlers.flag(req, body, "attachments"),
                ViewHandlers.flag(req, body, "att_encoding_info"), q.partition());
    }
}

package dev.chaise.http.handlers;

import dev.chaise.http.HttpError;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.views.query.ViewQuery;

/**
 * {@code [query_server_config] query_limit} and {@code partition_query_limit}, as
 * {@code couch_mrview_util:apply_limit} applies them to {@code _all_docs} and view queries: a
 * query that names no limit gets the setting's, one that names more is 400. A partition's query
 * (only a partitioned view answers one) is held to {@code partition_query_limit}.
 */
record QueryLimits(ConfigStore config) {

    ViewQuery apply(ViewQuery q) {
        String key = q.partition() != null ? "partition_query_limit" : "query_limit";
        String v = config == null ? null : config.get("query_server_config", key).map(String::strip).orElse(null);
        if (v == null || v.equals("infinity")) return q;
        long max;
        try {
            max = Long.parseLong(v);
        } catch (NumberFormatException e) {
            return q; // CouchDB would crash on it; a bad setting limits nothing here
        }
        if (q.limit() == Long.MAX_VALUE) return q.withLimit(max);
        if (q.limit() > max) throw HttpError.queryParseError("Limit is too large, must not exceed " + max);
        return q;
    }
}

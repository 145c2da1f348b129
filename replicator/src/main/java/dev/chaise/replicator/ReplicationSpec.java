package dev.chaise.replicator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import dev.chaise.views.mango.MangoException;
import dev.chaise.views.mango.Selector;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A replication as {@code _replicate} or a {@code _replicator} document asks for it, parsed as
 * {@code couch_replicator_parse} parses it, with CouchDB's errors.
 *
 * @param json the request or document as given (kept in the job, so any server can run it)
 * @param docIds sorted, unique and percent-decoded, as CouchDB keeps them
 * @param createTargetParams {@code create_target_params}, or null
 * @param queryParams the filter's {@code query_params} ({} when none)
 * @param cancelId with {@code cancel}: the replication named by {@code replication_id}, or null
 */
public record ReplicationSpec(JsonNode json, Endpoint source, Endpoint target, RepUser user,
                              boolean continuous, boolean createTarget, ObjectNode createTargetParams,
                              boolean cancel, String cancelId,
                              List<String> docIds, JsonNode selector, String filter, ObjectNode queryParams, JsonNode sinceSeq,
                              boolean useCheckpoints, long checkpointIntervalMs, boolean useBulkGet, boolean winningRevsOnly,
                              int workerProcesses, int workerBatchSize, int httpConnections, long connectionTimeoutMs, int retries) {

    /** Who a replication runs as: the requester of {@code _replicate}, or a document's {@code user_ctx}. */
    public record RepUser(String name, List<String> roles) {
        public static final RepUser NONE = new RepUser(null, List.of());

        public RepUser {
            roles = List.copyOf(roles);
        }

        public boolean isAdmin() {
            return roles.contains("_admin");
        }
    }

    /**
     * How local names and defaults are read: the loopback URL CouchDB 3 would make of a local
     * name, and the request's credentials headers it would copy (both null for a document).
     */
    public record Context(String loopbackBase, String authorization, String cookie, boolean localNames, Defaults defaults) {}

    /** {@code [replicator]} settings that are a replication's defaults. */
    public record Defaults(int workerProcesses, int workerBatchSize, int httpConnections, long connectionTimeoutMs, int retries,
                           long checkpointIntervalMs, boolean useCheckpoints, boolean useBulkGet) {
        public static Defaults couchdb() {
            return new Defaults(4, 500, 20, 30_000, 5, 30_000, true, true);
        }
    }

    /** Parses; throws {@link ReplicationException} with CouchDB's error for what it refuses. */
    public static ReplicationSpec parse(JsonNode body, RepUser user, Context ctx) {
        if (body == null || !body.isObject()) throw ReplicationException.badRequest("Request body must be a JSON object");
        Defaults d = ctx.defaults();
        // convert_options: each known option checked, unknown ones skipped
        boolean cancel = bool(body, "cancel", false);
        String cancelId = null;
        for (String k : List.of("_local_id", "replication_id", "id")) {
            JsonNode v = body.get(k);
            if (v != null && v.isTextual()) cancelId = v.textValue().replace(' ', '+');
        }
        boolean createTarget = bool(body, "create_target", false);
        ObjectNode ctParams = null;
        if (body.has("create_target_params")) {
            if (!body.get("create_target_params").isObject()) throw ReplicationException.badRequest("parameter `create_target_params` must be a JSON object");
            ctParams = (ObjectNode) body.get("create_target_params");
        }
        boolean winning = bool(body, "winning_revs_only", false);
        boolean continuous = bool(body, "continuous", false);
        String filter = null;
        if (body.has("filter") && !body.get("filter").isNull()) {
            if (!body.get("filter").isTextual()) throw ReplicationException.badRequest("`filter` must be a string");
            filter = body.get("filter").textValue();
        }
        ObjectNode qp = Json.NODES.objectNode();
        if (body.has("query_params")) {
            if (!body.get("query_params").isObject()) throw ReplicationException.badRequest("parameter `query_params` must be an object");
            qp = (ObjectNode) body.get("query_params");
            for (Map.Entry<String, JsonNode> e : qp.properties()) {
                if (!e.getValue().isTextual()) throw ReplicationException.badRequest(e.getKey() + " value must be a string.");
            }
        }
        List<String> docIds = null;
        JsonNode ids = body.get("doc_ids");
        if (ids != null && !ids.isNull()) {
            if (!ids.isArray()) throw ReplicationException.badRequest("parameter `doc_ids` must be an array");
            TreeSet<String> set = new TreeSet<>(Endpoint::compareBytes);
            for (JsonNode id : ids) {
                if (!id.isTextual()) throw ReplicationException.badRequest("parameter `doc_ids` must be an array of strings");
                set.add(unquote(id.textValue()));
            }
            docIds = List.copyOf(set);
        }
        JsonNode selector = null;
        if (body.has("selector")) {
            if (!body.get("selector").isObject()) throw ReplicationException.badRequest("parameter `selector` must be a JSON object");
            selector = body.get("selector");
        }
        int workers = integer(body, "worker_processes", d.workerProcesses(), 1, 64);
        int batch = integer(body, "worker_batch_size", d.workerBatchSize(), 1, 10_000);
        int conns = integer(body, "http_connections", d.httpConnections(), 1, 1000);
        long timeout = integer(body, "connection_timeout", (int) d.connectionTimeoutMs(), 1000, Integer.MAX_VALUE);
        int retries = integer(body, "retries_per_request", d.retries(), 0, 100);
        JsonNode since = body.has("since_seq") ? body.get("since_seq") : null;
        boolean useCheckpoints = body.has("use_checkpoints") ? !(body.get("use_checkpoints").isBoolean() && !body.get("use_checkpoints").booleanValue()) : d.useCheckpoints();
        boolean useBulkGet = bool(body, "use_bulk_get", d.useBulkGet());
        long checkpointInterval = integer(body, "checkpoint_interval", (int) Math.min(Integer.MAX_VALUE, d.checkpointIntervalMs()), 100, Integer.MAX_VALUE);
        int exclusive = (docIds != null ? 1 : 0) + (filter != null ? 1 : 0) + (selector != null ? 1 : 0);
        if (exclusive > 1) throw ReplicationException.badRequest("`doc_ids`,`filter`,`selector` are mutually exclusive");

        if (cancel && cancelId != null) {
            return new ReplicationSpec(body, null, null, user, continuous, createTarget, ctParams, true, cancelId, docIds, selector, filter, qp,
                    since, useCheckpoints, checkpointInterval, useBulkGet, winning, workers, batch, conns, timeout, retries);
        }
        Endpoint source = endpoint(body.get("source"), ctx);
        Endpoint target = endpoint(body.get("target"), ctx);
        if (filter != null) {
            if (filter.equals("_view")) {
                String view = qp.path("view").asText("");
                if (view.split("/", -1).length != 2) throw ReplicationException.badRequest("Invalid `view` parameter.");
            } else if (!filter.startsWith("_") && filter.indexOf('/') < 0) {
                throw ReplicationException.badRequest("Invalid filter. Must match `ddocname/filtername`.");
            } else if (filter.startsWith("_") && !filter.equals("_doc_ids") && !filter.equals("_selector") && !filter.equals("_design")) {
                throw ReplicationException.badRequest("unknown builtin filter name");
            }
        }
        if (selector != null) {
            try {
                Selector.parse(selector);
            } catch (MangoException e) {
                throw ReplicationException.badRequest(e.reason());
            }
        }
        return new ReplicationSpec(body, source, target, user, continuous, createTarget, ctParams, cancel, null, docIds, selector, filter, qp,
                since, useCheckpoints, checkpointInterval, useBulkGet, winning, workers, batch, conns, timeout, retries);
    }

    /** The selector as CouchDB hashes it: normalized, with dotted paths. */
    JsonNode normalizedSelector() {
        return Selector.parse(selector).toJson();
    }

    /** A JavaScript filter in a design document ({@code ddoc/name}), as opposed to a built-in one. */
    boolean userFilter() {
        return filter != null && !filter.startsWith("_");
    }

    private static Endpoint endpoint(JsonNode v, Context ctx) {
        if (v == null || v.isNull()) throw ReplicationException.badRequest("Missing replicator database");
        if (v.isTextual()) {
            String s = v.textValue();
            // Another scheme is a URL the replicator cannot use, not a database name (CouchDB 3's
            // _replicate would take it for a local name and answer db_not_found).
            if (Endpoint.isUrl(s) || s.matches("[A-Za-z][A-Za-z0-9+.-]*://.*")) return Endpoint.remote(s, null, null);
            if (!ctx.localNames()) throw Endpoint.invalidUrl();
            return Endpoint.local(s, ctx.loopbackBase(), ctx.authorization(), ctx.cookie());
        }
        if (v.isObject()) {
            JsonNode url = v.get("url");
            if (url == null || !url.isTextual()) throw Endpoint.invalidUrl();
            if (!Endpoint.isUrl(url.textValue()) && ctx.localNames()) {
                return Endpoint.local(url.textValue(), ctx.loopbackBase(), ctx.authorization(), ctx.cookie());
            }
            return Endpoint.remote(url.textValue(), v.get("auth"), v.get("headers"));
        }
        throw Endpoint.invalidUrl();
    }

    private static boolean bool(JsonNode body, String name, boolean dflt) {
        JsonNode v = body.get(name);
        if (v == null) return dflt;
        if (!v.isBoolean()) throw ReplicationException.badRequest("parameter `" + name + "` must be a boolean");
        return v.booleanValue();
    }

    /** couch_util:to_integer: a number or a string of digits. */
    private static int integer(JsonNode body, String name, int dflt, int min, int max) {
        JsonNode v = body.get(name);
        if (v == null) return dflt;
        long n;
        if (v.isIntegralNumber()) n = v.longValue();
        else if (v.isTextual() && v.textValue().matches("-?[0-9]{1,18}")) n = Long.parseLong(v.textValue());
        else throw ReplicationException.badRequest("parameter `" + name + "` must be an integer");
        if (n < min || n > max) throw ReplicationException.badRequest("parameter `" + name + "` must be between " + min + " and " + max);
        return (int) n;
    }

    private static String unquote(String id) {
        try {
            return URLDecoder.decode(id.replace("+", "%2B"), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return id;
        }
    }
}

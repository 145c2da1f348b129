package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.HttpError;
import dev.chaise.http.Queries;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.Storage;
import dev.chaise.storage.StorageException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/** Server-level endpoints: {@code /}, {@code _up}, {@code _uuids}, {@code _all_dbs}, {@code _dbs_info}, {@code _membership}, {@code _active_tasks}. */
public final class ServerHandlers {
    /** CouchDB 3.5's feature names that Chaise serves ({@code access-ready}: couch_server enables it always). */
    static final List<String> FEATURES = List.of("access-ready", "partitioned", "scheduler");
    /** CouchDB's max_db_number_for_dbs_info_req. */
    static final int MAX_DBS_INFO_KEYS = 100;

    private final java.util.function.Supplier<HttpConfig> config;
    private final Storage storage;
    private final String uuid;
    private final java.util.function.Supplier<List<dev.chaise.views.ActiveTasks.Info>> tasks;
    /** Tasks of other kinds (replications), already in CouchDB's shape. */
    private volatile java.util.function.Supplier<? extends List<?>> otherTasks = List::of;
    /** Features the configuration switches ({@code nouveau}), listed before the others as chttpd_misc:get_features does. */
    private volatile java.util.function.Supplier<List<String>> switchedFeatures = List::of;

    private final java.util.function.Supplier<String> unusable;
    private final Uuids uuids;

    /** @param unusable why storage cannot serve now, or null when it can: {@code /_up} answers 503 with it */
    public ServerHandlers(java.util.function.Supplier<HttpConfig> config, Storage storage, String uuid,
                          java.util.function.Supplier<List<dev.chaise.views.ActiveTasks.Info>> tasks, java.util.function.Supplier<String> unusable,
                          Uuids uuids) {
        this.uuids = uuids;
        this.unusable = unusable;
        this.tasks = tasks;
        this.config = config;
        this.storage = storage;
        this.uuid = uuid;
    }

    public void register(Router r) {
        r.add("GET", "/", this::welcome);
        r.add("GET", "/_up", req -> {
            String reason = unusable.get();
            // "status" as in the 200's body, for monitors that read only that.
            if (reason != null) throw new HttpError(503, "service_unavailable", reason).withMember("status", "error");
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("status", "ok");
            body.put("seeds", Map.of());
            return Response.json(200, body);
        });
        r.add("GET", "/_uuids", this::uuids);
        r.add("GET", "/_all_dbs", this::allDbs);
        r.add("GET", "/_dbs_info", this::dbsInfoList);
        r.add("POST", "/_dbs_info", this::dbsInfo);
        r.add("GET", "/_membership", this::membership);
        r.add("GET", "/_active_tasks", req -> {
            Access.requireServerAdmin(req);
            List<Map<String, Object>> out = new java.util.ArrayList<>();
            for (var t : tasks.get()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("type", "indexer");
                m.put("node", config.get().nodeName());
                m.put("pid", "<0.0.0>");
                m.put("database", t.database());
                m.put("design_document", t.designDocument());
                m.put("changes_done", t.changesDone());
                m.put("total_changes", t.totalChanges());
                m.put("progress", t.progress());
                m.put("started_on", t.startedOn());
                m.put("updated_on", t.updatedOn());
                out.add(m);
            }
            List<Object> all = new java.util.ArrayList<>(out);
            all.addAll(otherTasks.get());
            return Response.json(200, all);
        });
        // Fauxton's release has no favicon.ico (its pages name their own icon).
        r.add("GET", "/favicon.ico", req -> {
            throw HttpError.notFound("missing");
        });
    }

    /** Features to list in {@code GET /} while the configuration has them on. */
    public void switchedFeatures(java.util.function.Supplier<List<String>> supplier) {
        this.switchedFeatures = supplier;
    }

    /** Adds tasks of another kind to {@code _active_tasks}. */
    public void otherTasks(java.util.function.Supplier<? extends List<?>> supplier) {
        this.otherTasks = supplier;
    }

    private Response welcome(Request req) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("couchdb", "Welcome");
        body.put("version", HttpConfig.COUCHDB_VERSION);
        body.put("git_sha", config.get().gitSha());
        body.put("uuid", uuid);
        // Only the features this server has, as CouchDB 3.5 names them: Fauxton picks its screens and
        // APIs by them ("scheduler": the _scheduler endpoints and the replicator behind them).
        List<String> switched = switchedFeatures.get();
        body.put("features", switched.isEmpty() ? FEATURES : java.util.stream.Stream.concat(switched.stream(), FEATURES.stream()).toList());
        body.put("vendor", Map.of("name", "Chaise", "version", config.get().vendorVersion()));
        return Response.json(200, body);
    }

    private Response uuids(Request req) {
        String countParam = req.query("count", "1");
        int count;
        try {
            count = Integer.parseInt(countParam);
        } catch (NumberFormatException e) {
            throw HttpError.badRequest("count must be a positive integer");
        }
        if (count > config.get().maxUuidCount()) throw HttpError.badRequest("count parameter too large");
        if (count < 0) throw HttpError.badRequest("count must be a positive integer");
        List<String> ids = new ArrayList<>(count);
        for (int i = 0; i < count; i++) ids.add(uuids.next());
        return Response.json(200, Map.of("uuids", ids))
                .withHeader("Cache-Control", "no-cache")
                .withHeader("Expires", "Mon, 01 Jan 1990 00:00:00 GMT") // in the past on purpose, as CouchDB
                .withHeader("Pragma", "no-cache")
                .withHeader("ETag", etag(ids.toString()));
    }

    private Response membership(Request req) {
        Access.requireServerAdmin(req);
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("all_nodes", List.of(config.get().nodeName()));
        body.put("cluster_nodes", List.of(config.get().nodeName()));
        return Response.json(200, body);
    }

    private void requireListAccess(Request req) {
        if (config.get().adminOnlyAllDbs()) Access.requireServerAdmin(req);
    }

    private Response allDbs(Request req) {
        requireListAccess(req);
        return Response.json(200, listNames(req));
    }

    private Response dbsInfoList(Request req) {
        requireListAccess(req);
        List<Object> out = new ArrayList<>();
        for (String name : listNames(req)) {
            try {
                out.add(Map.of("key", name, "info", DatabaseHandlers.info(storage.listedInfo(name, req.user()))));
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.NOT_FOUND) throw e; // deleted meanwhile
            }
        }
        return Response.json(200, out);
    }

    private Response dbsInfo(Request req) {
        requireListAccess(req);
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode keys = body.get("keys");
        if (keys == null) throw HttpError.badRequest("`keys` member must exist.");
        if (!keys.isArray()) throw HttpError.badRequest("`keys` member must be an array.");
        if (keys.size() > MAX_DBS_INFO_KEYS) throw HttpError.badRequest("too_many_keys");
        List<Object> out = new ArrayList<>();
        for (JsonNode k : keys) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("key", k);
            try {
                if (!k.isTextual()) throw StorageException.notFound("not a name");
                row.put("info", DatabaseHandlers.info(storage.listedInfo(k.asText(), req.user())));
            } catch (StorageException e) {
                if (e.kind() != StorageException.Kind.NOT_FOUND && e.kind() != StorageException.Kind.ILLEGAL_DATABASE_NAME) throw e;
                row.put("error", "not_found");
            }
            out.add(row);
        }
        return Response.json(200, out);
    }

    /** {@code _all_dbs}'s names: startkey/endkey (JSON), limit, skip, descending, inclusive_end. */
    private List<String> listNames(Request req) {
        boolean descending = Queries.bool(req, "descending", false);
        boolean inclusiveEnd = Queries.bool(req, "inclusive_end", true);
        long limit = Queries.nonNegative(req, "limit", Long.MAX_VALUE);
        long skip = Queries.nonNegative(req, "skip", 0);
        JsonNode start = Queries.json(req, "startkey", "start_key");
        JsonNode end = Queries.json(req, "endkey", "end_key");
        if (limit == 0) return List.of();
        // Non-string keys bound by where CouchDB collates them: null, booleans and numbers before every
        // string, arrays and objects after.
        Bound s = bound(start, !descending);
        Bound e = bound(end, descending);
        if (s.empty || e.empty) return List.of();
        int lim = limit >= Integer.MAX_VALUE - 1 ? 0 : (int) limit + (inclusiveEnd ? 0 : 1);
        List<String> names = new ArrayList<>(storage.list(s.name, e.name, descending, (int) Math.min(skip, Integer.MAX_VALUE), lim));
        if (!inclusiveEnd && e.name != null && !names.isEmpty() && names.get(names.size() - 1).equals(e.name)) names.remove(names.size() - 1);
        if (names.size() > limit) return names.subList(0, (int) limit);
        return names;
    }

    private record Bound(String name, boolean empty) {}

    /** @param isLower whether the key bounds from below in name order */
    private static Bound bound(JsonNode key, boolean isLower) {
        if (key == null) return new Bound(null, false);
        if (key.isTextual()) return new Bound(key.asText(), false);
        boolean beforeStrings = key.isNull() || key.isBoolean() || key.isNumber();
        // A lower bound before all strings bounds nothing; an upper bound before all strings admits nothing.
        return isLower == beforeStrings ? new Bound(null, false) : new Bound(null, true);
    }

    static String etag(String s) {
        try {
            byte[] d = MessageDigest.getInstance("MD5").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return "\"" + HexFormat.of().formatHex(d) + "\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

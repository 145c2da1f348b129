package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.config.HttpConfig;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.auth.ServerAdmins;
import dev.chaise.http.metrics.Metrics;
import dev.chaise.views.collation.ViewCollation;
import dev.chaise.views.js.JsEngine;
import java.util.Map;
import java.util.Set;

/**
 * {@code /_node/{node}}: its {@code _config}, and {@code _stats}, {@code _prometheus},
 * {@code _system} and {@code _versions} (admins only, as in CouchDB). As in CouchDB every key may be read and changed
 * except in the blacklisted sections; unknown keys are kept. A change takes effect at once where
 * Chaise reads the key at run time (default.ini marks those "live"), otherwise at the next start,
 * as CouchDB's port or storage settings do. {@code POST _config/_reload} reads the files again.
 *
 * <p>As CouchDB 3.5.0's {@code chttpd_node}: {@code [chttpd] config_whitelist} is kept but not
 * enforced (only the node-local {@code /_config} handler that 3.x no longer serves read it), and
 * {@code ?raw=true} is ignored: an {@code [admins]} value is stored as its hash unless it already
 * is one, which is what CouchDB's password hasher makes of it too.
 */
public final class NodeHandlers {
    /** CouchDB's sections that may never be changed over HTTP. */
    private static final Set<String> BLACKLIST = Set.of("daemons", "external", "httpd_design_handlers", "httpd_db_handlers",
            "httpd_global_handlers", "native_query_servers", "os_daemons", "query_servers", "feature_flags");

    private final java.util.function.Supplier<HttpConfig> config;
    private final ConfigStore store;
    private final Metrics metrics;
    private final java.util.function.Supplier<Map<String, Object>> system;
    private final java.util.Optional<JsEngine.About> javascript;

    /**
     * @param metrics what {@code _stats} and {@code _prometheus} show
     * @param system what {@code _system} shows
     * @param javascript the engine that runs design documents' functions, for {@code _versions}
     */
    public NodeHandlers(java.util.function.Supplier<HttpConfig> config, ConfigStore store, Metrics metrics,
                        java.util.function.Supplier<Map<String, Object>> system, java.util.Optional<JsEngine.About> javascript) {
        this.config = config;
        this.store = store;
        this.metrics = metrics;
        this.system = system;
        this.javascript = javascript;
    }

    public void register(Router r) {
        r.add("GET", "/_node/{node}", req -> {
            Access.requireServerAdmin(req);
            node(req);
            return Response.json(200, Map.of("name", config.get().nodeName()));
        });
        r.add("GET", "/_node/{node}/_config", req -> {
            admin(req);
            return Response.json(200, store.all());
        });
        r.add("GET", "/_node/{node}/_config/{section}", req -> {
            admin(req);
            return Response.json(200, store.section(req.param("section")));
        });
        r.add("GET", "/_node/{node}/_config/{section}/{key}", req -> {
            admin(req);
            return Response.json(200, store.get(req.param("section"), req.param("key")).orElseThrow(NodeHandlers::unknown));
        });
        r.add("GET", "/_node/{node}/_stats", req -> {
            admin(req);
            return Response.json(200, metrics.statsTree());
        });
        r.add("GET", "/_node/{node}/_stats/{path...}", req -> {
            admin(req);
            Object node = metrics.statsTree();
            for (String part : req.param("path").split("/")) {
                if (part.isEmpty()) continue;
                node = node instanceof Map<?, ?> m ? m.get(part) : null;
                if (node == null) throw HttpError.notFound("Unknown stat: " + req.param("path"));
            }
            return Response.json(200, node);
        });
        r.add("GET", "/_node/{node}/_prometheus", req -> {
            admin(req);
            return new Response.Full(200, java.util.List.of(new Response.Header("Content-Type", Metrics.PROMETHEUS_CONTENT_TYPE)),
                    metrics.prometheus().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        });
        r.add("GET", "/_node/{node}/_system", req -> {
            admin(req);
            return Response.json(200, system.get());
        });
        r.add("GET", "/_node/{node}/_versions", req -> {
            admin(req);
            return Response.json(200, versions());
        });
        for (String method : java.util.List.of("PUT", "POST", "DELETE")) {
            r.add(method, "/_node/{node}/_versions", req -> {
                admin(req);
                throw HttpError.methodNotAllowed("GET");
            });
        }
        r.add("POST", "/_node/{node}/_config/_reload", req -> {
            admin(req);
            try {
                store.reload();
            } catch (java.io.UncheckedIOException | IllegalArgumentException e) {
                throw HttpError.badRequest(String.valueOf(e.getMessage()));
            }
            return Response.json(200, Response.OK);
        });
        // Below a key there is nothing (chttpd_node), whatever the method; not a database's attachment.
        for (String method : java.util.List.of("GET", "PUT", "POST", "DELETE")) {
            r.add(method, "/_node/{node}/_config/{section}/{key}/{rest...}", req -> {
                admin(req);
                throw HttpError.notFound("missing");
            });
        }
        r.add("PUT", "/_node/{node}/_config/{section}/{key}", this::put);
        r.add("DELETE", "/_node/{node}/_config/{section}/{key}", this::delete);
    }

    /**
     * chttpd_node:get_versions, with what runs here: the JavaScript engine ({@code graaljs}, where
     * CouchDB names {@code quickjs} or {@code spidermonkey}), the collation library ({@code icu4j},
     * ICU for Java, where CouchDB links {@code libicu}) with its three versions, and, as there is no
     * Erlang, the Java runtime's version under {@code java} instead of {@code erlang}.
     */
    private Map<String, Object> versions() {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        javascript.ifPresent(js -> {
            Map<String, Object> engine = new java.util.LinkedHashMap<>();
            engine.put("name", js.name());
            if (js.version() != null) engine.put("version", js.version());
            out.put("javascript_engine", engine);
        });
        out.put("java", Map.of("version", Runtime.version().toString()));
        ViewCollation.Versions icu = ViewCollation.versions();
        Map<String, Object> collation = new java.util.LinkedHashMap<>();
        collation.put("name", "icu4j");
        collation.put("library_version", icu.library());
        collation.put("collator_version", icu.collator());
        collation.put("collation_algorithm_version", icu.algorithm());
        out.put("collation_driver", collation);
        return out;
    }

    private void admin(Request req) {
        Access.requireServerAdmin(req);
        node(req);
    }

    /** {@code _local} or this node's name; any other node does not exist here. */
    private void node(Request req) {
        String n = req.param("node");
        if (!n.equals("_local") && !n.equals(config.get().nodeName())) throw HttpError.notFound("no such node: " + n);
    }

    private static HttpError unknown() {
        return HttpError.notFound("unknown_config_value");
    }

    private static void checkWritable(String section, String key) {
        if (BLACKLIST.contains(section)) throw HttpError.forbidden("Config section blacklisted for modification over HTTP API.");
    }

    private Response put(Request req) {
        admin(req);
        String section = req.param("section");
        String key = req.param("key");
        checkWritable(section, key);
        JsonNode body = Bodies.json(req);
        if (!body.isTextual()) throw HttpError.badRequest("a JSON string expected");
        String value = body.asText().strip();
        if (section.equals(ServerAdmins.SECTION)) value = ServerAdmins.stored(value, config.get().auth());
        String old = store.get(section, key).orElse("");
        store.set(section, key, value, persist(req));
        return Response.json(200, old);
    }

    private Response delete(Request req) {
        admin(req);
        String section = req.param("section");
        String key = req.param("key");
        checkWritable(section, key);
        String old = store.get(section, key).orElseThrow(NodeHandlers::unknown);
        store.delete(section, key, persist(req));
        return Response.json(200, old);
    }

    private static boolean persist(Request req) {
        return !"false".equals(req.header("X-Couch-Persist"));
    }
}

package dev.chaise.http;

import dev.chaise.http.config.ConfigStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * CouchDB's CORS, read from the live config on every request so {@code PUT
 * /_node/_local/_config/cors/...} applies at once: {@code [chttpd] enable_cors} (or {@code
 * [httpd]}), and {@code [cors] origins, credentials, methods, headers, exposed_headers, max_age}.
 * An accepted origin is echoed back, never {@code *}, as CouchDB does.
 */
final class Cors {
    private static final List<String> SUPPORTED_HEADERS = List.of("accept", "accept-language", "authorization", "content-length",
            "content-range", "content-type", "destination", "expires", "if-match", "last-modified", "origin", "pragma",
            "x-couch-full-commit", "x-couch-id", "x-couch-persist", "x-couchdb-www-authenticate", "x-http-method-override",
            "x-requested-with", "x-couchdb-vhost-path");
    private static final List<String> SUPPORTED_METHODS = List.of("CONNECT", "COPY", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "TRACE");
    private static final Set<String> SIMPLE_HEADERS = Set.of("cache-control", "content-language", "content-type", "expires", "last-modified", "pragma");
    private static final List<String> COUCH_HEADERS = List.of("accept-ranges", "etag", "server", "x-couch-request-id", "x-couch-update-newrev", "x-couchdb-body-time");
    private static final Set<String> SIMPLE_CONTENT_TYPES = Set.of("application/x-www-form-urlencoded", "multipart/form-data", "text/plain");

    private final ConfigStore config;

    Cors(ConfigStore config) {
        this.config = config;
    }

    private boolean enabled() {
        return Boolean.parseBoolean(config.get("chttpd", "enable_cors").or(() -> config.get("httpd", "enable_cors")).orElse("false"));
    }

    private List<String> list(String key, List<String> fallback, boolean lower) {
        return config.get("cors", key).map(v -> Arrays.stream(v.split("\\s*,\\s*")).map(String::strip).filter(s -> !s.isEmpty())
                .map(s -> lower ? s.toLowerCase(Locale.ROOT) : s).toList()).orElse(fallback);
    }

    private boolean accepts(String origin) {
        List<String> origins = list("origins", List.of(), false);
        return origins.contains("*") || origins.contains(origin);
    }

    private boolean credentials(String origin) {
        return !origin.equals("*") && "true".equals(config.get("cors", "credentials").orElse("false"));
    }

    /** The 204 answer to a CORS preflight, or null if this is not one (then it is routed as usual). */
    Response.Full preflight(Request req) {
        if (!req.method().equals("OPTIONS") || !enabled()) return null;
        String origin = req.header("Origin");
        String method = req.header("Access-Control-Request-Method");
        if (origin == null || method == null || !accepts(origin)) return null;
        List<String> methods = list("methods", SUPPORTED_METHODS, false);
        if (!methods.contains(method)) return null;
        String requested = req.header("Access-Control-Request-Headers");
        if (requested != null && !requested.isBlank()) {
            List<String> allowed = list("headers", SUPPORTED_HEADERS, true);
            for (String h : requested.split(",\\s*")) {
                if (!h.isBlank() && !allowed.contains(h.strip().toLowerCase(Locale.ROOT))) return null;
            }
        }
        Response.Full r = new Response.Full(204, List.of(), new byte[0])
                .withHeader("Access-Control-Allow-Origin", origin);
        if (credentials(origin)) r = r.withHeader("Access-Control-Allow-Credentials", "true");
        return r.withHeader("Access-Control-Max-Age", config.get("cors", "max_age").orElse("600"))
                .withHeader("Access-Control-Allow-Methods", String.join(", ", methods))
                .withHeader("Access-Control-Allow-Headers", requested == null ? "" : requested);
    }

    /** {@code resp} with the CORS headers an accepted origin gets. */
    Response apply(Request req, Response resp) {
        String origin = req == null ? null : req.header("Origin");
        if (origin == null || !enabled()) return resp;
        origin = origin.toLowerCase(Locale.ROOT);
        if (!accepts(origin)) return resp;
        Set<String> exposed = new LinkedHashSet<>();
        String contentType = resp.header("Content-Type");
        if (contentType == null || !SIMPLE_CONTENT_TYPES.contains(contentType.toLowerCase(Locale.ROOT))) exposed.add("content-type");
        exposed.add("cache-control");
        for (Response.Header h : resp.headers()) {
            String n = h.name().toLowerCase(Locale.ROOT);
            if (SIMPLE_HEADERS.contains(n)) exposed.add(n);
        }
        exposed.addAll(list("exposed_headers", COUCH_HEADERS, true));
        Response r = resp.withHeader("Access-Control-Allow-Origin", origin);
        if (credentials(origin)) r = r.withHeader("Access-Control-Allow-Credentials", "true");
        return r.withHeader("Access-Control-Expose-Headers", String.join(", ", new ArrayList<>(exposed)));
    }
}

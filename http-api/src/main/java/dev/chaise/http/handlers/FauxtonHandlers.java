package dev.chaise.http.handlers;

import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fauxton at {@code /_utils/}, as CouchDB's chttpd serves its docroot: {@code /_utils} redirects
 * (301) to {@code /_utils/}, files go out with {@code Cache-Control: private, must-revalidate}, the
 * Content-Security-Policy of {@code [csp] utils_header_value} (CouchDB's default, unless
 * {@code [csp] utils_enable = false}), their MIME type and a Last-Modified, and any method but GET and
 * HEAD is a 405. The files are npm's {@code fauxton} release, put in the jar under {@code /fauxton/}
 * at build time (server/pom.xml). {@code [chaise] fauxton = false} turns it off.
 */
public final class FauxtonHandlers {
    /** Where the build puts the release inside the jar. */
    static final String ROOT = "/fauxton/";
    static final String CSP = "child-src 'self' data: blob:; default-src 'self'; img-src 'self' data:; font-src 'self'; "
            + "script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline';";
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US);
    private static final Map<String, String> MIME = Map.ofEntries(
            Map.entry("html", "text/html; charset=utf-8"), Map.entry("js", "application/javascript"), Map.entry("css", "text/css"),
            Map.entry("json", "application/json"), Map.entry("map", "application/json"), Map.entry("png", "image/png"),
            Map.entry("gif", "image/gif"), Map.entry("jpg", "image/jpeg"), Map.entry("svg", "image/svg+xml"), Map.entry("ico", "image/x-icon"),
            Map.entry("woff", "font/woff"), Map.entry("woff2", "font/woff2"), Map.entry("ttf", "font/ttf"),
            Map.entry("eot", "application/vnd.ms-fontobject"), Map.entry("txt", "text/plain; charset=utf-8"));

    private final ConfigStore config;
    private final Map<String, Optional<byte[]>> files = new ConcurrentHashMap<>();
    /** The files change only with the jar, so the server's start stands in for their modification time. */
    private final String lastModified = HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC).withNano(0));
    private final Instant lastModifiedInstant = ZonedDateTime.parse(lastModified, HTTP_DATE.withZone(ZoneOffset.UTC)).toInstant();

    public FauxtonHandlers(ConfigStore config) {
        this.config = config;
    }

    /** Whether the jar holds Fauxton (a build without npm's package has none). */
    public static boolean bundled() {
        return FauxtonHandlers.class.getResource(ROOT + "index.html") != null;
    }

    public void register(Router r) {
        r.add("GET", "/_utils", this::redirect);
        r.add("GET", "/_utils/{path...}", this::file);
    }

    private void requireOn() {
        if ("false".equals(config.get("chaise", "fauxton").map(String::strip).orElse("true"))) {
            throw HttpError.notFound("Fauxton is turned off ([chaise] fauxton = false)");
        }
        if (!bundled()) throw HttpError.notFound("this build of Chaise has no Fauxton");
    }

    private Response redirect(Request req) {
        requireOn();
        if (!req.rawPath().equals("/_utils")) return file(req); // "/_utils/": the index
        return new Response.Full(301, List.of(new Response.Header("Location", req.absoluteUri("/_utils/"))), new byte[0]);
    }

    private Response file(Request req) {
        requireOn();
        String path = req.params().getOrDefault("path", "");
        if (path.isEmpty() || req.rawPath().endsWith("/")) path = path.isEmpty() ? "index.html" : path + "/index.html";
        for (String seg : path.split("/")) {
            if (seg.isEmpty() || seg.equals("..") || seg.equals(".") || seg.contains("\\")) throw HttpError.notFound("missing");
        }
        byte[] body = files.computeIfAbsent(path, FauxtonHandlers::load).orElseThrow(() -> HttpError.notFound("missing"));
        List<Response.Header> h = new ArrayList<>();
        h.add(new Response.Header("Cache-Control", "private, must-revalidate"));
        if (!"false".equals(config.get("csp", "utils_enable").map(String::strip).orElse("true"))) {
            h.add(new Response.Header("Content-Security-Policy", config.get("csp", "utils_header_value").orElse(CSP)));
        }
        h.add(new Response.Header("Last-Modified", lastModified));
        String since = req.header("If-Modified-Since");
        if (since != null && notModifiedSince(since)) return new Response.Full(304, h, new byte[0]);
        int dot = path.lastIndexOf('.');
        String ext = dot < 0 ? "" : path.substring(dot + 1).toLowerCase(Locale.ROOT);
        h.add(new Response.Header("Content-Type", MIME.getOrDefault(ext, "application/octet-stream")));
        return new Response.Full(200, h, body);
    }

    private boolean notModifiedSince(String since) {
        try {
            return !lastModifiedInstant.isAfter(ZonedDateTime.parse(since, HTTP_DATE.withZone(ZoneOffset.UTC)).toInstant());
        } catch (RuntimeException e) {
            return false; // an unparsable date is ignored, as HTTP says
        }
    }

    private static Optional<byte[]> load(String path) {
        try (InputStream in = FauxtonHandlers.class.getResourceAsStream(ROOT + path)) {
            return in == null ? Optional.empty() : Optional.of(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

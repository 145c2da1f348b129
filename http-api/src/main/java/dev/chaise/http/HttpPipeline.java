package dev.chaise.http;

import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.auth.AuthenticationHandler;
import dev.chaise.http.auth.Authenticator;
import dev.chaise.http.auth.SessionCookies;
import dev.chaise.storage.UserCtx;
import java.util.Set;

/**
 * What happens to a request between the socket and a handler, free of Netty so it can be reasoned
 * about (and tested) alone: method override, authentication, routing, the handler, and the
 * mapping of any failure to CouchDB's error body. Never throws, but for a request run where it must
 * not wait ({@code NoWaiting}) that would have: that one is given back to be run elsewhere.
 */
public final class HttpPipeline {
    private static final Set<String> OVERRIDABLE = Set.of("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "CONNECT", "COPY");

    private final Router router;
    private final Authenticator authenticator;
    private final Cors cors;
    private final ConfigStore config;
    private final dev.chaise.http.metrics.Metrics metrics;
    private final String node;
    /** The settings the next request is read with; replaced by a config listener when they change. */
    private volatile RequestSettings settings;
    /** {@code [chaise] access_log}, read when it changes rather than per request. */
    private volatile boolean accessLog;

    public HttpPipeline(Router router, Authenticator authenticator, ConfigStore config) {
        this(router, authenticator, config, dev.chaise.http.metrics.Metrics.standalone(), "chaise@127.0.0.1");
    }

    /** @param metrics where each request is counted and timed; @param node the node name the access log shows */
    public HttpPipeline(Router router, Authenticator authenticator, ConfigStore config, dev.chaise.http.metrics.Metrics metrics, String node) {
        this.router = router;
        this.authenticator = authenticator;
        this.cors = new Cors(config);
        this.config = config;
        this.metrics = metrics;
        this.node = node;
        this.settings = RequestSettings.of(config);
        this.accessLog = accessLogOn(config);
        config.addListener((section, key, value) -> {
            if (section.equals("chttpd") || section.equals("httpd")) settings = RequestSettings.of(config);
            if (section.equals("chaise")) accessLog = accessLogOn(config);
        });
    }

    private static boolean accessLogOn(ConfigStore config) {
        return !"false".equals(config.get("chaise", "access_log").map(String::strip).orElse("true"));
    }

    /** The settings a request arriving now is read with. */
    RequestSettings settings() {
        return settings;
    }

    /**
     * A request was answered (or its client went away, {@code sent} false): counted and timed in the
     * metrics, and logged unless {@code [chaise] access_log} is false.
     */
    public void completed(java.net.SocketAddress remote, String host, String method, String uri, int status, boolean sent, long nanos,
                          String user, String requestId) {
        metrics.request(method, status, sent, nanos);
        if (accessLog) {
            AccessLog.log(node, remote, host, method, uri, status, sent, java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(nanos), user, requestId);
        }
    }

    /**
     * The route of {@code req} if it may be answered on the event loop it arrived on ({@link
     * #handle(Request, Router.Match)} there, in {@code NoWaiting}): {@code [chttpd] loop_reads} is on
     * and its route's handler is {@link Router.Bounded} for it. Else null, as for a path that does
     * not route: answered where any other request is.
     */
    Router.Match servesOnLoop(Request req) {
        if (!req.settings().loopReads()) return null;
        Router.Match m;
        try {
            m = router.match(req.method(), req.path());
        } catch (RuntimeException e) {
            return null;
        }
        return m.handler() instanceof Router.Bounded b && b.bounded(req.withParams(m.params())) ? m : null;
    }

    /** The outcome, and the request as it was finally understood (with its user), for the access log. */
    public record Outcome(Request request, Response response) {}

    public Outcome handle(Request req) {
        return handle(req, null);
    }

    /**
     * The route's handler, from a call site of its own that C2 does not inline into
     * {@link #handle(Request, Router.Match)} ({@code bin/jvm.options}: {@code dontinline}). Every
     * route's handler is another class, and a phase of a workload brings in ones the profile had
     * not seen: inlined, each new one failed C2's class check and deoptimized the whole pipeline
     * (10 KB of inlined code, 0.1-0.4 s of C2 to compile again) in round 1's PUT, bulk and view
     * phases (docs/benchmarks.md, "the handler's call site").
     */
    static Response dispatch(Router.Handler handler, Request req) throws Exception {
        return handler.handle(req);
    }

    /**
     * {@link #handle(Request)} with its route already found ({@link #servesOnLoop}: a GET or HEAD,
     * which no method override changes), so the loop matches it once; null to match it here.
     */
    Outcome handle(Request req, Router.Match routed) {
        String override = req.header("X-HTTP-Method-Override");
        if (override != null && req.method().equals("POST") && OVERRIDABLE.contains(override)) req = req.withMethod(override);
        String refresh = null;
        Response resp;
        try {
            // Preflights are answered before authentication: browsers send them without credentials.
            Response.Full preflight = cors.preflight(req);
            if (preflight != null) return new Outcome(req, preflight);
            AuthenticationHandler.Authenticated a = authenticator.authenticate(req);
            req = req.withUser(a.user());
            refresh = a.setCookie();
            Router.Match m = routed != null ? routed : router.match(req.method(), req.path());
            req = req.withParams(m.params());
            resp = dispatch(m.handler(), req);
        } catch (Throwable t) {
            if (t instanceof VirtualMachineError vme) throw vme;
            if (t instanceof dev.chaise.threads.NoWaiting.Deferred d) throw d; // to be run again off the loop: nothing answered
            resp = ErrorMapper.map(t, req).toResponse();
        }
        resp = Jsonp.apply(req, resp, config);
        if (resp.status() == 401) {
            String www = authenticator.wwwAuthenticate();
            if (www != null) resp = resp.withHeader("WWW-Authenticate", www);
        }
        // A login or logout sets its own cookie; otherwise refresh an aging session.
        if (refresh != null && !setsSessionCookie(resp)) resp = resp.withHeader("Set-Cookie", refresh);
        return new Outcome(req, cors.apply(req, resp));
    }

    private static boolean setsSessionCookie(Response r) {
        for (Response.Header h : r.headers()) {
            if (h.name().equalsIgnoreCase("Set-Cookie") && h.value().startsWith(SessionCookies.NAME + "=")) return true;
        }
        return false;
    }

    static UserCtx userOf(Request r) {
        return r.user() == null ? UserCtx.ANONYMOUS : r.user();
    }
}

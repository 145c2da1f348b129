package dev.chaise.http;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A failure the HTTP layer itself detects (routing, headers, query parameters, auth), with
 * CouchDB's status, {@code error} and {@code reason}. {@link ErrorMapper} turns it into the body.
 * No stack trace: these are answers, not bugs.
 */
public final class HttpError extends RuntimeException {
    private final int status;
    private final String error;
    private final String reason;
    private final List<Response.Header> headers;
    /** Body members written before {@code error} and {@code reason}, e.g. {@code /_up}'s {@code status}. */
    private final Map<String, Object> members;

    public HttpError(int status, String error, String reason) {
        this(status, error, reason, List.of(), Map.of());
    }

    private HttpError(int status, String error, String reason, List<Response.Header> headers, Map<String, Object> members) {
        super(error + ": " + reason, null, false, false);
        this.status = status;
        this.error = error;
        this.reason = reason;
        this.headers = headers;
        this.members = members;
    }

    public int status() {
        return status;
    }

    public String error() {
        return error;
    }

    public String reason() {
        return reason;
    }

    public List<Response.Header> headers() {
        return headers;
    }

    public Map<String, Object> members() {
        return members;
    }

    public HttpError withHeader(String name, String value) {
        var h = new java.util.ArrayList<>(headers);
        h.add(new Response.Header(name, value));
        return new HttpError(status, error, reason, List.copyOf(h), members);
    }

    public HttpError withMember(String name, Object value) {
        Map<String, Object> m = new LinkedHashMap<>(members);
        m.put(name, value);
        return new HttpError(status, error, reason, headers, Collections.unmodifiableMap(m));
    }

    public static HttpError badRequest(String reason) {
        return new HttpError(400, "bad_request", reason);
    }

    public static HttpError queryParseError(String reason) {
        return new HttpError(400, "query_parse_error", reason);
    }

    public static HttpError notFound(String reason) {
        return new HttpError(404, "not_found", reason);
    }

    public static HttpError unauthorized(String reason) {
        return new HttpError(401, "unauthorized", reason);
    }

    public static HttpError forbidden(String reason) {
        return new HttpError(403, "forbidden", reason);
    }

    /** {@code allow} as CouchDB writes it, e.g. {@code GET,HEAD}. */
    public static HttpError methodNotAllowed(String allow) {
        return new HttpError(405, "method_not_allowed", "Only " + allow + " allowed").withHeader("Allow", allow);
    }

    public static HttpError tooLarge() {
        return new HttpError(413, "too_large", "the request entity is too large");
    }

    public static HttpError uriTooLong() {
        return new HttpError(414, "too_long", "the request uri is too long");
    }

    public static HttpError badContentType(String reason) {
        return new HttpError(415, "bad_content_type", reason);
    }

    public static HttpError rangeNotSatisfiable() {
        return new HttpError(416, "requested_range_not_satisfiable", "Requested range not satisfiable");
    }

    /** A CouchDB endpoint Chaise does not serve: said plainly, rather than a 404 or 405 that reads like a client mistake. */
    public static HttpError notImplemented(String reason) {
        return new HttpError(501, "not_implemented", reason);
    }

    public static HttpError expectationFailed(String reason) {
        return new HttpError(417, "expectation_failed", reason);
    }
}

package dev.chaise.http;

import dev.chaise.storage.UserCtx;
import io.netty.handler.codec.http.HttpHeaders;
import java.util.List;
import java.util.Map;

/**
 * One HTTP request as handlers see it: the method, the path split into URL-decoded segments, the
 * query, headers, the body (read on demand, see {@link RequestBody}), the authenticated user, and the values of the route's
 * {@code {placeholders}}. Immutable; the pipeline makes copies as it learns more.
 *
 * @param method the method after {@code X-HTTP-Method-Override}; HEAD stays HEAD
 * @param rawPath the path as sent, still percent-encoded, without the query
 * @param path the non-empty segments of {@code rawPath}, each URL-decoded ({@code %2F} stays inside its segment)
 * @param localAddress {@code ip:port} the connection arrived on
 * @param settings the settings the request is read with, as configured when it arrived
 */
public record Request(String method, String rawUri, String rawPath, List<String> path, Map<String, List<String>> query,
                      HttpHeaders headers, RequestBody content, String remoteAddress, String requestId, UserCtx user,
                      Map<String, String> params, String localAddress, RequestSettings settings) implements dev.chaise.http.auth.AuthRequest {

    public boolean isHead() {
        return method.equals("HEAD");
    }

    /** The whole body (waiting for it to arrive); 413 past {@code max_http_request_size}. */
    public byte[] body() {
        return content.bytes();
    }

    public String header(String name) {
        return headers.get(name);
    }

    /** The first value of a query parameter, or null. */
    public String query(String name) {
        List<String> v = query.get(name);
        return v == null || v.isEmpty() ? null : v.get(0);
    }

    public String query(String name, String fallback) {
        String v = query(name);
        return v == null ? fallback : v;
    }

    /** The value of a route placeholder, e.g. {@code param("db")} for {@code /{db}/_security}. */
    public String param(String name) {
        return params.get(name);
    }

    /** The media type of the body, lower case, without parameters; null if none was sent. */
    public String contentType() {
        String ct = headers.get("Content-Type");
        if (ct == null) return null;
        int semi = ct.indexOf(';');
        return (semi < 0 ? ct : ct.substring(0, semi)).strip().toLowerCase(java.util.Locale.ROOT);
    }

    public Request withUser(UserCtx u) {
        return new Request(method, rawUri, rawPath, path, query, headers, content, remoteAddress, requestId, u, params, localAddress, settings);
    }

    public Request withParams(Map<String, String> p) {
        return new Request(method, rawUri, rawPath, path, query, headers, content, remoteAddress, requestId, user, p, localAddress, settings);
    }

    /**
     * This request sent on to another target, as a rewrite does: the same user, client and id,
     * with {@code newMethod}, {@code newRawUri} (parsed as a request line's target, {@code +} a
     * space as a rewrite writes it), {@code newHeaders} and {@code newContent}.
     */
    public Request retarget(String newMethod, String newRawUri, HttpHeaders newHeaders, RequestBody newContent) {
        RequestTarget t = RequestTarget.parse(newRawUri, true);
        return new Request(newMethod, newRawUri, t.rawPath(), t.path(), t.query(), newHeaders, newContent, remoteAddress, requestId, user, Map.of(),
                localAddress, settings);
    }

    /**
     * This request as the route of another path and query sees it, as chttpd hands a partition's
     * request ({@code /{db}/_partition/{p}/_all_docs}) to the database's own handler with
     * {@code partition} in the query. The raw URI stays what the client sent.
     */
    public Request reroute(List<String> newPath, Map<String, List<String>> newQuery) {
        return new Request(method, rawUri, rawPath, List.copyOf(newPath), newQuery, headers, content, remoteAddress, requestId, user, params,
                localAddress, settings);
    }

    public Request withMethod(String m) {
        return new Request(m, rawUri, rawPath, path, query, headers, content, remoteAddress, requestId, user, params, localAddress, settings);
    }

    /**
     * This server's absolute URL for {@code path} (URL-encoded, starting with {@code /}) as the
     * client reached it, through a proxy or not: CouchDB's {@code chttpd:absolute_uri}
     * ({@link ForwardedHeaders}). Every {@code Location} the server sends is built here.
     */
    public String absoluteUri(String path) {
        return settings.forwarded().absolute(headers, localAddress, path);
    }

    /**
     * A path segment sent elsewhere than the request-target (COPY's {@code Destination}), decoded
     * as the target's segments are ({@code chttpd:unquote}: {@code decode_plus_to_space} applies).
     */
    public String unquote(String segment) {
        return RequestTarget.decode(segment, settings.decodePlusToSpace());
    }

    @Override
    public String toString() {
        return method + " " + rawUri;
    }
}

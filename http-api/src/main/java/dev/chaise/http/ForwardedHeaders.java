package dev.chaise.http;

import dev.chaise.http.config.ConfigStore;
import io.netty.handler.codec.http.HttpHeaders;

/**
 * How CouchDB builds this server's absolute URLs ({@code chttpd:absolute_uri}), for the
 * {@code Location} headers of created documents and databases and of redirects: the host is the
 * header {@code [chttpd] x_forwarded_host} names ({@code X-Forwarded-Host}), else {@code Host},
 * else the address the connection arrived on; the scheme is https when the header
 * {@code x_forwarded_ssl} names ({@code X-Forwarded-Ssl}) is {@code on} or the one
 * {@code x_forwarded_proto} names ({@code X-Forwarded-Proto}) is {@code https}, else http (Chaise
 * itself serves no TLS). Each name is read from {@code [chttpd]}, then {@code [httpd]}, as
 * {@code chttpd_util:get_chttpd_config} reads it.
 *
 * @param host the header naming the host the client used
 * @param proto the header naming the scheme the client used
 * @param ssl the header that is {@code on} when the client used TLS
 */
public record ForwardedHeaders(String host, String proto, String ssl) {
    static final ForwardedHeaders DEFAULT = new ForwardedHeaders("X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Ssl");

    static ForwardedHeaders of(ConfigStore config) {
        return new ForwardedHeaders(name(config, "x_forwarded_host", DEFAULT.host), name(config, "x_forwarded_proto", DEFAULT.proto),
                name(config, "x_forwarded_ssl", DEFAULT.ssl));
    }

    private static String name(ConfigStore config, String key, String fallback) {
        return config.get("chttpd", key).or(() -> config.get("httpd", key)).map(String::strip).filter(v -> !v.isEmpty()).orElse(fallback);
    }

    /**
     * @param localAddress {@code ip:port} the connection arrived on, for a request with no {@code Host}
     * @param path already URL-encoded, starting with {@code /}
     */
    String absolute(HttpHeaders headers, String localAddress, String path) {
        String h = headers.get(host);
        if (h == null) h = headers.get("Host");
        if (h == null) h = localAddress;
        String scheme = "on".equals(headers.get(ssl)) || "https".equals(headers.get(proto)) ? "https" : "http";
        return scheme + "://" + h + path;
    }
}

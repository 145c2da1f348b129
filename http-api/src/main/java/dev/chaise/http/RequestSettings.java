package dev.chaise.http;

import dev.chaise.http.config.ConfigStore;

/**
 * The settings every request is read with, as configured when it arrived (CouchDB reads them per
 * request): {@code HttpPipeline} keeps one current from a config listener, so a change over
 * {@code _config} applies to the next request at the cost of a field read.
 *
 * @param decodePlusToSpace {@code [chttpd] decode_plus_to_space}: '+' in a path segment (and in
 *     {@code COPY}'s {@code Destination}) is a space; true unless {@code false}
 * @param forwarded the {@code x_forwarded_*} header names, for {@link Request#absoluteUri}
 * @param maxRequestSize {@code [chttpd] max_http_request_size} as the live config has it, or -1 when
 *     it has none (the server's start-time setting applies): a body past it is 413, and CouchDB's
 *     changes_test sets it low over {@code _config} and expects the next request to meet it
 * @param loopReads {@code [chttpd] loop_reads}: bounded reads of a store whose reads never wait are
 *     answered on the connection's event loop ({@link Router.Bounded}); on unless {@code false}
 *     (unset, {@code -Dchaise.loop_reads}): on a quiet machine it halved a GET's CPU under 16
 *     clients, but on a host crowded with other busy processes the one loop thread loses the
 *     scheduler's favour, see docs/benchmarks.md, issue 27, loop-serve
 */
public record RequestSettings(boolean decodePlusToSpace, ForwardedHeaders forwarded, long maxRequestSize, boolean loopReads) {
    static RequestSettings of(ConfigStore c) {
        long max = c.get("chttpd", "max_http_request_size").map(String::strip).filter(v -> v.matches("[0-9]{1,18}"))
                .map(Long::parseLong).orElse(-1L);
        return new RequestSettings(!c.get("chttpd", "decode_plus_to_space").map(String::strip).orElse("true").equals("false"),
                ForwardedHeaders.of(c), max, !c.get("chttpd", "loop_reads").map(String::strip).orElse(System.getProperty("chaise.loop_reads", "true")).equals("false"));
    }
}

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
 */
public record RequestSettings(boolean decodePlusToSpace, ForwardedHeaders forwarded) {
    static RequestSettings of(ConfigStore c) {
        return new RequestSettings(!c.get("chttpd", "decode_plus_to_space").map(String::strip).orElse("true").equals("false"),
                ForwardedHeaders.of(c));
    }
}

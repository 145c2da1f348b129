package dev.chaise.http.auth;

import java.util.List;

/** What authentication reads of a request: the HTTP layer's request is one, so this layer never names it. */
public interface AuthRequest {
    String method();

    /** The decoded path segments. */
    List<String> path();

    /** A header's value, or null. */
    String header(String name);

    /** The peer's address, for lockout. */
    String remoteAddress();
}

package dev.chaise.http.auth;

import dev.chaise.storage.UserCtx;
import java.util.Optional;

/**
 * One of CouchDB's {@code authentication_handlers}: looks at a request and either establishes
 * who made it, declines (empty: the next handler tries), or rejects it by throwing an
 * {@link AuthException} (e.g. 401 for a wrong Basic password). Proxy and JWT
 * handlers can be added later in front of the built-in {@code cookie} and {@code default}.
 */
public interface AuthenticationHandler {
    /** The name {@code GET /_session} lists and reports as {@code authenticated}. */
    String name();

    Optional<Authenticated> authenticate(AuthRequest req);

    /**
     * @param setCookie a {@code Set-Cookie} value to send with the response (a refreshed session), or null
     */
    record Authenticated(UserCtx user, String setCookie) {}
}

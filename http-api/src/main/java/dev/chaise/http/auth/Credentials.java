package dev.chaise.http.auth;

import dev.chaise.storage.UserCtx;
import java.util.List;

/**
 * What a {@link UserDirectory} knows about a user: enough to check a password and to sign and
 * check the user's session cookie ({@code salt} is mixed into the cookie's HMAC key, so changing
 * the password ends the user's sessions, as in CouchDB).
 */
public record Credentials(String name, List<String> roles, PasswordHash password) {
    public Credentials {
        roles = List.copyOf(roles);
    }

    public String salt() {
        return password.salt();
    }

    public UserCtx userCtx(String handler) {
        return new UserCtx(name, roles, handler);
    }
}

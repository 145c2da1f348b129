package dev.chaise.http.auth;

import java.util.List;

/**
 * Who is making a request: CouchDB's {@code userCtx}. {@code name} is null for anonymous.
 *
 * @param handler the authentication handler that established it ({@code cookie}, {@code default}), null for anonymous
 */
public record UserCtx(String name, List<String> roles, String handler) {
    public static final String ADMIN_ROLE = "_admin";
    public static final UserCtx ANONYMOUS = new UserCtx(null, List.of(), null);

    public UserCtx {
        roles = List.copyOf(roles);
    }

    public boolean isAnonymous() {
        return name == null;
    }

    public boolean isServerAdmin() {
        return roles.contains(ADMIN_ROLE);
    }
}

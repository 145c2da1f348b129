package dev.chaise.storage;

import java.util.List;

/**
 * Who a database is opened for: CouchDB's {@code userCtx}. {@code name} is null for anonymous and
 * for the server's own tasks ({@link #server}).
 *
 * @param handler how it was established ({@code cookie}, {@code default}, ...); null for anonymous;
 *     {@code server:TASK} for the server itself
 */
public record UserCtx(String name, List<String> roles, String handler) {
    public static final String ADMIN_ROLE = "_admin";
    public static final UserCtx ANONYMOUS = new UserCtx(null, List.of(), null);

    public UserCtx {
        roles = List.copyOf(roles);
    }

    /**
     * The server itself, for one of its own tasks (the replicator writing a job's state, a start
     * creating the system databases): a server admin, named so that logs and policies can tell it
     * from a person, as CouchDB's {@code ?ADMIN_CTX}.
     */
    public static UserCtx server(String task) {
        return new UserCtx(null, List.of(ADMIN_ROLE), "server:" + task);
    }

    public boolean isAnonymous() {
        return name == null && !isServer();
    }

    public boolean isServer() {
        return handler != null && handler.startsWith("server:");
    }

    public boolean isServerAdmin() {
        return roles.contains(ADMIN_ROLE);
    }
}

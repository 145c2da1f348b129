package dev.chaise.http.auth;

import java.util.Optional;

/**
 * The seam where users come from: CouchDB's {@code get_user_creds}. Server admins from the
 * config are one ({@link ServerAdmins}); a {@code _users} database will be another. The
 * {@link Authenticator} asks each in order; the first that knows the name answers.
 */
@FunctionalInterface
public interface UserDirectory {
    Optional<Credentials> lookup(String name);
}

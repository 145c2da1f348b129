package dev.chaise.http.auth;

import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.storage.Database;
import dev.chaise.storage.Storage;
import java.util.Set;

/**
 * Authorization, in one place. Server-level endpoints ask {@link #requireServerAdmin}; every
 * database endpoint goes through {@link #database}, which opens the database (404 first, as
 * CouchDB answers for a missing database whoever asks) and checks the caller against its
 * {@code _security}: 401 for anonymous callers, 403 for a signed-in user who is not allowed.
 */
public final class Access {
    /** What a database endpoint needs of the caller. */
    public enum Level {
        /** Read or write documents: a member (or anyone, if the database has no members). */
        MEMBER,
        /** Change {@code _security}, {@code _revs_limit}, compact: a database admin. */
        DB_ADMIN,
        /** Create or delete the database: a server admin. */
        SERVER_ADMIN
    }

    /** An opened, authorized database. */
    public record Db(Database db, SecurityObject security, UserCtx user) {
        public String name() {
            return db.name();
        }
    }

    private static final Set<String> SYSTEM_DBS = Set.of("_users", "_replicator", "_global_changes");

    private final Storage storage;

    public Access(Storage storage) {
        this.storage = storage;
    }

    public static void requireServerAdmin(UserCtx u) {
        // CouchDB answers 401 here even to signed-in users.
        if (!u.isServerAdmin()) throw HttpError.unauthorized("You are not a server admin.");
    }

    public static void requireServerAdmin(Request req) {
        requireServerAdmin(req.user());
    }

    /**
     * Opens {@code name} for {@code req}'s user at {@code level}, or throws: 400 for an illegal
     * name, 404 if it does not exist, 401/403 if the user may not. Names starting with {@code _}
     * that are not system databases reach here only for server admins, as in CouchDB, where such
     * paths are server endpoints.
     */
    public Db database(Request req, String name, Level level) {
        UserCtx u = req.user();
        if (name.startsWith("_") && !SYSTEM_DBS.contains(name)) requireServerAdmin(u);
        if (level == Level.SERVER_ADMIN) requireServerAdmin(u);
        Database h = storage.open(name); // 400 for an illegal name, then 404
        SecurityObject sec = SecurityObject.parse(h.securityJson());
        switch (level) {
            case MEMBER -> {
                // _users: anyone may use their own user document (and sign up), whoever the members are.
                boolean own = name.equals(UsersDatabase.NAME) && UsersDatabase.ownDocument(req, u);
                if (!own && !sec.isMember(u)) throw denied(u, "You are not allowed to access this db.", "You are not authorized to access this db.");
            }
            case DB_ADMIN -> {
                if (!sec.isAdmin(u)) throw denied(u, "You are not a db or server admin.", "You are not a db or server admin.");
            }
            case SERVER_ADMIN -> { }
        }
        return new Db(h, sec, u);
    }

    private static HttpError denied(UserCtx u, String forbidden, String unauthorized) {
        return u.isAnonymous() ? HttpError.unauthorized(unauthorized) : HttpError.forbidden(forbidden);
    }
}

package dev.chaise.http.auth;

import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.storage.Database;
import dev.chaise.storage.Storage;
import java.util.List;
import java.util.Set;

/**
 * Authorization, in one place. Server-level endpoints ask {@link #requireServerAdmin}; every
 * database endpoint goes through {@link #database}, which opens the database (404 first, as
 * CouchDB answers for a missing database whoever asks) and checks the caller against its
 * {@code _security}.
 *
 * <p>401 means "who are you?", 403 "you may not", as CouchDB decides them: the checks of
 * {@code couch_db} (membership, {@code check_is_admin}) answer 401 to an anonymous caller and 403
 * to a signed-in one; the checks of {@code chttpd_auth_request} that demand an admin
 * ({@code require_admin}, {@code require_db_admin}) answer 401 to everyone, signed in or not.
 */
public final class Access {
    /** What a database endpoint needs of the caller. */
    public enum Level {
        /** Read or write documents: a member (or anyone, if the database has no members). */
        MEMBER,
        /** Change {@code _security}, {@code _revs_limit}: a database admin ({@code couch_db:check_is_admin}: 401, or 403 when signed in). */
        DB_ADMIN,
        /** Compact, clean up views: a database admin ({@code chttpd_auth_request:require_db_admin}: 401 to everyone). */
        REQUIRE_DB_ADMIN,
        /** Create or delete the database: a server admin. */
        SERVER_ADMIN
    }

    /** An opened, authorized database. */
    public record Db(Database db, SecurityObject security, UserCtx user, UsersDatabase users) {
        public String name() {
            return db.name();
        }

        /** A document as this caller may read it: unchanged, except in {@code _users} ({@link UsersDatabase#forReader}). */
        public com.fasterxml.jackson.databind.node.ObjectNode readable(com.fasterxml.jackson.databind.node.ObjectNode doc) {
            return users == null ? doc : users.forReader(this, doc);
        }

        /** {@link #readable}, or null for a document the caller may not read (a row's {@code doc} then is null). */
        public com.fasterxml.jackson.databind.node.ObjectNode readableOrNull(com.fasterxml.jackson.databind.node.ObjectNode doc) {
            try {
                return readable(doc);
            } catch (HttpError | dev.chaise.storage.StorageException e) {
                return null;
            }
        }
    }

    private static final Set<String> SYSTEM_DBS = Set.of("_users", "_replicator", "_global_changes");

    private final Storage storage;
    private final UsersDatabase users;

    /** @param users the {@code _users} rules for what callers may read there; null for none */
    public Access(Storage storage, UsersDatabase users) {
        this.storage = storage;
        this.users = users;
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
        return database(req.user(), name, level, req);
    }

    /**
     * {@link #database(Request, String, Level)} for work done as {@code u} outside a request (a
     * replication reaching a local database): the same checks, without {@code _users}' exception
     * for one's own document, which only a request can claim.
     */
    public Db database(UserCtx u, String name, Level level) {
        return database(u, name, level, null);
    }

    private Db database(UserCtx u, String name, Level level, Request req) {
        if (name.startsWith("_") && !SYSTEM_DBS.contains(name)) requireServerAdmin(u);
        if (level == Level.SERVER_ADMIN) requireServerAdmin(u);
        // chttpd_auth_request: the users and replicator databases' listings and feeds are for server admins.
        List<String> p = req == null ? List.of() : req.path();
        if ((name.equals(UsersDatabase.NAME) || name.equals("_replicator")) && p.size() > 1
                && (p.get(1).equals("_all_docs") || p.get(1).equals("_changes"))) {
            requireServerAdmin(u);
        }
        Database h = storage.open(name); // 400 for an illegal name, then 404
        SecurityObject sec = SecurityObject.parse(h.securityJson());
        switch (level) {
            case MEMBER -> {
                if (!sec.isMember(u)) throw denied(u, "You are not allowed to access this db.", "You are not authorized to access this db.");
            }
            case DB_ADMIN -> {
                if (!sec.isAdmin(u)) throw denied(u, NOT_DB_ADMIN, NOT_DB_ADMIN);
            }
            case REQUIRE_DB_ADMIN -> {
                if (!sec.isAdmin(u)) throw HttpError.unauthorized("You are not a server or db admin.");
            }
            case SERVER_ADMIN -> { }
        }
        return new Db(h, sec, u, users);
    }

    /** {@code couch_db:check_is_admin}'s reason. */
    public static final String NOT_DB_ADMIN = "You are not a db or server admin.";

    /** {@code couch_db:throw_security_error}: unauthorized for an anonymous caller, forbidden for a signed-in one. */
    public static HttpError denied(UserCtx u, String forbidden, String unauthorized) {
        return u.isAnonymous() ? HttpError.unauthorized(unauthorized) : HttpError.forbidden(forbidden);
    }

    /** {@code couch_db:check_is_admin} on an opened database: 401 anonymous, 403 signed in. */
    public static void checkIsAdmin(Db db) {
        if (!db.security().isAdmin(db.user())) throw denied(db.user(), NOT_DB_ADMIN, NOT_DB_ADMIN);
    }
}

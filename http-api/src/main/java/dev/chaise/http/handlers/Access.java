package dev.chaise.http.handlers;

import dev.chaise.http.Request;
import dev.chaise.storage.DbReader;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.Storage;
import dev.chaise.storage.UserCtx;
import java.util.List;
import java.util.Set;
import java.util.function.BiFunction;

/**
 * How a handler opens the database a request names: through storage's door
 * ({@link Storage#open(String, UserCtx, SecuredDb.Level)}, which checks {@code _security} and
 * applies the database's rules to everything done with it), after the checks that CouchDB makes on
 * the request's path ({@code chttpd_auth_request}) rather than on the database.
 */
public final class Access {
    private static final Set<String> SYSTEM_DBS = Set.of("_users", "_replicator", "_global_changes");

    private final Storage storage;

    public Access(Storage storage) {
        this.storage = storage;
    }

    /** Whether the store's reads complete without waiting ({@link Storage#readsNeverWait}): a bounded read may run on an event loop. */
    public boolean readsNeverWait() {
        return storage.readsNeverWait();
    }

    /** The server's metrics registry, for handlers that count. */
    public dev.chaise.stats.Stats stats() {
        return storage.stats();
    }

    public static void requireServerAdmin(Request req) {
        SecuredDb.requireServerAdmin(req.user());
    }

    /**
     * Opens {@code name} for {@code req}'s user at {@code level}, or throws: 400 for an illegal
     * name, 404 if it does not exist, 401/403 if the user may not. Names starting with {@code _}
     * that are not system databases reach here only for server admins, as in CouchDB, where such
     * paths are server endpoints; the users and replicator databases' listings and feeds are for
     * server admins too.
     */
    public SecuredDb database(Request req, String name, SecuredDb.Level level) {
        checkPath(req, name);
        SecuredDb db = storage.open(name, req.user(), level);
        checkQuery(req, db);
        return db;
    }

    /**
     * {@link #database(Request, SecuredDb.Level)} for a request whose one use of the database is
     * one document's {@link SecuredDb#update}: opened from the cached handle and checked in the
     * write's own transaction ({@link Storage#openToUpdate}).
     */
    public SecuredDb databaseToUpdate(Request req, SecuredDb.Level level) {
        String name = req.param("db");
        checkPath(req, name);
        SecuredDb db = storage.openToUpdate(name, req.user(), level);
        checkQuery(req, db);
        return db;
    }

    /**
     * {@link #database(Request, SecuredDb.Level)} and a read of it in one transaction
     * ({@link Storage#read}): the same checks in the same order, then {@code body}, which may run
     * more than once.
     */
    public <T> T read(Request req, SecuredDb.Level level, BiFunction<SecuredDb, DbReader, T> body) {
        String name = req.param("db");
        checkPath(req, name);
        return storage.read(name, req.user(), level, (db, r) -> {
            checkQuery(req, db);
            return body.apply(db, r);
        });
    }

    private static void checkPath(Request req, String name) {
        UserCtx u = req.user();
        if (name.startsWith("_") && !SYSTEM_DBS.contains(name)) SecuredDb.requireServerAdmin(u);
        List<String> p = req.path();
        if ((name.equals("_users") || name.equals("_replicator")) && p.size() > 1
                && (p.get(1).equals("_all_docs") || p.get(1).equals("_changes"))) {
            SecuredDb.requireServerAdmin(u);
        }
    }

    private static void checkQuery(Request req, SecuredDb db) {
        List<String> p = req.path();
        if (p.size() > 1 && QUERIES.contains(p.get(1)) || p.size() > 3 && p.get(1).equals("_design")) db.checkQuery();
    }

    /**
     * What reads the database beyond one user's documents: with the design functions
     * ({@code _design/{ddoc}/_view/...}, {@code _show}, {@code _list}, {@code _update}, ...),
     * for an access database's admins only ({@link SecuredDb#checkQuery}). A user's {@code _find}
     * and {@code _explain} run over their own documents ({@code Mango#findOwn}).
     */
    private static final Set<String> QUERIES = Set.of("_index", "_design_docs", "_local_docs", "_view_cleanup");

    /** The database named by the request's {@code {db}}. */
    public SecuredDb database(Request req, SecuredDb.Level level) {
        return database(req, req.param("db"), level);
    }
}

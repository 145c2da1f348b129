package dev.chaise.http.handlers;

import dev.chaise.http.HttpError;
import dev.chaise.http.Router;
import java.util.List;

/**
 * CouchDB 3 endpoints Chaise does not serve, answered 501 {@code not_implemented} for every method.
 * Without these routes {@code POST /db/_find} would be a 405 for a document named {@code _find},
 * and {@code GET /_reshard} a 400 for a bad database name: answers that read like the
 * client's mistake. Endpoints under a database check the database and the caller first, as the
 * real endpoint would. docs/compatibility.md lists them.
 */
public final class NotImplementedHandlers {
    private final Access access;

    /** A path pattern and the feature it belongs to, for the reason. */
    record Missing(String pattern, String feature) {}

    static final List<Missing> SERVER = List.of(
            new Missing("/_reshard", "resharding"),
            new Missing("/_reshard/{rest...}", "resharding"),
            new Missing("/_cluster_setup", "cluster setup"),
            new Missing("/_search_analyze", "full-text search"),
            new Missing("/_nouveau_analyze", "full-text search"),
            new Missing("/_node/{node}/_restart", "restarting a node over HTTP"));

    static final List<Missing> DATABASE = List.of(
            new Missing("/{db}/_shards", "shards"),
            new Missing("/{db}/_shards/{rest...}", "shards"),
            new Missing("/{db}/_sync_shards", "shards"),
            new Missing("/{db}/_partition/{rest...}", "partitioned databases"),
            new Missing("/{db}/_design/{ddoc}/_search/{rest...}", "full-text search"),
            new Missing("/{db}/_design/{ddoc}/_search_info/{rest...}", "full-text search"),
            new Missing("/{db}/_design/{ddoc}/_nouveau/{rest...}", "full-text search"),
            new Missing("/{db}/_design/{ddoc}/_nouveau_info/{rest...}", "full-text search"));

    private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE");

    public NotImplementedHandlers(Access access) {
        this.access = access;
    }

    public void register(Router r) {
        for (Missing m : SERVER) {
            for (String method : METHODS) r.add(method, m.pattern(), req -> { throw missing(m); });
        }
        for (Missing m : DATABASE) {
            for (String method : METHODS) {
                r.add(method, m.pattern(), req -> {
                    access.database(req, req.param("db"), dev.chaise.storage.SecuredDb.Level.MEMBER);
                    throw missing(m);
                });
            }
        }
    }

    private static HttpError missing(Missing m) {
        return HttpError.notImplemented("Not implemented by Chaise: " + m.feature());
    }
}

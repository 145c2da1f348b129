package dev.chaise.http.handlers;

import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.DbStats;
import dev.chaise.storage.Partitions;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.stats.Counter;
import dev.chaise.stats.Stats;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /{db}/_partition/...}, as {@code chttpd_db:handle_partition_req} serves it: a partition's
 * info from its counters, and its queries ({@code _all_docs}, Mango, a design document's views)
 * handed to the database's own handlers with {@code partition} in the query string, each of which
 * then keeps to that partition.
 */
public final class PartitionHandlers {
    private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "COPY");

    private final Access access;
    /** CouchDB's {@code couchdb.httpd.partition_*_requests}, as chttpd_db counts requests under a partition. */
    private final Counter allDocs, find, explain, view;

    public PartitionHandlers(Access access) {
        this.access = access;
        Stats stats = access.stats();
        this.allDocs = stats.counter("couchdb.httpd.partition_all_docs_requests", "number of partition _all_docs requests");
        this.find = stats.counter("couchdb.httpd.partition_find_requests", "number of partition _find requests");
        this.explain = stats.counter("couchdb.httpd.partition_explain_requests", "number of partition _explain requests");
        this.view = stats.counter("couchdb.httpd.partition_view_requests", "number of partition view requests");
    }

    public void register(Router r) {
        for (String m : METHODS) {
            r.add(m, "/{db}/_partition", req -> {
                db(req);
                throw HttpError.badRequest("invalid_partition_req");
            });
            r.add(m, "/{db}/_partition/{partition}", req -> info(req));
            r.add(m, "/{db}/_partition/{partition}/{rest...}", req -> within(r, req));
        }
    }

    private SecuredDb db(Request req) {
        return access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
    }

    private Response info(Request req) {
        SecuredDb db = db(req);
        String p = req.param("partition");
        if (!req.method().equals("GET") && !req.isHead()) {
            if (req.method().equals("POST") && p.startsWith("_")) Partitions.validatePartition(p);
            throw HttpError.methodNotAllowed("GET");
        }
        Partitions.validatePartition(p);
        notPartitioned(db);
        DbStats.Snapshot s = db.partitionInfo(p);
        Map<String, Object> sizes = new LinkedHashMap<>();
        sizes.put("active", s.sizeActive());
        sizes.put("external", s.sizeExternal());
        Map<String, Object> m = new LinkedHashMap<>(); // fabric_db_partition_info's member order
        m.put("db_name", db.name());
        m.put("sizes", sizes);
        m.put("partition", p);
        m.put("doc_count", s.docCount());
        m.put("doc_del_count", s.docDelCount());
        return Response.json(200, m);
    }

    /** A query within the partition, by the route of the same path without {@code _partition/{p}}; anything else is 404. */
    private Response within(Router r, Request req) throws Exception {
        SecuredDb db = db(req);
        notPartitioned(db);
        String p = req.param("partition");
        Partitions.validatePartition(p);
        String asked = req.query("partition");
        if (asked != null && !asked.equals(p)) throw HttpError.badRequest("Conflicting value for `partition` in query string");
        List<String> path = new ArrayList<>();
        path.add(req.path().get(0));
        path.addAll(req.path().subList(3, req.path().size()));
        String op = path.get(1);
        boolean served = op.equals("_all_docs") || op.equals("_find") || op.equals("_explain") || op.equals("_index")
                || (op.equals("_design") && path.size() > 3 && path.get(3).startsWith("_"));
        if (!served) throw HttpError.notFound("missing");
        switch (op) {
            case "_all_docs" -> allDocs.increment();
            case "_find" -> find.increment();
            case "_explain" -> explain.increment();
            case "_design" -> {
                if (path.get(3).equals("_view")) view.increment();
            }
            default -> { }
        }
        Map<String, List<String>> query = new LinkedHashMap<>(req.query());
        query.put("partition", List.of(p));
        Router.Match m = r.match(req.method(), path);
        return m.handler().handle(req.reroute(path, query).withParams(m.params()));
    }

    private static void notPartitioned(SecuredDb db) {
        if (!db.database().partitioned()) throw StorageException.badRequest("database is not partitioned");
    }
}

package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.ResponseStream;
import dev.chaise.http.Router;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.Sequence;
import dev.chaise.storage.json.Json;
import dev.chaise.storage.Database;
import dev.chaise.views.IndexInfo;
import dev.chaise.views.IndexMaintenance;
import dev.chaise.views.ViewQueries;
import dev.chaise.views.index.MapIndexSubspace;
import dev.chaise.views.query.ViewQuery;
import dev.chaise.views.query.ViewReader;
import dev.chaise.views.query.ViewRow;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Views: {@code GET/POST /{db}/_design/{ddoc}/_view/{view}}, {@code POST .../queries},
 * {@code .../_errors} (map failures, beyond CouchDB), {@code _design/{ddoc}/_info} and
 * {@code _view_cleanup}. Map rows carry {@code total_rows} from RFC E's row counter and CouchDB's
 * {@code offset} (RFC E, unlike RFC B for {@code _all_docs}, keeps it; clients check it).
 */
public final class ViewHandlers {
    private final ViewQueries views;
    private final IndexMaintenance maintenance;
    private final Access access;
    private final dev.chaise.stats.Counter viewReads;

    private final QueryLimits limits;

    public ViewHandlers(ViewQueries views, IndexMaintenance maintenance, Access access, dev.chaise.http.config.ConfigStore config) {
        this.limits = new QueryLimits(config);
        this.views = views;
        this.maintenance = maintenance;
        this.access = access;
        this.viewReads = dev.chaise.http.metrics.HttpdStats.of(access.stats()).viewReads();
    }

    public void register(Router r) {
        r.add("GET", "/{db}/_design/{ddoc}/_view/{view}", req -> view(req, null));
        for (String m : List.of("GET", "POST")) {
            r.add(m, "/{db}/_temp_view", req -> { // chttpd_view:handle_temp_view_req, once the caller may use the database
                access.database(req, SecuredDb.Level.MEMBER);
                throw new HttpError(410, "gone", "Temporary views are not supported in CouchDB");
            });
        }
        r.add("POST", "/{db}/_design/{ddoc}/_view/{view}", req -> {
            Bodies.requireContentType(req, Response.JSON);
            return view(req, Bodies.jsonObject(req));
        });
        r.add("POST", "/{db}/_design/{ddoc}/_view/{view}/queries", this::queries);
        r.add("GET", "/{db}/_design/{ddoc}/_view/{view}/_errors", this::errors);
        r.add("GET", "/{db}/_design/{ddoc}/_info", this::info);
        r.add("POST", "/{db}/_view_cleanup", req -> {
            Database db = access.database(req, req.param("db"), SecuredDb.Level.REQUIRE_DB_ADMIN).database();
            Bodies.requireContentType(req, Response.JSON);
            maintenance.cleanup(db);
            return Response.json(202, Map.of("ok", true));
        });
        r.add("POST", "/{db}/_compact/{ddoc}", req -> {
            Database db = access.database(req, req.param("db"), SecuredDb.Level.REQUIRE_DB_ADMIN).database();
            Bodies.requireContentType(req, Response.JSON);
            views.designDoc(db, ddocId(req)); // 404 for a missing design doc, as CouchDB
            return Response.json(202, Map.of("ok", true)); // nothing to compact: FDB keeps no append-only files
        });
    }

    private static String ddocId(Request req) {
        return DocumentJson.DESIGN_PREFIX + req.param("ddoc");
    }

    private Response view(Request req, ObjectNode body) {
        viewReads.increment();
        SecuredDb adb = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Database db = adb.database();
        ViewQuery q = limits.apply(ViewArgs.parse(req, body));
        ViewQueries.Result result = views.query(db, ddocId(req), req.param("view"), q,
                new ViewReader.DocAttachments(flag(req, body, "attachments"), flag(req, body, "att_encoding_info")));
        return Response.jsonStream(200, out -> {
            try (result) {
                writeResult(out, result, q, adb);
            }
        });
    }

    private static void writeResult(ResponseStream out, ViewQueries.Result result, ViewQuery q, SecuredDb db) throws Exception {
        StringBuilder head = new StringBuilder("{");
        if (!result.reduced()) head.append("\"total_rows\":").append(result.totalRows()).append(",\"offset\":").append(result.offset()).append(',');
        if (q.updateSeq()) head.append("\"update_seq\":").append(seq(result.updateSeq())).append(',');
        out.write(head.append("\"rows\":[\r\n").toString());
        boolean first = true;
        while (result.rows().hasNext()) {
            if (!first) out.write(",\r\n");
            out.write(Json.MAPPER.writeValueAsBytes(row(result.rows().next(), db)));
            first = false;
        }
        out.write("\r\n]}");
    }

    private static String seq(Sequence s) {
        return s == null ? "\"0\"" : "\"" + s.toHex() + "\"";
    }

    private static ObjectNode row(ViewRow r, SecuredDb db) {
        ObjectNode o = Json.NODES.objectNode();
        if (r.overflow() != null) return o.putNull("key").put("error", "reduce_overflow_error").put("reason", r.overflow());
        if (r.id() != null) o.put("id", r.id());
        o.set("key", r.key());
        o.set("value", r.value());
        if (r.doc() != null) o.set("doc", r.doc() instanceof ObjectNode d ? db.visibleOrNull(d) : r.doc()); // _users: as its reader may see it
        return o;
    }

    /** {@code {"queries": [{...}, ...]}}: each query runs as if alone; results in the same order. */
    private Response queries(Request req) {
        Bodies.requireContentType(req, Response.JSON);
        SecuredDb adb = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Database db = adb.database();
        ObjectNode body = Bodies.jsonObject(req);
        JsonNode qs = body.get("queries");
        if (qs == null || !qs.isArray()) throw HttpError.badRequest("Request body must contain a `queries` array.");
        List<ViewQuery> parsed = new ArrayList<>();
        for (JsonNode one : qs) {
            if (!one.isObject()) throw HttpError.badRequest("Each query must be an object.");
            parsed.add(limits.apply(ViewArgs.parse(req, (ObjectNode) one, true)));
        }
        viewReads.add(parsed.size()); // couch_mrview_http: one per query
        List<ViewQueries.Result> results = new ArrayList<>();
        try {
            for (ViewQuery q : parsed) results.add(views.query(db, ddocId(req), req.param("view"), q));
        } catch (RuntimeException e) {
            results.forEach(ViewQueries.Result::close);
            throw e;
        }
        return Response.jsonStream(200, out -> {
            out.write("{\"results\":[\r\n");
            for (int i = 0; i < results.size(); i++) {
                if (i > 0) out.write(",\r\n");
                try (ViewQueries.Result r = results.get(i)) {
                    writeResult(out, r, parsed.get(i), adb);
                }
            }
            out.write("\r\n]}");
        });
    }

    private Response errors(Request req) {
        Database db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER).database();
        long limit = dev.chaise.http.Queries.nonNegative(req, "limit", 1000);
        List<MapIndexSubspace.MapError> errs = maintenance.errors(db, ddocId(req), req.param("view"), (int) Math.min(limit, 100_000));
        ObjectNode out = Json.NODES.objectNode();
        var rows = out.putArray("errors");
        for (var e : errs) rows.addObject().put("id", e.docId()).put("rev", e.rev()).put("error", e.error()).put("reason", e.reason());
        return Response.json(200, out);
    }

    private Response info(Request req) {
        Database db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER).database();
        IndexInfo i = maintenance.info(db, ddocId(req));
        ObjectNode out = Json.NODES.objectNode();
        out.put("name", req.param("ddoc"));
        ObjectNode vi = out.putObject("view_index");
        vi.put("signature", i.signature());
        vi.put("language", i.language());
        vi.putObject("sizes").put("active", i.sizeActive()).put("external", i.sizeExternal()).put("file", i.sizeActive());
        vi.put("update_seq", i.updateSeq() == null ? "0" : i.updateSeq().toHex());
        vi.put("purge_seq", 0);
        vi.put("updater_running", i.updaterRunning());
        vi.put("compact_running", false);
        vi.put("waiting_clients", 0);
        vi.put("waiting_commit", false);
        // The signature covers the collator's version, so an index was built by this one only.
        vi.putArray("collator_versions").add(dev.chaise.views.collation.ViewCollation.versions().collator());
        return Response.json(200, out);
    }

    /** A document option of couch_mrview_http's parse_params, from the query string or the body. */
    static boolean flag(Request req, ObjectNode body, String name) {
        return "true".equals(req.query(name)) || (body != null && body.path(name).asBoolean(false));
    }
}

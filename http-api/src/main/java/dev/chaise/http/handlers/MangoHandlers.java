package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.json.Json;
import dev.chaise.views.ViewQueries;
import dev.chaise.views.mango.Find;
import dev.chaise.views.mango.Mango;
import dev.chaise.views.mango.MangoIndexes;

/**
 * Mango: {@code POST /{db}/_find}, {@code _explain}, and the index endpoints ({@code GET} and
 * {@code POST /{db}/_index}, {@code DELETE /{db}/_index/{ddoc}/json/{name}},
 * {@code POST /{db}/_index/_bulk_delete}). Indexes are design documents, so changing them takes a
 * database admin, as any design document write does.
 */
public final class MangoHandlers {
    private final Access access;
    private final Mango mango;

    public MangoHandlers(ViewQueries queries, Access access) {
        this.access = access;
        this.mango = new Mango(queries, access.stats());
    }

    public void register(Router r) {
        r.add("POST", "/{db}/_find", this::find);
        r.add("POST", "/{db}/_explain", this::explain);
        r.add("GET", "/{db}/_index", this::indexes);
        r.add("POST", "/{db}/_index", this::create);
        r.add("POST", "/{db}/_index/_bulk_delete", this::bulkDelete);
        r.add("DELETE", "/{db}/_index/{ddoc}/{type}/{name}", req -> delete(req, req.param("ddoc")));
        r.add("DELETE", "/{db}/_index/_design/{ddoc}/{type}/{name}", req -> delete(req, "_design/" + req.param("ddoc")));
        for (String method : new String[] {"GET", "POST", "PUT", "DELETE"}) {
            r.add(method, "/{db}/_index/{rest...}", req -> {
                access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
                throw HttpError.notFound("missing"); // CouchDB's answer for any other path under _index
            });
        }
    }

    private Response find(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        JsonNode body = withPartition(req, Bodies.json(req));
        ObjectNode out = Json.NODES.objectNode();
        ArrayNode list = out.putArray("docs");
        Find.Result r;
        if (db.limitedByAccess()) {
            r = mango.findOwn(db, body); // a user of an access database: their own documents, already as they may see them
            r.docs().forEach(list::add);
        } else {
            r = mango.find(db.database(), body);
            r.docs().forEach(d -> {
                ObjectNode readable = d instanceof ObjectNode o ? db.visibleOrNull(o) : null; // _users: as the caller may see it
                if (readable != null) list.add(readable);
            });
        }
        // CouchDB's member order: docs, bookmark, execution_stats, warning (only when there is one).
        out.put("bookmark", r.bookmark());
        if (body.path("execution_stats").asBoolean(false)) {
            ObjectNode s = out.putObject("execution_stats");
            s.put("total_keys_examined", r.stats().keysExamined());
            s.put("total_docs_examined", r.stats().docsExamined());
            s.put("total_quorum_docs_examined", r.stats().quorumDocsExamined());
            s.put("results_returned", r.stats().resultsReturned());
            s.put("execution_time_ms", r.stats().millis());
        }
        if (!r.warnings().isEmpty()) out.put("warning", String.join("\n", r.warnings()));
        return Response.json(200, out);
    }

    private Response explain(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        JsonNode body = withPartition(req, Bodies.json(req));
        return Response.json(200, db.limitedByAccess() ? mango.explainOwn(db, body) : mango.explain(db.database(), body));
    }

    /**
     * {@code mango_httpd:maybe_set_partition}: a partition's request ({@code ?partition=}, as
     * {@code /{db}/_partition/{p}/_find} sends it on) names the partition in the body.
     */
    private static JsonNode withPartition(Request req, JsonNode body) {
        String p = req.query("partition");
        if (p == null || !(body instanceof ObjectNode o)) return body;
        JsonNode given = o.get("partition");
        if (given == null) return o.deepCopy().put("partition", p);
        if (!given.isTextual() || !given.textValue().equals(p)) throw HttpError.badRequest("Conflicting value for `partition` in query string");
        return body;
    }

    private Response indexes(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        return Response.json(200, mango.indexes().listJson(db.database(), req.query("skip"), req.query("limit")));
    }

    private Response create(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        JsonNode body = Bodies.json(req);
        db.checkAdmin(); // indexes are design documents: refused before the body is read
        MangoIndexes.Created c = mango.indexes().create(db, body);
        ObjectNode out = Json.NODES.objectNode();
        out.put("result", c.result());
        out.put("id", c.id());
        out.put("name", c.name());
        return Response.json(200, out);
    }

    private Response delete(Request req, String ddoc) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        db.checkAdmin(); // indexes are design documents: refused before the body is read
        mango.indexes().delete(db, ddoc, req.param("type"), req.param("name"));
        return Response.json(200, Json.NODES.objectNode().put("ok", true));
    }

    private Response bulkDelete(Request req) {
        SecuredDb db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        JsonNode body = Bodies.json(req);
        db.checkAdmin(); // indexes are design documents: refused before the body is read
        return Response.json(200, mango.indexes().bulkDelete(db, body));
    }
}

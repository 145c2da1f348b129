package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.auth.Access;
import dev.chaise.storage.json.Json;
import dev.chaise.views.mango.Find;

/**
 * {@code POST /{db}/_find}, {@code _explain} and {@code GET /{db}/_index} on the special
 * {@code _all_docs} index ({@link Find}). Creating indexes ({@code POST _index}) stays 501
 * ({@link NotImplementedHandlers}).
 */
public final class MangoHandlers {
    private final Access access;

    public MangoHandlers(Access access) {
        this.access = access;
    }

    /** After {@link NotImplementedHandlers}: {@code GET _index} replaces its 501 there. */
    public void register(Router r) {
        r.add("POST", "/{db}/_find", this::find);
        r.add("GET", "/{db}/_index", this::indexes);
        r.add("POST", "/{db}/_explain", this::explain);
    }

    private Response find(Request req) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        Find.Query q = Find.parse(Bodies.json(req));
        Find.Result r = Find.run(db.db(), q);
        ObjectNode out = Json.NODES.objectNode();
        ArrayNode list = out.putArray("docs");
        r.docs().forEach(d -> {
            ObjectNode readable = d instanceof ObjectNode o ? db.readableOrNull(o) : null; // _users: as the caller may see it
            if (readable != null) list.add(readable);
        });
        out.put("bookmark", r.bookmark());
        out.put("warning", String.join("\n", r.warnings()));
        if (q.executionStats()) {
            ObjectNode s = out.putObject("execution_stats");
            s.put("total_keys_examined", 0);
            s.put("total_docs_examined", r.stats().docsExamined());
            s.put("total_quorum_docs_examined", 0);
            s.put("results_returned", r.stats().resultsReturned());
            s.put("execution_time_ms", r.stats().millis());
        }
        return Response.json(200, out);
    }

    private Response explain(Request req) {
        Access.Db db = access.database(req, req.param("db"), Access.Level.MEMBER);
        Bodies.requireContentType(req, Response.JSON);
        com.fasterxml.jackson.databind.JsonNode body = Bodies.json(req);
        return Response.json(200, Find.explain(db.name(), Find.parse(body), body));
    }

    private Response indexes(Request req) {
        access.database(req, req.param("db"), Access.Level.MEMBER);
        ObjectNode out = Json.NODES.objectNode();
        out.put("total_rows", 1);
        out.putArray("indexes").add(Find.specialIndex());
        return Response.json(200, out);
    }
}

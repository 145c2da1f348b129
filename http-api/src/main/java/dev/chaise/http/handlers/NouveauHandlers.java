package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.storage.Database;
import dev.chaise.storage.DocumentJson;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import dev.chaise.views.DesignDocs;
import dev.chaise.views.search.SearchIndexDef;
import dev.chaise.views.search.SearchIndexes;
import dev.chaise.views.search.SearchRequest;
import java.util.Map;

/**
 * Nouveau, CouchDB 3.5's full-text search ({@code nouveau_httpd}), served in process:
 * {@code GET|POST /{db}/_design/{ddoc}/_nouveau/{index}}, {@code GET .../_nouveau_info/{index}},
 * {@code POST /{db}/_nouveau_cleanup} and {@code POST /_nouveau_analyze}. With
 * {@code [nouveau] enable = false} all but the cleanup answer 404, as nouveau_httpd's do.
 */
public final class NouveauHandlers {
    private final SearchIndexes search;
    private final Access access;

    /** Applies {@code [nouveau] enable} and {@code max_indexes_open} from {@code config}, now and as they change. */
    public NouveauHandlers(SearchIndexes search, Access access, ConfigStore config) {
        this.search = search;
        this.access = access;
        for (String key : new String[] {"enable", "max_indexes_open"}) apply(key, config.get(SECTION, key).orElse(null));
        config.addListener((section, key, value) -> {
            if (section.equals(SECTION)) apply(key, value);
        });
    }

    private static final String SECTION = "nouveau";

    /**
     * {@code enable}: on unless {@code false} (CouchDB's default is off because Nouveau is a
     * service to run beside it; here there is none). {@code max_indexes_open}: a positive count,
     * else the default, as Nouveau's {@code maxIndexesOpen}.
     */
    private void apply(String key, String value) {
        String v = value == null ? "" : value.strip();
        switch (key) {
            case "enable" -> search.enable(!v.equals("false"));
            case "max_indexes_open" -> search.maxIndexesOpen(v.matches("[1-9][0-9]{0,8}") ? Integer.parseInt(v) : SearchIndexes.MAX_INDEXES_OPEN);
            default -> { }
        }
    }

    /** nouveau_httpd's {@code check_if_enabled}: a bare 404 while {@code [nouveau] enable} is false. */
    private void requireEnabled() {
        if (!search.enabled()) throw StorageException.notFound("missing");
    }

    public void register(Router r) {
        r.add("GET", "/{db}/_design/{ddoc}/_nouveau/{index}", req -> {
            SecuredDb adb = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
            requireEnabled();
            return query(req, adb, SearchRequest.fromQuery(req::query).inPartition(req.query("partition")));
        });
        r.add("POST", "/{db}/_design/{ddoc}/_nouveau/{index}", req -> {
            SecuredDb adb = access.database(req, req.param("db"), SecuredDb.Level.MEMBER);
            requireEnabled();
            Bodies.requireContentType(req, Response.JSON);
            return query(req, adb, SearchRequest.fromBody(Bodies.jsonObject(req)).inPartition(req.query("partition")));
        });
        r.add("GET", "/{db}/_design/{ddoc}/_nouveau_info/{index}", this::info);
        r.add("POST", "/{db}/_nouveau_cleanup", req -> {
            Database db = access.database(req, req.param("db"), SecuredDb.Level.REQUIRE_DB_ADMIN).database();
            Bodies.requireContentType(req, Response.JSON);
            search.cleanup(db, DesignDocs.ids(db));
            return Response.json(202, Map.of("ok", true));
        });
        r.add("POST", "/_nouveau_analyze", req -> {
            requireEnabled();
            Bodies.requireContentType(req, Response.JSON);
            ObjectNode body = Bodies.jsonObject(req);
            JsonNode analyzer = body.get("analyzer");
            JsonNode text = body.get("text");
            if (analyzer == null || text == null || !analyzer.isTextual() || !text.isTextual() || analyzer.textValue().isEmpty() || text.textValue().isEmpty()) {
                throw HttpError.badRequest("analyzer and text must both be non-empty strings");
            }
            return Response.json(200, Map.of("tokens", SearchIndexes.analyze(analyzer.textValue(), text.textValue())));
        });
    }

    private static String ddocId(Request req) {
        return DocumentJson.DESIGN_PREFIX + req.param("ddoc");
    }

    private Response query(Request req, SecuredDb adb, SearchRequest q) {
        Database db = adb.database();
        SearchIndexDef def = search.definition(db, ddocId(req), req.param("index"));
        var result = search.search(db, def, q);
        ObjectNode out = Json.NODES.objectNode();
        out.put("total_hits", result.totalHits());
        out.put("total_hits_relation", result.totalHitsRelation());
        ArrayNode hits = out.putArray("hits");
        for (var h : result.hits()) {
            ObjectNode o = hits.addObject();
            o.put("id", h.id());
            o.set("order", h.order());
            o.set("fields", h.fields());
            if (q.includeDocs()) o.set("doc", doc(adb, db, h.id()));
        }
        out.put("bookmark", result.bookmark());
        out.set("counts", result.counts() == null ? Json.NODES.nullNode() : Json.MAPPER.valueToTree(result.counts()));
        out.set("ranges", result.ranges() == null ? Json.NODES.nullNode() : Json.MAPPER.valueToTree(result.ranges()));
        out.put("update_latency", result.updateLatency());
        return Response.json(200, out);
    }

    /** The hit's document as its reader may see it; null if it went since the index saw it. */
    private static JsonNode doc(SecuredDb adb, Database db, String id) {
        try {
            ObjectNode d = adb.renderOrNull(db.get(id, null, false), DocumentJson.Meta.NONE);
            return d == null ? Json.NODES.nullNode() : d;
        } catch (StorageException e) {
            if (e.kind() != StorageException.Kind.NOT_FOUND) throw e;
            return Json.NODES.nullNode();
        }
    }

    private Response info(Request req) {
        Database db = access.database(req, req.param("db"), SecuredDb.Level.MEMBER).database();
        requireEnabled();
        SearchIndexDef def = search.definition(db, ddocId(req), req.param("index"));
        ObjectNode out = Json.NODES.objectNode();
        out.put("name", def.ddocId() + "/" + def.name());
        out.set("search_index", search.info(db, def));
        return Response.json(200, out);
    }
}

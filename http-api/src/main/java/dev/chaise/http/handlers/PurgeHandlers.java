package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.config.ConfigStore;
import dev.chaise.http.HttpError;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.storage.SecuredDb;
import dev.chaise.storage.PurgeRequest;
import dev.chaise.storage.Purged;
import dev.chaise.storage.PurgedInfos;
import dev.chaise.storage.RevId;
import dev.chaise.storage.StorageException;
import dev.chaise.storage.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * CouchDB 3's purge endpoints, as chttpd_db serves them: {@code POST /{db}/_purge} (server admins),
 * {@code GET /{db}/_purged_infos}, and {@code GET|PUT /{db}/_purged_infos_limit} (PUT for server
 * admins). A request is one transaction ({@link dev.chaise.storage.Database#purge}), bounded by
 * {@code [purge] max_document_id_number} (100) and {@code max_revisions_number} (1000).
 */
public final class PurgeHandlers {
    private final Access access;
    private final ConfigStore config;

    private final dev.chaise.http.metrics.HttpdStats counts;

    public PurgeHandlers(Access access, ConfigStore config) {
        this.access = access;
        this.counts = dev.chaise.http.metrics.HttpdStats.of(access.stats());
        this.config = config;
    }

    public void register(Router r) {
        r.add("POST", "/{db}/_purge", this::purge);
        r.add("GET", "/{db}/_purged_infos", this::infos);
        r.add("GET", "/{db}/_purged_infos_limit", req -> Response.json(200, db(req, SecuredDb.Level.MEMBER).database().purgedInfosLimit()));
        r.add("PUT", "/{db}/_purged_infos_limit", this::setLimit);
    }

    private SecuredDb db(Request req, SecuredDb.Level level) {
        return access.database(req, req.param("db"), level);
    }

    private int setting(String key, int fallback) {
        return config.get("purge", key).map(v -> {
            try {
                return Integer.parseInt(v.strip());
            } catch (NumberFormatException e) {
                return fallback;
            }
        }).orElse(fallback);
    }

    private Response purge(Request req) {
        SecuredDb db = db(req, SecuredDb.Level.SERVER_ADMIN); // chttpd_auth_request: require_admin
        counts.purgeRequests().increment();
        Bodies.requireContentType(req, Response.JSON);
        ObjectNode body = Bodies.jsonObject(req);
        List<PurgeRequest> requests = new ArrayList<>(body.size());
        int revs = 0;
        for (Map.Entry<String, JsonNode> e : body.properties()) {
            JsonNode list = e.getValue();
            if (!list.isArray()) throw StorageException.badRequest(RevId.INVALID);
            List<RevId> rs = new ArrayList<>(list.size());
            for (JsonNode r : list) {
                if (!r.isTextual()) throw StorageException.badRequest(RevId.INVALID);
                rs.add(RevId.parse(r.textValue()));
            }
            revs += rs.size();
            requests.add(new PurgeRequest(e.getKey(), rs));
        }
        if (requests.size() > setting("max_document_id_number", 100)) throw HttpError.badRequest("Exceeded maximum number of documents.");
        if (revs > setting("max_revisions_number", 1000)) throw HttpError.badRequest("Exceeded maximum number of revisions.");
        counts.purgesTotal().add(requests.size());
        List<Purged> results;
        try {
            results = requests.isEmpty() ? List.of() : db.purge(requests);
        } catch (RuntimeException e) {
            counts.purgesFailure().add(requests.size()); // one transaction: none of them was purged
            throw e;
        }
        counts.purgesSuccess().add(results.size());
        ObjectNode out = Json.NODES.objectNode();
        out.putNull("purge_seq");
        ObjectNode purged = out.putObject("purged");
        for (Purged p : results) {
            ArrayNode a = purged.putArray(p.id());
            for (RevId r : p.revs()) a.add(r.toString());
        }
        return Response.json(201, out);
    }

    private Response infos(Request req) {
        SecuredDb db = db(req, SecuredDb.Level.MEMBER);
        ObjectNode out = Json.NODES.objectNode();
        ArrayNode list = out.putArray("purged_infos");
        for (PurgedInfos.Info i : db.database().purgedInfos()) {
            ObjectNode o = list.addObject().put("id", i.id());
            ArrayNode a = o.putArray("revs");
            for (RevId r : i.revs()) a.add(r.toString());
        }
        return Response.json(200, out);
    }

    private Response setLimit(Request req) {
        SecuredDb db = db(req, SecuredDb.Level.SERVER_ADMIN); // chttpd_auth_request: require_admin
        JsonNode n = Bodies.json(req);
        if (!n.isIntegralNumber() || !n.canConvertToInt() || n.intValue() < 1) {
            throw HttpError.badRequest("`purged_infos_limit` must be positive integer");
        }
        db.setPurgedInfosLimit(n.intValue());
        return Response.ok();
    }
}

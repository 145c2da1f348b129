package dev.chaise.http.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.http.Bodies;
import dev.chaise.http.HttpError;
import dev.chaise.http.Queries;
import dev.chaise.http.Request;
import dev.chaise.http.Response;
import dev.chaise.http.Router;
import dev.chaise.http.auth.Authenticator;
import dev.chaise.http.auth.SessionCookies;
import dev.chaise.replicator.ReplicationSpec;
import dev.chaise.replicator.ReplicateRequests;
import dev.chaise.replicator.ReplicatorDocs;
import dev.chaise.replicator.SchedulerPages;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

/**
 * {@code POST /_replicate} and {@code GET /_scheduler/jobs|docs}, as couch_replicator_httpd serves
 * them: {@code _replicate} for any signed-in user (credentials travel in the endpoints),
 * {@code _scheduler} for server admins. Without a replicator (a server built without one) they
 * are an honest 501.
 */
public final class ReplicatorHandlers {
    static final List<String> STATES = List.of("initializing", "error", "running", "pending", "crashing", "completed", "failed");
    private final Supplier<ReplicateRequests> requests;
    private final Supplier<SchedulerPages> pages;

    /** Both give null on a server without a replicator: the endpoints then answer 501. */
    public ReplicatorHandlers(Supplier<ReplicateRequests> requests, Supplier<SchedulerPages> pages) {
        this.requests = requests;
        this.pages = pages;
    }

    public void register(Router r) {
        r.add("POST", "/_replicate", this::replicate);
        r.add("GET", "/_scheduler/jobs", req -> {
            SchedulerPages rep = admin(req);
            return Response.json(200, rep.jobs((int) Math.min(Integer.MAX_VALUE, Queries.nonNegative(req, "skip", 0)),
                    (int) Math.min(Integer.MAX_VALUE, Queries.nonNegative(req, "limit", 100))));
        });
        r.add("GET", "/_scheduler/jobs/{id}", req -> Response.json(200, admin(req).job(req.param("id"))));
        r.add("GET", "/_scheduler/docs", this::docs);
        r.add("GET", "/_scheduler/docs/{rest...}", req -> {
            List<String> parts = List.of(req.param("rest").split("/", -1));
            // /_scheduler/docs/_replicator[/docid]; the doc id may hold '/', as CouchDB takes it unquoted
            if (parts.isEmpty() || !parts.getFirst().equals(ReplicatorDocs.DB)) {
                admin(req);
                throw HttpError.badRequest("Invalid path");
            }
            if (parts.size() == 1) return docs(req);
            SchedulerPages rep = admin(req);
            return Response.json(200, rep.doc(String.join("/", parts.subList(1, parts.size()))));
        });
        r.add("GET", "/_scheduler/{rest...}", req -> {
            admin(req);
            throw HttpError.notFound("missing");
        });
    }

    private static <T> T get(Supplier<T> part) {
        T r = part.get();
        if (r == null) throw HttpError.notImplemented("Not implemented by Chaise: server-side replication is not configured on this server");
        return r;
    }

    private SchedulerPages admin(Request req) {
        Access.requireServerAdmin(req);
        return get(pages);
    }

    private Response replicate(Request req) throws Exception {
        if (req.user().isAnonymous()) throw HttpError.unauthorized("Authentication required.");
        ReplicateRequests rep = get(requests);
        Bodies.requireContentType(req, Response.JSON);
        JsonNode body = Bodies.json(req);
        if (!body.isObject()) throw HttpError.badRequest("Request body must be a JSON object");
        ReplicationSpec.RepUser user = new ReplicationSpec.RepUser(req.user().name(), req.user().roles());
        String cookie = Authenticator.cookieValue(req, SessionCookies.NAME);
        ReplicateRequests.Answer a = rep.replicate(body, user, req.header("Authorization"), cookie == null ? null : SessionCookies.NAME + "=" + cookie);
        return Response.json(a.status(), a.body());
    }

    private Response docs(Request req) {
        SchedulerPages rep = admin(req);
        Set<String> states = new LinkedHashSet<>();
        String qs = req.query("states");
        if (qs != null) {
            for (String s : qs.split(",")) {
                String st = s.strip().toLowerCase(Locale.ROOT);
                if (st.isEmpty()) continue;
                if (!STATES.contains(st)) {
                    throw HttpError.queryParseError("Unknown states [" + st + "]. Choose from: [" + String.join(",", STATES) + "]");
                }
                states.add(st);
            }
        }
        int skip = (int) Math.min(Integer.MAX_VALUE, Queries.nonNegative(req, "skip", 0));
        int limit = (int) Math.min(Integer.MAX_VALUE, Queries.nonNegative(req, "limit", Integer.MAX_VALUE));
        return Response.json(200, rep.docs(states, skip, limit));
    }
}

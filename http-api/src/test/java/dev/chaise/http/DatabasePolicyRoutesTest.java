package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Every route of a database, taken from the router itself (so a route added later is in here
 * without anyone remembering it), against a database whose {@code _security} admits only bob:
 * refused to an anonymous caller (401) and to eve, signed in but no member (401 or 403), with none
 * of the database's document data in the answer; and for bob every route but the admins' still
 * works, the document reads among them answering with the documents.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class) // the refusals first: the member's writes come after
class DatabasePolicyRoutesTest {
    static final String SECRET = "TOPSECRET";
    static HttpTestServer s;

    /** Routes a member may not use, each CouchDB's rule: server or database admins only. */
    static final Set<String> ADMINS_ONLY = Set.of(
            "PUT /{db}", "DELETE /{db}",                                                      // server admin
            "POST /{db}/_purge", "PUT /{db}/_purged_infos_limit",                              // server admin
            "PUT /{db}/_security", "PUT /{db}/_revs_limit",                                    // check_is_admin
            "POST /{db}/_compact", "POST /{db}/_compact/{ddoc}", "POST /{db}/_view_cleanup",   // require_db_admin
            "POST /{db}/_nouveau_cleanup",                                                     // require_db_admin
            "PUT /{db}/_design/{ddoc}", "PUT /{db}/_design/{ddoc}/{att...}", "DELETE /{db}/_design/{ddoc}/{att...}", // design documents
            "POST /{db}/_index", "DELETE /{db}/_index/{ddoc}/{type}/{name}",                    // indexes are design documents
            "DELETE /{db}/_index/_design/{ddoc}/{type}/{name}", "POST /{db}/_index/_bulk_delete");

    /** Routes answered before any database is opened: a malformed path, the same for everyone and with no data. */
    static final Set<String> NO_DATABASE = Set.of("GET /{db}/_local", "PUT /{db}/_local", "DELETE /{db}/_local", "COPY /{db}/_local",
            "POST /{db}/_local", "GET /{db}/_local/{ldoc}/{att...}", "PUT /{db}/_local/{ldoc}/{att...}",
            "DELETE /{db}/_local/{ldoc}/{att...}", "COPY /{db}/_local/{ldoc}/{att...}", "POST /{db}/_local/{ldoc}/{att...}");

    /** Reads that hand out documents: a member gets the secret in each. */
    static final Set<String> DOCUMENT_READS = Set.of("GET /{db}/{docid}", "GET /{db}/_all_docs", "POST /{db}/_all_docs",
            "POST /{db}/_all_docs/queries", "GET /{db}/_changes", "POST /{db}/_changes", "POST /{db}/_bulk_get", "POST /{db}/_find",
            "GET /{db}/_design/{ddoc}/_view/{view}", "POST /{db}/_design/{ddoc}/_view/{view}", "GET /{db}/_local/{ldoc}",
            "GET /{db}/{docid}/{att...}", "GET /{db}/_design_docs",
            "GET /{db}/_design/{ddoc}/_nouveau/{index}", "POST /{db}/_design/{ddoc}/_nouveau/{index}");

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/secret", null).status(201);
        s.asAdmin("PUT", "/secret/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
        s.asAdmin("PUT", "/secret/doc1", "{\"marker\":\"" + SECRET + "\",\"_attachments\":{\"a.txt\":{\"content_type\":\"text/plain\","
                + "\"data\":\"" + HttpTestServer.b64(SECRET + "-attachment") + "\"}}}").status(201);
        s.asAdmin("PUT", "/secret/_design/d", "{\"views\":{\"v\":{\"map\":\"function(doc){ if (doc.marker) emit(doc._id, doc.marker); }\"}},"
                + "\"filters\":{\"f\":\"function(doc){ return true; }\"},\"note\":\"" + SECRET + "\","
                + "\"nouveau\":{\"i\":{\"index\":\"function(doc){ if (doc.marker) index('string', 'marker', doc.marker); }\"}}}").status(201);
        s.asAdmin("PUT", "/secret/_local/l", "{\"marker\":\"" + SECRET + "\"}").status(201);
        s.asAdmin("POST", "/secret/_index", "{\"index\":{\"fields\":[\"marker\"]},\"ddoc\":\"m\",\"name\":\"byMarker\"}").status(200);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    /** The router's database routes, reads first (a member's writes come after every read of the same data). */
    static List<Router.Route> databaseRoutes() {
        List<Router.Route> routes = new ArrayList<>();
        for (Router.Route r : s.http.router().routes()) if (r.pattern().startsWith("/{db}")) routes.add(r);
        routes.sort(Comparator.comparing((Router.Route r) -> !r.method().equals("GET")).thenComparing(r -> r.method().equals("DELETE")));
        assertTrue(routes.size() > 60, "expected the database routes, got " + routes.size());
        return routes;
    }

    static String key(Router.Route r) {
        return r.method() + " " + r.pattern();
    }

    /** A request for the route: placeholders filled with what the database holds, a plausible body. */
    static HttpTestServer.Resp call(Router.Route r, String auth) throws Exception {
        String path = r.pattern().replace("{db}", "secret").replace("{docid}", "doc1").replace("{ddoc}", "d").replace("{ldoc}", "l")
                .replace("{att...}", "a.txt").replace("{view}", "v").replace("{type}", "json").replace("{name}", "byMarker")
                .replace("{rest...}", "x").replace("{index}", "i").replace("{partition}", "p");
        String body = switch (r.pattern()) {
            case "/{db}/_bulk_docs" -> "{\"docs\":[{\"_id\":\"new1\"}]}";
            case "/{db}/_bulk_get" -> "{\"docs\":[{\"id\":\"doc1\"}]}";
            case "/{db}/_find", "/{db}/_explain" -> "{\"selector\":{\"marker\":{\"$gt\":null}}}";
            case "/{db}/_index" -> "{\"index\":{\"fields\":[\"other\"]}}";
            case "/{db}/_index/_bulk_delete" -> "{\"docids\":[\"_design/m\"]}";
            case "/{db}/_revs_diff", "/{db}/_missing_revs" -> "{\"doc1\":[\"1-0123\"]}";
            case "/{db}/_purge" -> "{\"doc1\":[\"1-0123\"]}";
            case "/{db}/_all_docs/queries", "/{db}/_design/{ddoc}/_view/{view}/queries" -> "{\"queries\":[{\"include_docs\":true}]}";
            case "/{db}/_revs_limit", "/{db}/_purged_infos_limit" -> "1000";
            case "/{db}/_security" -> "{}";
            default -> r.method().equals("POST") || r.method().equals("PUT") ? "{\"marker\":\"other\"}" : null;
        };
        if (r.pattern().equals("/{db}/_design/{ddoc}/_nouveau/{index}")) {
            if (r.method().equals("POST")) body = "{\"q\":\"*:*\",\"include_docs\":true}";
            else path += "?q=*:*&include_docs=true";
        }
        if (Set.of("/{db}/_all_docs", "/{db}/_changes", "/{db}/_design_docs", "/{db}/_design/{ddoc}/_view/{view}").contains(r.pattern())) {
            path += "?include_docs=true";
            if (r.method().equals("POST")) body = "{}";
        }
        List<String> h = new ArrayList<>(List.of("Content-Type", "application/json", "Destination", "copy1"));
        if (auth != null) h.addAll(List.of("Authorization", auth));
        return s.send(r.method(), path, body, h.toArray(String[]::new));
    }

    @Test
    @Order(1)
    void everyRouteRefusesWhomTheDatabaseRefuses() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (Router.Route r : databaseRoutes()) {
            for (String auth : new String[] {null, EVE}) {
                HttpTestServer.Resp resp = call(r, auth);
                boolean refused = resp.status() == 401 || (auth != null && resp.status() == 403);
                if (NO_DATABASE.contains(key(r))) refused = resp.status() == 400;
                if (!refused || resp.text().contains(SECRET)) wrong.add(key(r) + " as " + (auth == null ? "anonymous" : "eve") + ": " + resp.status() + " " + resp.text());
                if (resp.status() == 401 || resp.status() == 403) {
                    String error = resp.json().path("error").asText();
                    assertEquals(resp.status() == 401 ? "unauthorized" : "forbidden", error, key(r) + ": " + resp.text());
                }
            }
        }
        assertEquals(List.of(), wrong, "routes that did not refuse, or answered with the database's data");
        // Nothing was written by the refused: the member sees the data as it was.
        assertTrue(s.get("/secret/doc1", "Authorization", BOB).text().contains(SECRET));
        s.get("/secret/new1", "Authorization", ADMIN).status(404);
    }

    @Test
    @Order(2)
    void everyRouteStillServesAMember() throws Exception {
        Set<String> seen = new TreeSet<>();
        List<String> wrong = new ArrayList<>();
        for (Router.Route r : databaseRoutes()) {
            seen.add(key(r));
            HttpTestServer.Resp resp = call(r, BOB);
            boolean refused = resp.status() == 401 || resp.status() == 403;
            if (ADMINS_ONLY.contains(key(r))) {
                if (!refused) wrong.add(key(r) + " should be for admins only: " + resp.status() + " " + resp.text());
                assertFalse(resp.text().contains(SECRET), key(r));
            } else if (refused) {
                wrong.add(key(r) + " refused a member: " + resp.status() + " " + resp.text());
            } else if (DOCUMENT_READS.contains(key(r)) && !resp.text().contains(SECRET)) {
                wrong.add(key(r) + " did not answer with the document: " + resp.status() + " " + resp.text());
            }
        }
        assertEquals(List.of(), wrong);
        for (String k : ADMINS_ONLY) assertTrue(seen.contains(k), "not a route any more: " + k);
        for (String k : DOCUMENT_READS) assertTrue(seen.contains(k), "not a route any more: " + k);
    }
}

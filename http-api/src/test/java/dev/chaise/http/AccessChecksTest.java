package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every access check, both ways: 401 "who are you?" to an anonymous caller, and to a signed-in
 * one either 403 "you may not" (the checks of couch_db: membership, check_is_admin) or 401 again
 * (the checks chttpd_auth_request makes before a handler runs: require_admin, require_db_admin),
 * as CouchDB 3.5 answers. In {@code pub} anyone is a member and eve an admin; in {@code priv}
 * only bob is a member.
 */
class AccessChecksTest {
    static HttpTestServer s;
    static final String ANON = null;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/pub", null).status(201);
        s.asAdmin("PUT", "/pub/_security", "{\"admins\":{\"names\":[\"eve\"]}}").status(200);
        s.asAdmin("PUT", "/priv", null).status(201);
        s.asAdmin("PUT", "/priv/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
        s.asAdmin("PUT", "/pub/_design/d", "{\"views\":{\"v\":{\"map\":\"function(doc){ emit(doc._id); }\"}}}").status(201);
        s.asAdmin("PUT", "/pub/doc", "{}").status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp as(String auth, String method, String path, String body, String... headers) throws Exception {
        java.util.List<String> h = new java.util.ArrayList<>(java.util.List.of("Content-Type", "application/json"));
        if (auth != null) h.addAll(java.util.List.of("Authorization", auth));
        h.addAll(java.util.List.of(headers));
        return s.send(method, path, body, h.toArray(String[]::new));
    }

    @Test
    void membership() throws Exception {
        // couch_db:check_is_member (throw_security_error)
        as(ANON, "GET", "/priv", null).error(401, "unauthorized", "You are not authorized to access this db.");
        as(EVE, "GET", "/priv", null).error(403, "forbidden", "You are not allowed to access this db.");
        as(ANON, "PUT", "/priv/x", "{}").error(401, "unauthorized", "You are not authorized to access this db.");
        as(EVE, "PUT", "/priv/x", "{}").error(403, "forbidden", "You are not allowed to access this db.");
        as(EVE, "GET", "/priv/_security", null).error(403, "forbidden", "You are not allowed to access this db.");
        as(BOB, "GET", "/priv", null).status(200);
    }

    @Test
    void checkIsAdmin() throws Exception {
        // couch_db:check_is_admin: _security, _revs_limit
        for (String[] req : new String[][] {{"PUT", "/pub/_security", "{}"}, {"PUT", "/pub/_revs_limit", "5"}}) {
            as(ANON, req[0], req[1], req[2]).error(401, "unauthorized", "You are not a db or server admin.");
            as(BOB, req[0], req[1], req[2]).error(403, "forbidden", "You are not a db or server admin.");
        }
        as(EVE, "PUT", "/pub/_revs_limit", "5").status(200);
    }

    @Test
    void designDocumentWrites() throws Exception {
        // couch_db:validate_doc_update of a design document: check_is_admin
        String rev = as(ADMIN, "GET", "/pub/_design/d", null).json().get("_rev").asText();
        String[][] writes = {
            {"PUT", "/pub/_design/x", "{}"}, {"POST", "/pub", "{\"_id\":\"_design/x\"}"}, {"DELETE", "/pub/_design/d?rev=" + rev, null},
            {"PUT", "/pub/_design/d/att.txt?rev=" + rev, "x"}, {"DELETE", "/pub/_design/d/att.txt?rev=" + rev, null}};
        for (String[] w : writes) {
            as(ANON, w[0], w[1], w[2]).error(401, "unauthorized", "You are not a db or server admin.");
            as(BOB, w[0], w[1], w[2]).error(403, "forbidden", "You are not a db or server admin.");
        }
        as(ANON, "COPY", "/pub/doc", null, "Destination", "_design/c").error(401, "unauthorized", "You are not a db or server admin.");
        as(BOB, "COPY", "/pub/doc", null, "Destination", "_design/c").error(403, "forbidden", "You are not a db or server admin.");
        // _bulk_docs answers it per document.
        String anon = as(ANON, "POST", "/pub/_bulk_docs", "{\"docs\":[{\"_id\":\"_design/b\"}]}").status(201).text();
        String bob = as(BOB, "POST", "/pub/_bulk_docs", "{\"docs\":[{\"_id\":\"_design/b\"}]}").status(201).text();
        org.junit.jupiter.api.Assertions.assertEquals("[{\"id\":\"_design/b\",\"error\":\"unauthorized\",\"reason\":\"You are not a db or server admin.\"}]\n", anon);
        org.junit.jupiter.api.Assertions.assertEquals("[{\"id\":\"_design/b\",\"error\":\"forbidden\",\"reason\":\"You are not a db or server admin.\"}]\n", bob);
        as(EVE, "PUT", "/pub/_design/x", "{}").status(201);
    }

    @Test
    void requireDbAdmin() throws Exception {
        // chttpd_auth_request:require_db_admin throws unauthorized whoever asks
        for (String path : new String[] {"/pub/_compact", "/pub/_view_cleanup", "/pub/_compact/d"}) {
            as(ANON, "POST", path, "{}").error(401, "unauthorized", "You are not a server or db admin.");
            as(BOB, "POST", path, "{}").error(401, "unauthorized", "You are not a server or db admin.");
            as(EVE, "POST", path, "{}").status(202);
        }
    }

    @Test
    void requireServerAdmin() throws Exception {
        // chttpd_auth_request:require_admin (couch_httpd:verify_is_server_admin) throws unauthorized whoever asks
        String[][] reqs = {{"PUT", "/newdb", null}, {"DELETE", "/pub", null}, {"POST", "/pub/_purge", "{}"}, {"PUT", "/pub/_purged_infos_limit", "5"},
            {"GET", "/_all_dbs", null}, {"GET", "/_node/_local/_config", null}, {"GET", "/_users/_all_docs", null}};
        for (String[] r : reqs) {
            as(ANON, r[0], r[1], r[2]).error(401, "unauthorized", "You are not a server admin.");
            as(EVE, r[0], r[1], r[2]).error(401, "unauthorized", "You are not a server admin.");
        }
    }
}

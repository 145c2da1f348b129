package dev.chaise.http;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** CouchDB endpoints Chaise does not serve say so with 501, for every method, after the usual database checks. */
class NotImplementedEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/ni", null).status(201);
        s.asAdmin("PUT", "/ni/_design/d", "{\"_attachments\":{\"a.txt\":{\"content_type\":\"text/plain\",\"data\":\"aGk=\"}}}").status(201);
    }

    @AfterAll
    static void stop() throws Exception {
        s.close();
    }

    @Test
    void serverEndpoints() throws Exception {
        for (String path : new String[] {"/_reshard", "/_reshard/jobs",
                "/_cluster_setup", "/_search_analyze", "/_node/_local/_restart"}) {
            s.asAdmin("GET", path, null).error(501, "not_implemented", null);
            s.asAdmin("POST", path, "{}").error(501, "not_implemented", null);
        }
        s.asAdmin("POST", "/_reshard", "{}").error(501, "not_implemented", "Not implemented by Chaise: resharding");
        s.asAdmin("GET", "/_node/_local/_config/admins", null).status(200); // the served neighbours still are
        for (String path : new String[] {"/_node/_local/_stats", "/_node/_local/_stats/couchdb/request_time", "/_node/_local/_system", "/_node/_local/_prometheus"}) {
            s.asAdmin("GET", path, null).status(200);
            s.asAdmin("POST", path, "{}").error(405, "method_not_allowed", null);
        }
        s.asAdmin("GET", "/_schedulerx", null).error(400, "illegal_database_name", null);
    }

    @Test
    void databaseEndpoints() throws Exception {
        for (String path : new String[] {
                "/ni/_shards", "/ni/_shards/doc", "/ni/_sync_shards", "/ni/_partition/p/_all_docs", "/ni/_design/d/_search/idx"}) {
            for (String method : new String[] {"GET", "POST", "PUT", "DELETE"}) {
                s.asAdmin(method, path, method.equals("GET") || method.equals("DELETE") ? null : "{}").error(501, "not_implemented", null);
            }
        }
        s.asAdmin("POST", "/ni/_index", "{\"index\":{},\"type\":\"text\"}").error(501, "index_not_implemented", null); // no full-text search
        s.asAdmin("POST", "/nodb/_explain", "{}").error(404, "not_found", "Database does not exist.");
        s.send("POST", "/ni/_explain", "{}", "Content-Type", "application/json").error(401, "unauthorized", null);
        s.asAdmin("GET", "/ni/_design/d/a.txt", null).status(200); // design document attachments are still served
    }
}

package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ServerEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        for (String db : List.of("alpha", "beta", "gamma", "delta")) s.asAdmin("PUT", "/" + db, null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void welcome() throws Exception {
        var r = s.get("/").status(200);
        JsonNode j = r.json();
        assertEquals("Welcome", j.get("couchdb").asText());
        assertEquals("3.5.0", j.get("version").asText());
        assertTrue(j.get("uuid").asText().matches("[0-9a-f]{32}"), j.toString());
        assertTrue(j.get("features").isArray());
        assertEquals("[\"nouveau\",\"access-ready\",\"partitioned\",\"scheduler\"]", j.get("features").toString()); // what Chaise has, by CouchDB 3.5's names
        assertEquals("Chaise", j.get("vendor").get("name").asText());
        assertTrue(j.has("git_sha"));
        assertEquals("application/json", r.header("Content-Type"));
        assertEquals("must-revalidate", r.header("Cache-Control"));
        assertTrue(r.header("Server").startsWith("CouchDB/3.5.0"));
        assertTrue(r.header("X-Couch-Request-ID").matches("[0-9a-f]{10}"));
        // The uuid is the server's, not the request's.
        assertEquals(j.get("uuid"), s.get("/").json().get("uuid"));
        assertTrue(r.text().endsWith("\n"));
    }

    @Test
    void welcomeOnlyGet() throws Exception {
        var r = s.send("POST", "/", "{}").error(405, "method_not_allowed", "Only GET,HEAD allowed");
        assertEquals("GET,HEAD", r.header("Allow"));
    }

    @Test
    void headHasHeadersButNoBody() throws Exception {
        var get = s.get("/_up");
        var head = s.send("HEAD", "/_up", null).status(200);
        assertEquals("", head.text());
        assertEquals(get.header("Content-Length"), head.header("Content-Length"));
        assertEquals("application/json", head.header("Content-Type"));
    }

    @Test
    void up() throws Exception {
        assertEquals("{\"status\":\"ok\",\"seeds\":{}}\n", s.get("/_up").status(200).text());
    }

    @Test
    void uuids() throws Exception {
        var one = s.get("/_uuids").status(200);
        assertEquals(1, one.json().get("uuids").size());
        assertTrue(one.json().get("uuids").get(0).asText().matches("[0-9a-f]{32}"));
        assertEquals("no-cache", one.header("Cache-Control"));
        assertEquals("no-cache", one.header("Pragma"));
        assertNotNull(one.header("ETag"));
        assertNotEquals(one.json().get("uuids").get(0), s.get("/_uuids?count=1").json().get("uuids").get(0));
        JsonNode many = s.get("/_uuids?count=1000").status(200).json().get("uuids");
        Set<String> unique = new HashSet<>();
        many.forEach(u -> unique.add(u.asText()));
        assertEquals(1000, unique.size());
        assertEquals(0, s.get("/_uuids?count=0").status(200).json().get("uuids").size());
        s.get("/_uuids?count=1001").error(400, "bad_request", "count parameter too large");
        s.get("/_uuids?count=-1").error(400, "bad_request", "count must be a positive integer");
        s.get("/_uuids?count=abc").error(400, "bad_request", "count must be a positive integer");
        assertEquals("GET,HEAD", s.send("POST", "/_uuids?count=1000", "").error(405, "method_not_allowed", null).header("Allow"));
    }

    @Test
    void allDbsIsAdminOnly() throws Exception {
        s.get("/_all_dbs").error(401, "unauthorized", "You are not a server admin.");
        s.get("/_all_dbs", "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
        assertEquals("[\"alpha\",\"beta\",\"delta\",\"gamma\"]", s.get("/_all_dbs", "Authorization", ADMIN).status(200).text().strip());
    }

    @Test
    void allDbsParameters() throws Exception {
        assertEquals(List.of("beta", "delta"), names("/_all_dbs?startkey=%22b%22&endkey=%22e%22"));
        assertEquals(List.of("beta", "delta"), names("/_all_dbs?start_key=%22b%22&end_key=%22delta%22"));
        assertEquals(List.of("beta"), names("/_all_dbs?start_key=%22b%22&end_key=%22delta%22&inclusive_end=false"));
        assertEquals(List.of("gamma", "delta", "beta", "alpha"), names("/_all_dbs?descending=true"));
        assertEquals(List.of("delta", "beta"), names("/_all_dbs?descending=true&startkey=%22e%22&endkey=%22b%22"));
        assertEquals(List.of("beta", "delta"), names("/_all_dbs?skip=1&limit=2"));
        assertEquals(List.of(), names("/_all_dbs?limit=0"));
        // Non-string keys collate before (numbers) or after (arrays) every name.
        assertEquals(List.of("alpha", "beta", "delta", "gamma"), names("/_all_dbs?startkey=1"));
        assertEquals(List.of(), names("/_all_dbs?startkey=[]"));
        assertEquals(List.of(), names("/_all_dbs?endkey=null"));
        String admin = ADMIN;
        s.get("/_all_dbs?startkey=b", "Authorization", admin).error(400, "bad_request", "invalid UTF-8 JSON");
        s.get("/_all_dbs?limit=x", "Authorization", admin).error(400, "query_parse_error", "Invalid value for integer: \"x\"");
        s.get("/_all_dbs?limit=-1", "Authorization", admin).error(400, "query_parse_error", "Invalid value for positive integer: \"-1\"");
        s.get("/_all_dbs?descending=maybe", "Authorization", admin).error(400, "query_parse_error", "Invalid boolean parameter: \"maybe\"");
    }

    private static List<String> names(String path) throws Exception {
        List<String> out = new java.util.ArrayList<>();
        s.get(path, "Authorization", ADMIN).status(200).json().forEach(n -> out.add(n.asText()));
        return out;
    }

    @Test
    void allDbsOpenWhenConfigured() throws Exception {
        try (var open = new HttpTestServer(c -> c.withAdminOnlyAllDbs(false), r -> {})) {
            assertEquals("[]", open.get("/_all_dbs").status(200).text().strip());
        }
    }

    @Test
    void dbsInfo() throws Exception {
        var r = s.send("POST", "/_dbs_info", "{\"keys\":[\"alpha\",\"nope\",42,\"Bad!\"]}", "Authorization", ADMIN, "Content-Type", "application/json").status(200);
        JsonNode j = r.json();
        assertEquals(4, j.size());
        assertEquals("alpha", j.get(0).get("key").asText());
        assertEquals("alpha", j.get(0).get("info").get("db_name").asText());
        assertEquals(0, j.get(0).get("info").get("doc_count").asLong());
        assertEquals("{\"key\":\"nope\",\"error\":\"not_found\"}", j.get(1).toString());
        assertEquals("{\"key\":42,\"error\":\"not_found\"}", j.get(2).toString());
        assertEquals("not_found", j.get(3).get("error").asText());

        s.send("POST", "/_dbs_info", "{\"keys\":[]}", "Content-Type", "application/json").error(401, "unauthorized", "You are not a server admin.");
        s.send("POST", "/_dbs_info", "{}", "Authorization", ADMIN, "Content-Type", "application/json").error(400, "bad_request", "`keys` member must exist.");
        s.send("POST", "/_dbs_info", "{\"keys\":\"alpha\"}", "Authorization", ADMIN, "Content-Type", "application/json").error(400, "bad_request", "`keys` member must be an array.");
        s.send("POST", "/_dbs_info", "{\"keys\":[" + "\"a\",".repeat(100) + "\"a\"]}", "Authorization", ADMIN, "Content-Type", "application/json").error(400, "bad_request", "too_many_keys");
        s.send("POST", "/_dbs_info", "{\"keys\":[]}", "Authorization", ADMIN, "Content-Type", "text/plain").error(415, "bad_content_type", "Content-Type must be application/json");
        s.send("POST", "/_dbs_info", "{\"keys\":[", "Authorization", ADMIN, "Content-Type", "application/json").error(400, "bad_request", "invalid UTF-8 JSON");

        JsonNode all = s.get("/_dbs_info?limit=2", "Authorization", ADMIN).status(200).json();
        assertEquals(2, all.size());
        assertEquals("alpha", all.get(0).get("key").asText());
        assertEquals("beta", all.get(1).get("info").get("db_name").asText());
    }

    @Test
    void membershipAndTasksNeedAdmin() throws Exception {
        s.get("/_membership").error(401, "unauthorized", "You are not a server admin.");
        assertEquals("{\"all_nodes\":[\"chaise@127.0.0.1\"],\"cluster_nodes\":[\"chaise@127.0.0.1\"]}",
                s.get("/_membership", "Authorization", ADMIN).status(200).text().strip());
        s.get("/_active_tasks").error(401, "unauthorized", "You are not a server admin.");
        s.get("/_active_tasks", "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
        assertEquals("[]", s.get("/_active_tasks", "Authorization", ADMIN).status(200).text().strip());
    }

    @Test
    void notFound() throws Exception {
        s.get("/favicon.ico").error(404, "not_found", "missing");
        s.get("/alpha/_nothing/here/at/all", "Authorization", ADMIN).error(404, "not_found", "missing");
    }

    @Test
    void unknownUnderscorePathsAreServerAdminOnly() throws Exception {
        s.get("/_nope").error(401, "unauthorized", "You are not a server admin.");
        s.get("/_nope", "Authorization", ADMIN).error(400, "illegal_database_name", null);
    }

    @Test
    void requestIdIsEchoedWhenSane() throws Exception {
        assertEquals("abc-123", s.get("/_up", "X-Couch-Request-ID", "abc-123").header("X-Couch-Request-ID"));
        assertFalse(s.get("/_up", "X-Couch-Request-ID", "no spaces!").header("X-Couch-Request-ID").contains(" "));
    }
}

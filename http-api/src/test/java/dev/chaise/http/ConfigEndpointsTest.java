package dev.chaise.http;

import dev.chaise.http.config.InMemoryConfigStore;
import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.b64;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ConfigEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.config.set("chttpd", "port", "5984", false);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void nodeName() throws Exception {
        assertEquals("{\"name\":\"chaise@127.0.0.1\"}\n", s.get("/_node/_local", "Authorization", ADMIN).status(200).text());
        s.get("/_node/_local").error(401, "unauthorized", "You are not a server admin.");
        s.get("/_node/other@host/_config", "Authorization", ADMIN).error(404, "not_found", "no such node: other@host");
        s.get("/_node/chaise@127.0.0.1/_config/chttpd/port", "Authorization", ADMIN).status(200);
    }

    @Test
    void read() throws Exception {
        JsonNode all = s.get("/_node/_local/_config", "Authorization", ADMIN).status(200).json();
        assertEquals("5984", all.get("chttpd").get("port").asText());
        assertTrue(all.get("admins").get("admin").asText().startsWith("-pbkdf2:sha256-"));
        assertEquals("{\"port\":\"5984\"}\n", s.get("/_node/_local/_config/chttpd", "Authorization", ADMIN).status(200).text());
        assertEquals("{}\n", s.get("/_node/_local/_config/nosuchsection", "Authorization", ADMIN).status(200).text());
        assertEquals("\"5984\"\n", s.get("/_node/_local/_config/chttpd/port", "Authorization", ADMIN).status(200).text());
        s.get("/_node/_local/_config/chttpd/nokey", "Authorization", ADMIN).error(404, "not_found", "unknown_config_value");
        s.get("/_node/_local/_config", "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
    }

    @Test
    void changeAnAdminPassword() throws Exception {
        String old = s.config.get("admins", "admin").orElseThrow();
        // A new admin: the stored value is hashed, and the new admin can log in at once.
        var put = s.send("PUT", "/_node/_local/_config/admins/carol", "\"c4rol\"", "Authorization", ADMIN).status(200);
        assertEquals("\"\"\n", put.text());
        String stored = s.config.get("admins", "carol").orElseThrow();
        assertTrue(stored.matches("-pbkdf2:sha256-[0-9a-f]{64},[0-9a-f]{32},10"), stored);
        String carol = "Basic " + b64("carol:c4rol");
        assertEquals("[]\n", s.get("/_active_tasks", "Authorization", carol).status(200).text());
        // Changing her password returns the old hash and the old password stops working.
        var again = s.send("PUT", "/_node/_local/_config/admins/carol", "\"new\"", "Authorization", carol).status(200);
        assertEquals("\"" + stored + "\"\n", again.text());
        s.get("/_active_tasks", "Authorization", carol).error(401, "unauthorized", "Name or password is incorrect.");
        s.get("/_active_tasks", "Authorization", "Basic " + b64("carol:new")).status(200);
        // Deleting returns the old value.
        assertTrue(s.send("DELETE", "/_node/_local/_config/admins/carol", null, "Authorization", ADMIN).status(200).text().startsWith("\"-pbkdf2:"));
        s.get("/_active_tasks", "Authorization", "Basic " + b64("carol:new")).error(401, "unauthorized", "Name or password is incorrect.");
        s.send("DELETE", "/_node/_local/_config/admins/carol", null, "Authorization", ADMIN).error(404, "not_found", "unknown_config_value");
        assertEquals(old, s.config.get("admins", "admin").orElseThrow());
    }

    @Test
    void alreadyHashedValuesAreKept() throws Exception {
        String h = dev.chaise.http.auth.PasswordHash.create("x", "sha", 5).toAdminString().replace("-pbkdf2:sha-", "-pbkdf2-");
        s.send("PUT", "/_node/_local/_config/admins/dave", "\"" + h + "\"", "Authorization", ADMIN).status(200);
        assertEquals(h, s.config.get("admins", "dave").orElseThrow());
        s.get("/_active_tasks", "Authorization", "Basic " + b64("dave:x")).status(200);
    }

    @Test
    void corsKeysAreWritable() throws Exception {
        s.send("PUT", "/_node/_local/_config/cors/origins", "\"https://example.com\"", "Authorization", ADMIN).status(200);
        s.send("PUT", "/_node/_local/_config/chttpd/enable_cors", "\"true\"", "Authorization", ADMIN).status(200);
        assertEquals("\"https://example.com\"\n", s.get("/_node/_local/_config/cors/origins", "Authorization", ADMIN).text());
    }

    @Test
    void everyKeyButTheBlacklistedSectionsIsWritableAndUnknownOnesAreKept() throws Exception {
        // As CouchDB: a key read only at start (the port) is stored, and applies at the next start.
        assertEquals("\"5984\"\n", s.send("PUT", "/_node/_local/_config/chttpd/port", "\"1\"", "Authorization", ADMIN).status(200).text());
        assertEquals("\"1\"\n", s.send("DELETE", "/_node/_local/_config/chttpd/port", null, "Authorization", ADMIN).status(200).text());
        s.send("PUT", "/_node/_local/_config/no_such_section/whatever", "\"kept\"", "Authorization", ADMIN).status(200);
        assertEquals("kept", s.get("/_node/_local/_config", "Authorization", ADMIN).json().get("no_such_section").get("whatever").asText());
        s.send("PUT", "/_node/_local/_config/query_servers/js", "\"x\"", "Authorization", ADMIN)
                .error(403, "forbidden", "Config section blacklisted for modification over HTTP API.");
        s.send("PUT", "/_node/_local/_config/admins/x", "42", "Authorization", ADMIN).error(400, "bad_request", "a JSON string expected");
        s.send("PUT", "/_node/_local/_config/admins/x", "\"y\"").error(401, "unauthorized", "You are not a server admin.");
        assertEquals("DELETE,GET,HEAD,PUT", s.send("POST", "/_node/_local/_config/admins/x", "\"y\"", "Authorization", ADMIN)
                .error(405, "method_not_allowed", null).header("Allow"));
    }

    @Test
    void liveKeysApplyWithoutARestart() throws Exception {
        s.get("/_uuids?count=5").status(200);
        s.send("PUT", "/_node/_local/_config/uuids/max_count", "\"2\"", "Authorization", ADMIN).status(200);
        s.get("/_uuids?count=5").error(400, "bad_request", "count parameter too large");
        s.send("DELETE", "/_node/_local/_config/uuids/max_count", null, "Authorization", ADMIN).status(200);
        s.get("/_uuids?count=5").status(200);

        s.get("/_all_dbs", "Authorization", BOB).status(401);
        s.send("PUT", "/_node/_local/_config/chttpd/admin_only_all_dbs", "\"false\"", "Authorization", ADMIN).status(200);
        s.get("/_all_dbs", "Authorization", BOB).status(200);
        s.send("PUT", "/_node/_local/_config/chttpd/admin_only_all_dbs", "\"not a boolean\"", "Authorization", ADMIN).status(200);
        s.get("/_all_dbs", "Authorization", BOB).status(401); // a bad value falls back to the start value, never a 500
        s.send("DELETE", "/_node/_local/_config/chttpd/admin_only_all_dbs", null, "Authorization", ADMIN).status(200);

        var login = s.send("POST", "/_session", "{\"name\":\"admin\",\"password\":\"pass\"}", "Content-Type", "application/json");
        org.junit.jupiter.api.Assertions.assertTrue(login.header("Set-Cookie").contains("Max-Age=600"), login.header("Set-Cookie"));
        s.send("PUT", "/_node/_local/_config/chttpd_auth/timeout", "\"42\"", "Authorization", ADMIN).status(200);
        s.send("PUT", "/_node/_local/_config/chttpd_auth/same_site", "\"strict\"", "Authorization", ADMIN).status(200);
        login = s.send("POST", "/_session", "{\"name\":\"admin\",\"password\":\"pass\"}", "Content-Type", "application/json");
        org.junit.jupiter.api.Assertions.assertTrue(login.header("Set-Cookie").contains("Max-Age=42"), login.header("Set-Cookie"));
        org.junit.jupiter.api.Assertions.assertTrue(login.header("Set-Cookie").contains("SameSite=Strict"), login.header("Set-Cookie"));
        s.send("DELETE", "/_node/_local/_config/chttpd_auth/timeout", null, "Authorization", ADMIN).status(200);
        s.send("DELETE", "/_node/_local/_config/chttpd_auth/same_site", null, "Authorization", ADMIN).status(200);
    }

    @Test
    void nonPersistentChangesAreNotPersisted() throws Exception {
        var persisted = new java.util.ArrayList<String>();
        InMemoryConfigStore recording = new InMemoryConfigStore() {
            @Override
            protected void persistSet(String section, String key, String value) {
                persisted.add(section + "/" + key);
            }
        };
        recording.set("cors", "origins", "a", false);
        recording.set("cors", "headers", "b", true);
        assertEquals(java.util.List.of("cors/headers"), persisted);
    }
}

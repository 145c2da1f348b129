package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class DatabaseEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void createInfoDelete() throws Exception {
        var created = s.asAdmin("PUT", "/things", null).status(201);
        assertEquals("{\"ok\":true}\n", created.text());
        assertTrue(created.header("Location").endsWith("/things"), created.header("Location"));
        s.asAdmin("PUT", "/things", null).error(412, "file_exists", "The database could not be created, the file already exists.");

        JsonNode info = s.asAdmin("GET", "/things", null).status(200).json();
        assertEquals("things", info.get("db_name").asText());
        assertEquals(0, info.get("doc_count").asLong());
        assertEquals(0, info.get("doc_del_count").asLong());
        assertEquals("0", info.get("update_seq").asText());
        assertEquals("0", info.get("purge_seq").asText());
        assertEquals("0", info.get("instance_start_time").asText());
        assertEquals(false, info.get("compact_running").asBoolean());
        assertEquals("{}", info.get("props").toString());
        assertEquals("{\"q\":1,\"n\":1,\"w\":1,\"r\":1}", info.get("cluster").toString());
        assertTrue(info.get("sizes").has("file") && info.get("sizes").has("external") && info.get("sizes").has("active"), info.toString());
        assertTrue(info.get("disk_format_version").isInt());

        var head = s.send("HEAD", "/things", null, "Authorization", ADMIN).status(200);
        assertEquals("", head.text());
        s.send("HEAD", "/missing", null, "Authorization", ADMIN).status(404);

        assertEquals("{\"ok\":true}\n", s.asAdmin("DELETE", "/things", null).status(200).text());
        s.asAdmin("GET", "/things", null).error(404, "not_found", "Database does not exist.");
        s.asAdmin("DELETE", "/things", null).error(404, "not_found", "Database does not exist.");
    }

    @Test
    void updateSeqIsHexOnceWritten() throws Exception {
        s.asAdmin("PUT", "/seqdb", null).status(201);
        s.docs.open("seqdb").updateUnchecked(java.util.List.of(dev.chaise.storage.DocUpdate.edit("a", null, false,
                dev.chaise.storage.json.Json.MAPPER.createObjectNode().put("x", 1))), true);
        JsonNode info = s.asAdmin("GET", "/seqdb", null).json();
        assertEquals(1, info.get("doc_count").asLong());
        assertTrue(info.get("update_seq").asText().matches("[0-9a-f]{26}"), info.toString());
        assertTrue(info.get("sizes").get("external").asLong() > 0);
    }

    @Test
    void illegalNames() throws Exception {
        s.asAdmin("PUT", "/Bad", null).error(400, "illegal_database_name",
                "Name: 'Bad'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.");
        s.asAdmin("PUT", "/1abc", null).error(400, "illegal_database_name", null);
        s.asAdmin("PUT", "/_underscore", null).error(400, "illegal_database_name", null);
        // fabric_db_create: a legal name too long for a shard's file name (238 + ".1234567890.couch" = 255 bytes).
        String long239 = "a".repeat(239);
        s.asAdmin("PUT", "/" + long239, null).error(400, "database_name_too_long", "At least one path segment of `" + long239 + "` is too long.");
        s.asAdmin("GET", "/" + long239, null).error(404, "not_found", null);
        s.asAdmin("PUT", "/" + "a".repeat(238), null).status(201);
        s.asAdmin("PUT", "/" + "b".repeat(200) + "%2F" + "c".repeat(200), null).status(201); // each part fits
        s.asAdmin("GET", "/Bad", null).error(400, "illegal_database_name", null);
    }

    @Test
    void slashesInNamesAreEncoded() throws Exception {
        s.asAdmin("PUT", "/a%2Fb", null).status(201);
        assertEquals("a/b", s.asAdmin("GET", "/a%2Fb", null).status(200).json().get("db_name").asText());
        assertTrue(s.asAdmin("GET", "/_all_dbs", null).text().contains("\"a/b\""));
        s.asAdmin("GET", "/a%2fb/_security", null).status(200);
        s.asAdmin("DELETE", "/a%2Fb", null).status(200);
        // Unencoded, /a/b is database a, path b.
        s.asAdmin("PUT", "/plus+sign", null).error(400, "illegal_database_name", "Name: 'plus sign'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.");
        s.asAdmin("PUT", "/plus%2Bsign", null).status(201);
    }

    @Test
    void systemDatabasesCanBeCreated() throws Exception {
        s.asAdmin("PUT", "/_users", null).status(201);
        s.asAdmin("GET", "/_users", null).status(200);
        s.asAdmin("PUT", "/_users/_security", "{}").error(403, "forbidden", "You can't edit the security object of the user database.");
    }

    @Test
    void createAndDeleteNeedServerAdmin() throws Exception {
        s.send("PUT", "/nope", null).error(401, "unauthorized", "You are not a server admin.");
        s.send("PUT", "/nope", null, "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
        s.asAdmin("PUT", "/keep", null).status(201);
        s.send("DELETE", "/keep", null).error(401, "unauthorized", "You are not a server admin.");
        s.send("DELETE", "/keep", null, "Authorization", BOB).error(401, "unauthorized", "You are not a server admin.");
        s.asAdmin("DELETE", "/keep?rev=1-abc", null).error(400, "bad_request",
                "You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?");
        s.asAdmin("GET", "/keep", null).status(200);
    }

    @Test
    void newDatabasesAreAdminOnly() throws Exception {
        s.asAdmin("PUT", "/private", null).status(201);
        // couch_db_updater:default_security_object, as stored: no names.
        assertEquals("{\"members\":{\"roles\":[\"_admin\"]},\"admins\":{\"roles\":[\"_admin\"]}}\n",
                s.asAdmin("GET", "/private/_security", null).status(200).text());
        s.get("/private").error(401, "unauthorized", "You are not authorized to access this db.");
        s.get("/private", "Authorization", BOB).error(403, "forbidden", "You are not allowed to access this db.");
        s.get("/private/_security", "Authorization", BOB).error(403, "forbidden", "You are not allowed to access this db.");
        // A missing database is 404 whoever asks.
        s.get("/absent").error(404, "not_found", "Database does not exist.");
    }

    @Test
    void securityDecidesWhoMayDoWhat() throws Exception {
        s.asAdmin("PUT", "/shared", null).status(201);
        String sec = "{\"admins\":{\"names\":[\"eve\"],\"roles\":[]},\"members\":{\"names\":[],\"roles\":[\"reader\"]},\"extra\":1}";
        assertEquals("{\"ok\":true}\n", s.asAdmin("PUT", "/shared/_security", sec).status(200).text());
        assertEquals(sec + "\n", s.asAdmin("GET", "/shared/_security", null).text());

        // bob is a member by role: may read, may not administer.
        assertEquals("shared", s.get("/shared", "Authorization", BOB).status(200).json().get("db_name").asText());
        assertEquals("1000", s.get("/shared/_revs_limit", "Authorization", BOB).status(200).text().strip());
        s.send("PUT", "/shared/_security", "{}", "Authorization", BOB).error(403, "forbidden", "You are not a db or server admin.");
        s.send("PUT", "/shared/_revs_limit", "5", "Authorization", BOB).error(403, "forbidden", "You are not a db or server admin.");
        // chttpd_auth_request:require_db_admin throws unauthorized, signed in or not.
        s.send("POST", "/shared/_compact", "", "Authorization", BOB, "Content-Type", "application/json").error(401, "unauthorized", "You are not a server or db admin.");
        s.send("POST", "/shared/_compact", "", "Content-Type", "application/json").error(401, "unauthorized", "You are not a server or db admin.");
        s.get("/shared").error(401, "unauthorized", "You are not authorized to access this db.");

        // eve is a db admin by name (and so a member), but not a server admin.
        s.get("/shared", "Authorization", EVE).status(200);
        s.send("PUT", "/shared/_revs_limit", "7", "Authorization", EVE).status(200);
        assertEquals("7", s.get("/shared/_revs_limit", "Authorization", EVE).text().strip());
        s.send("DELETE", "/shared", null, "Authorization", EVE).error(401, "unauthorized", "You are not a server admin.");

        // Empty members: public.
        s.send("PUT", "/shared/_security", "{\"admins\":{\"names\":[\"eve\"]}}", "Authorization", EVE).status(200);
        s.get("/shared").status(200);
        s.send("PUT", "/shared/_security", "{}", "Authorization", EVE).status(200);
        // eve is no longer an admin of it.
        s.send("PUT", "/shared/_security", "{}", "Authorization", EVE).error(403, "forbidden", "You are not a db or server admin.");
        s.get("/shared/_security").status(200);
        assertEquals("{}\n", s.get("/shared/_security").text());
    }

    @Test
    void readersIsTheOldNameOfMembers() throws Exception {
        s.asAdmin("PUT", "/oldstyle", null).status(201);
        s.asAdmin("PUT", "/oldstyle/_security", "{\"readers\":{\"names\":[\"bob\"]}}").status(200);
        s.get("/oldstyle", "Authorization", BOB).status(200);
        s.get("/oldstyle", "Authorization", EVE).error(403, "forbidden", null);
    }

    @Test
    void securityValidation() throws Exception {
        s.asAdmin("PUT", "/validated", null).status(201);
        s.asAdmin("PUT", "/validated/_security", "{\"admins\":{\"names\":\"bob\"}}").error(400, "bad_request", "names must be a JSON list of strings");
        s.asAdmin("PUT", "/validated/_security", "{\"members\":{\"roles\":[1]}}").error(400, "bad_request", "roles must be a JSON list of strings");
        s.asAdmin("PUT", "/validated/_security", "{\"members\":[]}").error(400, "bad_request", "admins or members must be a JSON list of strings");
        s.asAdmin("PUT", "/validated/_security", "[]").error(400, "bad_request", "Request body must be a JSON object");
        s.asAdmin("PUT", "/validated/_security", "{").error(400, "bad_request", "invalid UTF-8 JSON");
        s.asAdmin("PUT", "/validated/_security", "").error(400, "bad_request", "invalid UTF-8 JSON");
        assertEquals("GET,HEAD,PUT", s.asAdmin("POST", "/validated/_security", "{}").error(405, "method_not_allowed", null).header("Allow"));
    }

    @Test
    void revsLimit() throws Exception {
        s.asAdmin("PUT", "/revs", null).status(201);
        assertEquals("1000\n", s.asAdmin("GET", "/revs/_revs_limit", null).status(200).text());
        assertEquals("{\"ok\":true}\n", s.asAdmin("PUT", "/revs/_revs_limit", "42").status(200).text());
        assertEquals("42\n", s.asAdmin("GET", "/revs/_revs_limit", null).text());
        s.asAdmin("PUT", "/revs/_revs_limit", "0").error(400, "bad_request", null);
        s.asAdmin("PUT", "/revs/_revs_limit", "\"5\"").error(400, "bad_request", null);
        s.asAdmin("PUT", "/revs/_revs_limit", "1.5").error(400, "bad_request", null);
        s.asAdmin("PUT", "/revs/_revs_limit", "99999999999").error(400, "bad_request", null);
        s.asAdmin("PUT", "/revs/_revs_limit", "x").error(400, "bad_request", "invalid UTF-8 JSON");
        s.asAdmin("GET", "/norevs/_revs_limit", null).error(404, "not_found", "Database does not exist.");
    }

    @Test
    void compactAndEnsureFullCommit() throws Exception {
        s.asAdmin("PUT", "/maint", null).status(201);
        assertEquals("{\"ok\":true}\n", s.asAdmin("POST", "/maint/_compact", null).status(202).text());
        s.send("POST", "/maint/_compact", null, "Authorization", ADMIN).error(415, "bad_content_type", "Content-Type must be application/json");
        assertEquals("POST", s.asAdmin("GET", "/maint/_compact", null).error(405, "method_not_allowed", "Only POST allowed").header("Allow"));
        assertEquals("{\"ok\":true,\"instance_start_time\":\"0\"}\n", s.asAdmin("POST", "/maint/_ensure_full_commit", null).status(201).text());
        s.asAdmin("POST", "/nomaint/_ensure_full_commit", null).error(404, "not_found", "Database does not exist.");
        s.asAdmin("POST", "/nomaint/_compact", null).error(404, "not_found", "Database does not exist.");
    }

    @Test
    void methodNotAllowedOnDatabase() throws Exception {
        s.asAdmin("PUT", "/m405", null).status(201);
        var r = s.asAdmin("PATCH", "/m405", "{}").error(405, "method_not_allowed", "Only DELETE,GET,HEAD,POST,PUT allowed");
        assertEquals("DELETE,GET,HEAD,POST,PUT", r.header("Allow"));
    }
}

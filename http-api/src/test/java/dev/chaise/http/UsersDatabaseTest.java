package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The _users database: sign-up, sign-in, one's own document, and the rules of CouchDB's _design/_auth. */
class UsersDatabaseTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/_users", null).status(201);
        s.asAdmin("PUT", "/private", null).status(201);
        s.asAdmin("PUT", "/private/_security", "{\"members\":{\"roles\":[\"staff\"]}}").status(200);
    }

    @AfterAll
    static void stop() throws Exception {
        s.close();
    }

    static String basic(String name, String password) {
        return "Basic " + HttpTestServer.b64(name + ":" + password);
    }

    static HttpTestServer.Resp as(String auth, String method, String path, String body) throws Exception {
        return auth == null ? s.send(method, path, body, "Content-Type", "application/json")
                : s.send(method, path, body, "Authorization", auth, "Content-Type", "application/json");
    }

    @Test
    void signUpSignInAndKeepToYourself() throws Exception {
        String doc = "{\"name\":\"joe\",\"password\":\"s3cret\",\"roles\":[],\"type\":\"user\"}";
        String rev = as(null, "PUT", "/_users/org.couchdb.user:joe", doc).status(201).json().get("rev").textValue();

        // Stored hashed, never as given; joe may read it.
        JsonNode stored = as(basic("joe", "s3cret"), "GET", "/_users/org.couchdb.user:joe", null).status(200).json();
        assertFalse(stored.has("password"), stored.toString());
        assertEquals("pbkdf2", stored.get("password_scheme").asText());
        assertEquals(10, stored.get("iterations").asInt());
        assertTrue(stored.get("derived_key").asText().matches("[0-9a-f]{64}"), stored.toString());

        JsonNode session = as(basic("joe", "s3cret"), "GET", "/_session", null).status(200).json();
        assertEquals("joe", session.at("/userCtx/name").asText());
        as(basic("joe", "wrong"), "GET", "/_session", null).error(401, "unauthorized", null);
        HttpTestServer.Resp login = s.send("POST", "/_session", "{\"name\":\"joe\",\"password\":\"s3cret\"}", "Content-Type", "application/json").status(200);
        String cookie = login.header("Set-Cookie").split(";")[0];
        assertEquals("joe", s.get("/_session", "Cookie", cookie).json().at("/userCtx/name").asText());

        // Others' documents and the rest of the database are not joe's business, nor anonymous callers'.
        as(HttpTestServer.BOB, "GET", "/_users/org.couchdb.user:joe", null).error(403, "forbidden", null);
        as(null, "GET", "/_users/org.couchdb.user:joe", null).error(401, "unauthorized", null);
        as(basic("joe", "s3cret"), "GET", "/_users/_all_docs", null).error(403, "forbidden", null);
        as(basic("joe", "s3cret"), "GET", "/_users/_changes", null).error(403, "forbidden", null);
        as(null, "PUT", "/_users/org.couchdb.user:joe", "{\"_rev\":\"" + rev + "\",\"name\":\"joe\",\"password\":\"mine\",\"roles\":[],\"type\":\"user\"}")
                .error(403, "forbidden", "You may only update your own user document.");
        // Nor may anyone add a branch of their own to it, which could win.
        as(null, "PUT", "/_users/org.couchdb.user:joe?new_edits=false", "{\"_rev\":\"9-ffff\",\"name\":\"joe\",\"password\":\"mine\",\"roles\":[],\"type\":\"user\"}")
                .error(401, "unauthorized", null);
        as(basic("joe", "s3cret"), "PUT", "/_users/org.couchdb.user:joe?new_edits=false", "{\"_rev\":\"9-ffff\",\"name\":\"joe\",\"roles\":[],\"type\":\"user\"}")
                .error(403, "forbidden", null);

        // joe changes his password; his old cookie dies with the old salt.
        rev = as(basic("joe", "s3cret"), "PUT", "/_users/org.couchdb.user:joe",
                "{\"_rev\":\"" + rev + "\",\"name\":\"joe\",\"password\":\"n3w\",\"roles\":[],\"type\":\"user\"}").status(201).json().get("rev").textValue();
        as(basic("joe", "s3cret"), "GET", "/_session", null).error(401, "unauthorized", null);
        assertEquals("joe", as(basic("joe", "n3w"), "GET", "/_session", null).json().at("/userCtx/name").asText());
        assertTrue(s.get("/_session", "Cookie", cookie).json().at("/userCtx/name").isNull(), "a session of the old password");

        // Roles: only admins give them, and they work.
        as(basic("joe", "n3w"), "PUT", "/_users/org.couchdb.user:joe",
                "{\"_rev\":\"" + rev + "\",\"name\":\"joe\",\"password\":\"n3w\",\"roles\":[\"staff\"],\"type\":\"user\"}")
                .error(403, "forbidden", "Only _admin may edit roles");
        as(basic("joe", "n3w"), "GET", "/private", null).error(403, "forbidden", null);
        JsonNode current = s.asAdmin("GET", "/_users/org.couchdb.user:joe", null).json();
        ((com.fasterxml.jackson.databind.node.ObjectNode) current).set("roles", dev.chaise.storage.json.Json.NODES.arrayNode().add("staff"));
        rev = s.asAdmin("PUT", "/_users/org.couchdb.user:joe", current.toString()).status(201).json().get("rev").textValue();
        as(basic("joe", "n3w"), "GET", "/private", null).status(200);
        assertEquals("[\"staff\"]", as(basic("joe", "n3w"), "GET", "/_session", null).json().at("/userCtx/roles").toString());

        // joe leaves: his document goes, and with it his sign-in.
        as(basic("joe", "n3w"), "DELETE", "/_users/org.couchdb.user:joe?rev=" + rev, null).status(200);
        as(basic("joe", "n3w"), "GET", "/_session", null).error(401, "unauthorized", null);
    }

    @Test
    void theAuthRules() throws Exception {
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"password\":\"p\",\"roles\":[\"boss\"],\"type\":\"user\"}")
                .error(403, "forbidden", "Only _admin may set roles");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"password\":\"p\",\"roles\":[]}").error(403, "forbidden", "doc.type must be user");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"password\":\"p\",\"roles\":[],\"type\":\"user\"}").error(403, "forbidden", "doc.name is required");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"password\":\"p\",\"type\":\"user\"}").error(403, "forbidden", "doc.roles must exist");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"roles\":\"x\",\"type\":\"user\"}").error(403, "forbidden", "doc.roles must be an array");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"roles\":[1],\"type\":\"user\"}").error(403, "forbidden", "doc.roles can only contain strings");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"bea\",\"roles\":[],\"type\":\"user\"}")
                .error(403, "forbidden", "Doc ID must be of the form org.couchdb.user:name");
        as(null, "PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"password\":7,\"roles\":[],\"type\":\"user\"}")
                .error(400, "bad_request", "password must be a string");
        s.asAdmin("PUT", "/_users/org.couchdb.user:_amy", "{\"name\":\"_amy\",\"roles\":[],\"type\":\"user\"}").error(403, "forbidden", "Username may not start with underscore.");
        s.asAdmin("PUT", "/_users/org.couchdb.user:a:b", "{\"name\":\"a:b\",\"roles\":[],\"type\":\"user\"}").error(403, "forbidden", "Character `:` is not allowed in usernames.");
        s.asAdmin("PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"roles\":[\"_admin\"],\"type\":\"user\"}")
                .error(403, "forbidden", "No system roles (starting with underscore) in users db.");
        s.asAdmin("GET", "/_users/org.couchdb.user:amy", null).error(404, "not_found", null);

        String rev = s.asAdmin("PUT", "/_users/org.couchdb.user:amy", "{\"name\":\"amy\",\"password\":\"p\",\"roles\":[\"_metrics\",\"boss\"],\"type\":\"user\"}")
                .status(201).json().get("rev").textValue();
        s.asAdmin("PUT", "/_users/org.couchdb.user:amy", "{\"_rev\":\"" + rev + "\",\"name\":\"bea\",\"roles\":[],\"type\":\"user\"}")
                .error(403, "forbidden", "Doc ID must be of the form org.couchdb.user:name");
        as(basic("amy", "p"), "DELETE", "/_users/org.couchdb.user:amy?rev=" + rev, null).status(200);

        // Writes through _bulk_docs are hashed and checked the same way (an admin's request).
        JsonNode rows = s.asAdmin("POST", "/_users/_bulk_docs", "{\"docs\":[{\"_id\":\"org.couchdb.user:cy\",\"name\":\"cy\",\"password\":\"c\",\"roles\":[],\"type\":\"user\"},"
                + "{\"_id\":\"org.couchdb.user:dee\",\"name\":\"dee\",\"roles\":[]}]}").status(201).json();
        assertTrue(rows.get(0).path("ok").asBoolean(), rows.toString());
        assertEquals("doc.type must be user", rows.get(1).path("reason").asText(), rows.toString());
        assertEquals("cy", as(basic("cy", "c"), "GET", "/_session", null).json().at("/userCtx/name").asText());
        assertFalse(s.asAdmin("GET", "/_users/org.couchdb.user:cy", null).json().has("password"));
    }
}

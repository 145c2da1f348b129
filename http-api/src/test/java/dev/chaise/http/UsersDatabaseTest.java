package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The _users database as CouchDB 3.5 has it: admin-only by default (so a user cannot even read
 * their own document), and, once an admin opens it ({@code users_db_security_editable}), the
 * rules of {@code couch_users_db} (one's own document, public fields) and of {@code _design/_auth};
 * and, unlike CouchDB, no password hash or salt in any answer to anyone but an admin.
 */
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
        return auth == null ? s.send(method, path, body, "Content-Type", "application/json", "Accept", "application/json")
                : s.send(method, path, body, "Authorization", auth, "Content-Type", "application/json", "Accept", "application/json");
    }

    /** No answer to a non-admin carries a password hash or salt. */
    static void noSecrets(String text) {
        for (String f : new String[] {"derived_key", "salt", "password_sha", "\"password\""}) assertFalse(text.contains(f), f + " in " + text);
    }

    /** Opens _users to everyone, as an admin of CouchDB 3.5 can once users_db_security_editable is set. */
    static void openUsers() throws Exception {
        s.config.set("couchdb", "users_db_security_editable", "true", false);
        try {
            s.asAdmin("PUT", "/_users/_security", "{}").status(200);
        } finally {
            s.config.delete("couchdb", "users_db_security_editable", false);
        }
    }

    static void closeUsers() throws Exception {
        s.config.set("couchdb", "users_db_security_editable", "true", false);
        try {
            s.asAdmin("PUT", "/_users/_security", "{\"members\":{\"roles\":[\"_admin\"]},\"admins\":{\"roles\":[\"_admin\"]}}").status(200);
        } finally {
            s.config.delete("couchdb", "users_db_security_editable", false);
        }
    }

    @Test
    void asCouchDb35SetsItUp() throws Exception {
        // Admin-only: no sign-up, and a user may not read their own document (couch_db:check_is_member).
        as(null, "PUT", "/_users/org.couchdb.user:ann", "{\"name\":\"ann\",\"password\":\"x\",\"roles\":[],\"type\":\"user\"}")
                .error(401, "unauthorized", "You are not authorized to access this db.");
        s.asAdmin("PUT", "/_users/org.couchdb.user:ann", "{\"name\":\"ann\",\"password\":\"s3cret\",\"roles\":[],\"type\":\"user\"}").status(201);
        as(basic("ann", "s3cret"), "GET", "/_users/org.couchdb.user:ann", null).error(403, "forbidden", "You are not allowed to access this db.");
        // Signing in works: the server reads the document for itself.
        assertEquals("ann", as(basic("ann", "s3cret"), "GET", "/_session", null).json().at("/userCtx/name").asText());
        // chttpd_auth_request: _all_docs and _changes of _users are for server admins, 401 to anyone else.
        as(basic("ann", "s3cret"), "GET", "/_users/_all_docs", null).error(401, "unauthorized", "You are not a server admin.");
        as(basic("ann", "s3cret"), "GET", "/_users/_changes", null).error(401, "unauthorized", "You are not a server admin.");
        as(null, "POST", "/_users/_all_docs", "{}").error(401, "unauthorized", "You are not a server admin.");
        // The admin reads it whole, hash included.
        JsonNode stored = s.asAdmin("GET", "/_users/org.couchdb.user:ann", null).status(200).json();
        assertFalse(stored.has("password"), stored.toString());
        assertEquals("pbkdf2", stored.get("password_scheme").asText());
        assertTrue(stored.get("derived_key").asText().matches("[0-9a-f]{64}"), stored.toString());
        // As CouchDB's, it has _design/_auth from its creation (couch_users_db; CouchDB's tests wait for it).
        JsonNode auth = s.asAdmin("GET", "/_users/_design/_auth", null).status(200).json();
        assertTrue(auth.path("validate_doc_update").isTextual(), auth.toString());
        // Its _security stays as CouchDB keeps it unless [couchdb] users_db_security_editable.
        s.asAdmin("PUT", "/_users/_security", "{}").error(403, "forbidden", "You can't edit the security object of the user database.");
    }

    @Test
    void signUpSignInAndKeepToYourself() throws Exception {
        openUsers();
        try {
            String doc = "{\"name\":\"joe\",\"password\":\"s3cret\",\"roles\":[],\"type\":\"user\"}";
            String rev = as(null, "PUT", "/_users/org.couchdb.user:joe", doc).status(201).json().get("rev").textValue();
            String joe = basic("joe", "s3cret");

            // joe reads his own document, without the hash and salt (CouchDB would show them).
            HttpTestServer.Resp own = as(joe, "GET", "/_users/org.couchdb.user:joe", null).status(200);
            noSecrets(own.text());
            assertEquals("pbkdf2", own.json().get("password_scheme").asText());
            assertEquals(10, own.json().get("iterations").asInt());
            // Nor in any other way of reading it.
            noSecrets(as(joe, "GET", "/_users/org.couchdb.user:joe?open_revs=all", null).status(200).text());
            noSecrets(as(joe, "GET", "/_users/org.couchdb.user:joe?revs_info=true&conflicts=true", null).status(200).text());
            noSecrets(as(joe, "POST", "/_users/_bulk_get", "{\"docs\":[{\"id\":\"org.couchdb.user:joe\"}]}").status(200).text());
            noSecrets(as(joe, "POST", "/_users/_find", "{\"selector\":{\"name\":\"joe\"}}").status(200).text());

            // couch_users_db:after_doc_read: someone else's document shows only the public fields, 404 without any.
            as(HttpTestServer.BOB, "GET", "/_users/org.couchdb.user:joe", null).error(404, "not_found", "missing");
            as(null, "GET", "/_users/org.couchdb.user:joe", null).error(404, "not_found", "missing");
            s.config.set("chttpd_auth", "public_fields", "name, salt, derived_key", false);
            try {
                HttpTestServer.Resp pub = as(HttpTestServer.BOB, "GET", "/_users/org.couchdb.user:joe", null).status(200);
                assertEquals("{\"_id\":\"org.couchdb.user:joe\",\"_rev\":\"" + rev + "\",\"name\":\"joe\"}", pub.json().toString());
            } finally {
                s.config.delete("chttpd_auth", "public_fields", false);
            }
            // couch_users_db:before_doc_update: a signed-in non-admin writes only their own document, 404 otherwise.
            as(HttpTestServer.BOB, "PUT", "/_users/org.couchdb.user:joe", "{\"_rev\":\"" + rev + "\",\"name\":\"joe\",\"roles\":[],\"type\":\"user\"}")
                    .error(404, "not_found", "missing");
            as(HttpTestServer.BOB, "DELETE", "/_users/org.couchdb.user:joe?rev=" + rev, null).error(404, "not_found", "missing");
            as(HttpTestServer.BOB, "POST", "/_users", "{\"name\":\"bob2\",\"roles\":[],\"type\":\"user\"}").error(404, "not_found", "missing");
            // An anonymous caller passes that check (signing up) and meets _design/_auth's.
            as(null, "PUT", "/_users/org.couchdb.user:joe", "{\"_rev\":\"" + rev + "\",\"name\":\"joe\",\"password\":\"mine\",\"roles\":[],\"type\":\"user\"}")
                    .error(403, "forbidden", "You may only update your own user document.");

            JsonNode session = as(joe, "GET", "/_session", null).status(200).json();
            assertEquals("joe", session.at("/userCtx/name").asText());
            HttpTestServer.Resp login = s.send("POST", "/_session", "{\"name\":\"joe\",\"password\":\"s3cret\"}", "Content-Type", "application/json").status(200);
            String cookie = login.header("Set-Cookie").split(";")[0];

            // joe edits his document as he read it (no hash): the stored hash stays, he still signs in.
            com.fasterxml.jackson.databind.node.ObjectNode edited = (com.fasterxml.jackson.databind.node.ObjectNode) own.json();
            edited.put("fullname", "Joe");
            rev = as(joe, "PUT", "/_users/org.couchdb.user:joe", edited.toString()).status(201).json().get("rev").textValue();
            assertEquals("joe", as(joe, "GET", "/_session", null).json().at("/userCtx/name").asText());
            assertEquals("Joe", s.asAdmin("GET", "/_users/org.couchdb.user:joe", null).json().get("fullname").asText());

            // joe changes his password; his old cookie dies with the old salt.
            rev = as(joe, "PUT", "/_users/org.couchdb.user:joe",
                    "{\"_rev\":\"" + rev + "\",\"name\":\"joe\",\"password\":\"n3w\",\"roles\":[],\"type\":\"user\"}").status(201).json().get("rev").textValue();
            as(joe, "GET", "/_session", null).error(401, "unauthorized", null);
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

            // Design documents of _users are for admins only, 403 even to an anonymous caller.
            s.asAdmin("PUT", "/_users/_design/x", "{\"views\":{\"names\":{\"map\":\"function(d){ emit(d.name, null); }\"}}}").status(201);
            as(basic("joe", "n3w"), "GET", "/_users/_design/x", null).error(403, "forbidden", "Only administrators can view design docs in the users database.");
            as(null, "GET", "/_users/_design/x", null).error(403, "forbidden", "Only administrators can view design docs in the users database.");
            // Whether or not the design document exists (CouchDB 3.5.0 has _design/_auth; Chaise runs its rules in Java).
            as(basic("joe", "n3w"), "GET", "/_users/_design/_auth", null).error(403, "forbidden", "Only administrators can view design docs in the users database.");
            as(basic("joe", "n3w"), "GET", "/_users/_design/none/file.txt", null).error(403, "forbidden", "Only administrators can view design docs in the users database.");
            // A view's include_docs shows a reader what they may read, and null for the rest.
            JsonNode rows = as(basic("joe", "n3w"), "GET", "/_users/_design/x/_view/names?include_docs=true", null).status(200).json().get("rows");
            noSecrets(rows.toString());
            for (JsonNode row : rows) if (!row.get("id").asText().equals("org.couchdb.user:joe")) assertTrue(row.get("doc").isNull(), rows.toString());

            // joe leaves: his document goes, and with it his sign-in.
            as(basic("joe", "n3w"), "DELETE", "/_users/org.couchdb.user:joe?rev=" + rev, null).status(200);
            as(basic("joe", "n3w"), "GET", "/_session", null).error(401, "unauthorized", null);
        } finally {
            closeUsers();
        }
    }

    @Test
    void theAuthRules() throws Exception {
        openUsers();
        try {
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
        } finally {
            closeUsers();
        }
    }
}

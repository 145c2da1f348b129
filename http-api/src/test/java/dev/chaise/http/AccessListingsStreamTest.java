package dev.chaise.http;

import static dev.chaise.http.AccessDatabaseTest.ids;
import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A user's {@code _all_docs} and {@code _changes} in an access database, read as merges of their
 * name's and roles' listings (storage's {@code AccessIndex}), when one document has rows under
 * bob's name and his role {@code reader} at different sequences: visible under one and revoked
 * under the other, then revoked under both. It shows once, as its last change among them, with
 * the listings' options.
 */
class AccessListingsStreamTest {
    static HttpTestServer s;
    static final String DB = "/acc-stream";

    @BeforeAll
    static void start() throws Exception {
        s = AccessDatabaseTest.withAccess();
        s.asAdmin("PUT", DB + "?access=true", null).status(201);
        s.asAdmin("PUT", DB + "/_security", AccessDatabaseTest.SECURITY).status(200);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static String put(String id, String rev, String access) throws Exception {
        String body = "{\"_access\":" + access + (rev == null ? "" : ",\"_rev\":\"" + rev + "\"") + "}";
        return s.send("PUT", DB + "/" + id, body, "Authorization", ADMIN, "Content-Type", "application/json").status(201).json().get("rev").asText();
    }

    private static com.fasterxml.jackson.databind.JsonNode bob(String path) throws Exception {
        return s.send("GET", DB + path, null, "Authorization", BOB).status(200).json();
    }

    /** Each change as id, rev and whether deleted. */
    private static String changes(com.fasterxml.jackson.databind.JsonNode feed) {
        StringBuilder out = new StringBuilder();
        for (var r : feed.get("results")) {
            out.append(r.get("id").asText()).append(' ').append(r.get("changes").get(0).get("rev").asText().substring(0, 1));
            if (r.path("deleted").asBoolean()) out.append(" deleted");
            out.append(';');
        }
        return out.toString();
    }

    @Test
    void aDocumentUnderBobsNameAndRoleShowsOnceAtItsLastChange() throws Exception {
        put("y", null, "[\"bob\"]");
        put("z", null, "[\"reader\"]");
        String r1 = put("x", null, "[\"reader\"]");
        String r2 = put("x", r1, "[\"bob\"]"); // reader's row revoked, bob's visible
        String r3 = put("x", r2, "[\"bob\"]"); // bob's row moves on, reader's stays revoked behind it

        var all = bob("/_all_docs");
        assertEquals("[\"x\",\"y\",\"z\"]", ids(all));
        assertEquals(r3, all.get("rows").get(0).get("value").get("rev").asText());
        assertEquals(3, all.get("total_rows").asInt());
        assertEquals("y 1;z 1;x 3;", changes(bob("/_changes")));
        assertEquals("x 3;z 1;y 1;", changes(bob("/_changes?descending=true")));
        var one = bob("/_changes?limit=1");
        assertEquals("y 1;", changes(one));
        assertEquals(2, one.get("pending").asInt());
        assertEquals("x 3;", changes(bob("/_changes?filter=_doc_ids&doc_ids=%5B%22x%22%5D")));

        String r4 = put("x", r3, "[\"reader\"]"); // the other way round: bob's row revoked, reader's visible
        String r5 = put("x", r4, "[\"reader\"]");
        all = bob("/_all_docs?startkey=%22x%22&limit=1");
        assertEquals("[\"x\"]", ids(all));
        assertEquals(r5, all.get("rows").get(0).get("value").get("rev").asText());
        assertEquals("[\"y\"]", ids(bob("/_all_docs?limit=1&skip=1")));
        assertEquals("[\"z\",\"y\"]", ids(bob("/_all_docs?descending=true&limit=2")));
        assertEquals("y 1;z 1;x 5;", changes(bob("/_changes")));

        put("x", r5, "[\"eve\"]"); // neither may read it now: a deletion past the revision bob had
        assertEquals("[\"y\",\"z\"]", ids(bob("/_all_docs")));
        assertEquals(2, bob("/_all_docs").get("total_rows").asInt());
        assertEquals("[{\"key\":\"x\",\"error\":\"not_found\"},\"y\"]", ids(bob("/_all_docs?keys=%5B%22x%22,%22y%22%5D")));
        assertEquals("y 1;z 1;x 6 deleted;", changes(bob("/_changes")));
        assertEquals("x 6 deleted;z 1;y 1;", changes(bob("/_changes?descending=true")));
    }
}

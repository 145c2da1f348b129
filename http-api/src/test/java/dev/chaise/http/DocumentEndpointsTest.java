package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class DocumentEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/docs", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void documentLifecycle() throws Exception {
        var created = s.asAdmin("PUT", "/docs/a", "{\"x\":1}").status(201);
        JsonNode c = created.json();
        assertTrue(c.get("ok").asBoolean());
        assertEquals("a", c.get("id").asText());
        String rev1 = c.get("rev").asText();
        assertTrue(rev1.startsWith("1-") && rev1.length() == 34, rev1);
        assertEquals("\"" + rev1 + "\"", created.header("ETag"));
        assertTrue(created.header("Location").endsWith("/docs/a"), created.header("Location"));

        JsonNode doc = s.asAdmin("GET", "/docs/a", null).status(200).json();
        assertEquals("{\"_id\":\"a\",\"_rev\":\"" + rev1 + "\",\"x\":1}", doc.toString());
        assertEquals(304, s.send("GET", "/docs/a", null, "Authorization", HttpTestServer.ADMIN, "If-None-Match", "\"" + rev1 + "\"").status());

        s.asAdmin("PUT", "/docs/a", "{\"x\":2}").error(409, "conflict", "Document update conflict.");
        String rev2 = s.asAdmin("PUT", "/docs/a?rev=" + rev1, "{\"x\":2}").status(201).json().get("rev").asText();
        assertTrue(rev2.startsWith("2-"));
        JsonNode revs = s.asAdmin("GET", "/docs/a?revs=true&local_seq=true", null).status(200).json();
        assertEquals(2, revs.at("/_revisions/start").asInt());
        assertEquals(List.of(rev2.substring(2), rev1.substring(2)), List.of(revs.at("/_revisions/ids/0").asText(), revs.at("/_revisions/ids/1").asText()));
        assertEquals(26, revs.get("_local_seq").asText().length());

        s.asAdmin("DELETE", "/docs/a", null).error(409, "conflict", "Document update conflict.");
        JsonNode del = s.asAdmin("DELETE", "/docs/a?rev=" + rev2, null).status(200).json();
        assertTrue(del.get("rev").asText().startsWith("3-"));
        s.asAdmin("GET", "/docs/a", null).error(404, "not_found", "deleted");
        s.asAdmin("GET", "/docs/never", null).error(404, "not_found", "missing");
        JsonNode tomb = s.asAdmin("GET", "/docs/a?rev=" + del.get("rev").asText(), null).status(200).json();
        assertTrue(tomb.get("_deleted").asBoolean());
    }

    @Test
    void badInputGetsCouchDbErrors() throws Exception {
        s.asAdmin("PUT", "/docs/_bad", "{}").error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("PUT", "/docs/b", "{\"x\":").error(400, "bad_request", null);
        s.asAdmin("PUT", "/docs/b", "{\"_foo\":1}").error(400, "doc_validation", "Bad special document member: _foo");
        s.asAdmin("PUT", "/docs/b?rev=nonsense", "{}").error(400, "bad_request", "Invalid rev format");
        s.get("/docs/b").error(401, "unauthorized", null);
        s.send("GET", "/docs/b", null, "Authorization", HttpTestServer.BOB).error(403, "forbidden", null);
    }

    @Test
    void postGeneratesIdsAndLocalDocsHaveNoTree() throws Exception {
        JsonNode p = s.asAdmin("POST", "/docs", "{\"y\":true}").status(201).json();
        assertEquals(32, p.get("id").asText().length());
        assertEquals("{\"_id\":\"" + p.get("id").asText() + "\",\"_rev\":\"" + p.get("rev").asText() + "\",\"y\":true}",
                s.asAdmin("GET", "/docs/" + p.get("id").asText(), null).json().toString());

        assertEquals("0-1", s.asAdmin("PUT", "/docs/_local/cp", "{\"last\":1}").status(201).json().get("rev").asText());
        // CouchDB 3 checks no revision on local documents: the last write wins, 0-1 again when it names none.
        assertEquals("0-1", s.asAdmin("PUT", "/docs/_local/cp", "{\"last\":2}").status(201).json().get("rev").asText());
        assertEquals("0-2", s.asAdmin("PUT", "/docs/_local/cp", "{\"last\":3,\"_rev\":\"0-1\"}").status(201).json().get("rev").asText());
        assertEquals("{\"_id\":\"_local/cp\",\"_rev\":\"0-2\",\"last\":3}", s.asAdmin("GET", "/docs/_local/cp", null).json().toString());
    }

    /** One parser for every kind of document, with CouchDB's transfer_fields rules; _local documents ignore _revisions. */
    @Test
    void specialMembersFollowCouchDbsRulesForLocalAndOtherDocumentsAlike() throws Exception {
        for (String id : List.of("plain", "_local/plain")) {
            s.asAdmin("PUT", "/docs/" + id, "{\"_deleted\":\"yes\"}").error(400, "doc_validation", "Bad special document member: _deleted");
        }
        // PouchDB's test.local_docs.js puts a local document back with _revisions {start: 0, ids: ["1"]}.
        String rev = s.asAdmin("PUT", "/docs/_local/revs", "{\"a\":1}").status(201).json().get("rev").asText();
        s.asAdmin("PUT", "/docs/_local/revs", "{\"_rev\":\"" + rev + "\",\"_revisions\":{\"start\":0,\"ids\":[\"1\"]},\"a\":2}").status(201);
        assertEquals("{\"_id\":\"_local/revs\",\"_rev\":\"0-2\",\"a\":2}", s.asAdmin("GET", "/docs/_local/revs", null).json().toString());
        s.asAdmin("PUT", "/docs/_local/revs", "{\"_revisions\":{\"start\":\"x\",\"ids\":[]}}").error(400, "doc_validation", "_revisions.start isn't an integer.");
        s.asAdmin("PUT", "/docs/_local/revs", "{\"_revisions\":{\"start\":1,\"ids\":[1]}}").error(400, "doc_validation", "RevId isn't a string");
    }

    @Test
    void bulkDocsAllDocsAndConflicts() throws Exception {
        s.asAdmin("PUT", "/bulk", null).status(201);
        JsonNode res = s.asAdmin("POST", "/bulk/_bulk_docs", "{\"docs\":[{\"_id\":\"k1\",\"v\":1},{\"_id\":\"k2\",\"v\":2},{\"_id\":\"k1\",\"v\":3},{\"_id\":\"_design/d\"}]}").status(201).json();
        assertEquals(4, res.size());
        assertTrue(res.get(0).get("rev").asText().startsWith("1-"));
        assertEquals("{\"ok\":true,\"id\":\"k2\",\"rev\":\"" + res.get(1).get("rev").asText() + "\"}", res.get(1).toString(), "CouchDB's success row");
        assertEquals("conflict", res.get(2).get("error").asText());
        assertTrue(res.get(3).get("ok").asBoolean());
        s.asAdmin("POST", "/bulk/_bulk_docs", "{\"docs\":[{\"_id\":\"k3\"},{\"_id\":\"_x\"}]}")
                .error(400, "illegal_docid", "Only reserved document ids may start with underscore.");
        s.asAdmin("DELETE", "/bulk/_design/d?rev=" + res.get(3).get("rev").asText(), null).status(200);

        JsonNode all = s.asAdmin("GET", "/bulk/_all_docs?include_docs=true", null).status(200).json();
        assertEquals(2, all.get("total_rows").asInt());
        assertFalse(all.has("offset"), "no offset (RFC B)");
        assertEquals("k1", all.at("/rows/0/id").asText());
        assertEquals(1, all.at("/rows/0/doc/v").asInt());

        String rev2 = all.at("/rows/1/value/rev").asText();
        s.asAdmin("DELETE", "/bulk/k2?rev=" + rev2, null).status(200);
        JsonNode keys = s.asAdmin("POST", "/bulk/_all_docs", "{\"keys\":[\"k2\",\"nope\",\"k1\"]}").status(200).json();
        assertTrue(keys.at("/rows/0/value/deleted").asBoolean());
        assertEquals("not_found", keys.at("/rows/1/error").asText());
        assertEquals("k1", keys.at("/rows/2/id").asText());
        assertEquals(1, s.asAdmin("GET", "/bulk/_all_docs?startkey=%22k1%22&endkey=%22k1%22", null).json().get("rows").size());

        // A conflict replicated in with new_edits=false: only failures are reported.
        String rev1 = all.at("/rows/0/value/rev").asText();
        JsonNode ne = s.asAdmin("POST", "/bulk/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"k1\",\"_rev\":\"1-ffffffffffffffffffffffffffffffff\",\"v\":9}]}").status(201).json();
        assertEquals("[]", ne.toString());
        JsonNode k1 = s.asAdmin("GET", "/bulk/k1?conflicts=true", null).status(200).json();
        assertEquals("1-ffffffffffffffffffffffffffffffff", k1.get("_rev").asText(), "the higher hash wins");
        assertEquals(rev1, k1.at("/_conflicts/0").asText());
        JsonNode open = s.send("GET", "/bulk/k1?open_revs=all", null, "Authorization", HttpTestServer.ADMIN, "Accept", "application/json").status(200).json();
        assertEquals(2, open.size());
    }

    @Test
    void changesNormalAndLongpoll() throws Exception {
        s.asAdmin("PUT", "/feed", null).status(201);
        for (String id : List.of("c1", "c2", "c3")) s.asAdmin("PUT", "/feed/" + id, "{}").status(201);
        JsonNode ch = s.asAdmin("GET", "/feed/_changes", null).status(200).json();
        assertEquals(3, ch.get("results").size());
        List<String> ids = new ArrayList<>();
        ch.get("results").forEach(r -> ids.add(r.get("id").asText()));
        assertEquals(List.of("c1", "c2", "c3"), ids);
        String last = ch.get("last_seq").asText();
        assertEquals(last, ch.at("/results/2/seq").asText());
        assertEquals(0, s.asAdmin("GET", "/feed/_changes?since=" + last, null).json().get("results").size());
        assertEquals(1, s.asAdmin("GET", "/feed/_changes?limit=1&include_docs=true", null).json().at("/results/0/doc/_id").asText().equals("c1") ? 1 : 0);
        assertEquals("c2", s.asAdmin("GET", "/feed/_changes?filter=_doc_ids&doc_ids=%5B%22c2%22%5D", null).json().at("/results/0/id").asText());

        CompletableFuture<HttpTestServer.Resp> poll = CompletableFuture.supplyAsync(() -> {
            try {
                return s.asAdmin("GET", "/feed/_changes?feed=longpoll&timeout=10000&since=" + last, null);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        Thread.sleep(300);
        assertFalse(poll.isDone(), "longpoll waits for a change");
        s.asAdmin("PUT", "/feed/c4", "{}").status(201);
        JsonNode woke = poll.get().json();
        assertEquals("c4", woke.at("/results/0/id").asText());
    }

    @Test
    void designDocsAndLocalDocsListings() throws Exception {
        s.asAdmin("PUT", "/lists", null).status(201);
        s.asAdmin("PUT", "/lists/plain", "{}").status(201);
        s.asAdmin("PUT", "/lists/_design/a", "{\"views\":{}}").status(201);
        s.asAdmin("PUT", "/lists/_design/b", "{}").status(201);
        s.asAdmin("PUT", "/lists/_local/x", "{\"k\":1}").status(201);
        JsonNode design = s.asAdmin("GET", "/lists/_design_docs", null).status(200).json();
        assertEquals(List.of("_design/a", "_design/b"), ids(design));
        assertEquals(List.of("_design/b", "_design/a"), ids(s.asAdmin("GET", "/lists/_design_docs?descending=true", null).json()));
        assertEquals(List.of("_design/a"), ids(s.asAdmin("GET", "/lists/_design_docs?limit=1&include_docs=true", null).json()));
        JsonNode local = s.asAdmin("GET", "/lists/_local_docs?include_docs=true", null).status(200).json();
        assertEquals(List.of("_local/x"), ids(local));
        assertEquals("0-1", local.at("/rows/0/value/rev").asText());
        assertEquals(1, local.at("/rows/0/doc/k").asInt());
        assertEquals(List.of("_design/a", "_design/b", "plain"), ids(s.asAdmin("GET", "/lists/_all_docs", null).json()), "design docs are listed, local docs are not");
    }

    static List<String> ids(JsonNode listing) {
        List<String> out = new ArrayList<>();
        listing.get("rows").forEach(r -> out.add(r.get("id").asText()));
        return out;
    }
}

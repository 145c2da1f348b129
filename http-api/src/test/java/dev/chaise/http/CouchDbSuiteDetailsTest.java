package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Behaviours found by CouchDB's own Elixir suite and by comparing answers with CouchDB 3.5.0
 * request by request (issue 26), each pinned to CouchDB's status, error and body, so that they
 * hold without the slow suite.
 */
class CouchDbSuiteDetailsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/sd", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void notModifiedSaysItsLength() throws Exception {
        // basics_test.exs "A document read with etag works": 304, Content-Length 0, no body.
        String rev = s.asAdmin("PUT", "/sd/etag", "{}").status(201).json().path("rev").asText();
        HttpTestServer.Resp r = s.get("/sd/etag", "Authorization", ADMIN, "If-None-Match", "\"" + rev + "\"").status(304);
        assertEquals("0", r.header("Content-Length"));
        assertEquals("", r.text());
    }

    @Test
    void documentIdsAsCouchDocValidatesThem() throws Exception {
        // couch_doc:validate_docid
        s.asAdmin("PUT", "/sd/%FF%FE", "{}").error(400, "illegal_docid", "Document id must be valid UTF-8");
        s.asAdmin("GET", "/sd/%C3", null).error(400, "illegal_docid", "Document id must be valid UTF-8");
        // Whatever route the id is on, and an attachment name or any other part likewise.
        s.asAdmin("GET", "/sd/%C3%28/att", null).error(400, "illegal_docid", "Document id must be valid UTF-8");
        s.asAdmin("DELETE", "/sd/_local/%E2%82", null).error(400, "illegal_docid", "Document id must be valid UTF-8");
        s.asAdmin("GET", "/sd/doc/a%80b", null).error(400, "bad_request", "Attachment name is not UTF-8 encoded");
        s.asAdmin("GET", "/sd/_design/d/_view/%C3%28", null).error(400, "bad_request", "invalid_url_encoding");
        s.asAdmin("POST", "/sd", "{\"_id\":\"_design/\"}").error(400, "illegal_docid", "Illegal document id `_design/`");
        s.asAdmin("POST", "/sd/_bulk_docs", "{\"docs\":[{\"_id\":\"_local/\"}]}").status(400);
        // A bad percent escape is still the URL's fault, at the end of the path too.
        for (String path : new String[] {"/sd/a%zz", "/sd/a%4"}) {
            try (RawHttp c = new RawHttp(s.http.port())) {
                RawHttp.Resp r = c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").read();
                assertEquals(400, r.status());
                assertEquals("{\"error\":\"bad_request\",\"reason\":\"invalid_url_encoding\"}\n", r.body());
            }
        }
        // A multi-byte id that is UTF-8 is an id like any other.
        s.asAdmin("PUT", "/sd/caf%C3%A9", "{}").status(201);
        assertEquals("café", s.asAdmin("GET", "/sd/caf%C3%A9", null).status(200).json().path("_id").asText());
    }

    @Test
    void attachmentsThatAreNotAnObjectAreABadSpecialMember() throws Exception {
        // couch_doc:transfer_fields: only an object is _attachments; anything else is an unknown special member.
        s.asAdmin("PUT", "/sd/att", "{\"_attachments\":\"x\"}").error(400, "doc_validation", "Bad special document member: _attachments");
    }

    @Test
    void negativeChangesLimitIsEveryChange() throws Exception {
        s.asAdmin("PUT", "/sdc", null).status(201);
        for (String id : new String[] {"a", "b", "c"}) s.asAdmin("PUT", "/sdc/" + id, "{}").status(201);
        assertEquals(3, s.asAdmin("GET", "/sdc/_changes?limit=-1", null).status(200).json().path("results").size());
        assertEquals(1, s.asAdmin("GET", "/sdc/_changes?limit=1", null).status(200).json().path("results").size());
    }

    @Test
    void aPurgeMovesUpdateSeqOn() throws Exception {
        s.asAdmin("PUT", "/sdp", null).status(201);
        String rev = s.asAdmin("PUT", "/sdp/gone", "{}").status(201).json().path("rev").asText();
        String del = s.asAdmin("DELETE", "/sdp/gone?rev=" + rev, null).status(200).json().path("rev").asText();
        String before = s.asAdmin("GET", "/sdp", null).status(200).json().path("update_seq").asText();
        s.asAdmin("POST", "/sdp/_purge", "{\"gone\":[\"" + del + "\"]}").status(201);
        // CouchDB's update_seq moves on with a purge, even of a document whose change was the last.
        com.fasterxml.jackson.databind.JsonNode info = s.asAdmin("GET", "/sdp", null).status(200).json();
        String after = info.path("update_seq").asText();
        assertEquals(1, Integer.signum(after.compareTo(before)), before + " then " + after);
        assertEquals(after, info.path("purge_seq").asText());
        assertEquals(0, s.asAdmin("GET", "/sdp/_changes?since=" + after, null).status(200).json().path("results").size());
    }

    @Test
    void revisionIdsAreCouchDbsAndReplicatedWritesOfKnownRevisionsPass() throws Exception {
        // conflicts_test.exs, COUCHDB-1178: CouchDB's new_revid, and new_edits=false with revisions the database has.
        s.asAdmin("PUT", "/sdr", null).status(201);
        s.asAdmin("PUT", "/sdr/_design/couchdb-1178", "{\"validate_doc_update\":\"function(){}\"}").status(201);
        assertEquals("1-47f3268e7546965196b57572099f4372", s.asAdmin("PUT", "/sdr/doc", "{\"val\":\"r0\"}").status(201).json().path("rev").asText());
        assertEquals("2-1d8171ab3a91475cfece749291e6f897",
                s.asAdmin("PUT", "/sdr/doc", "{\"val\":\"r1\",\"_rev\":\"1-47f3268e7546965196b57572099f4372\"}").status(201).json().path("rev").asText());
        assertEquals("3-3fb0a342d2ce092fdcc77856dbe8a2ef",
                s.asAdmin("PUT", "/sdr/doc", "{\"val\":\"r2\",\"_rev\":\"2-1d8171ab3a91475cfece749291e6f897\"}").status(201).json().path("rev").asText());
        assertEquals("[]", s.asAdmin("POST", "/sdr/_bulk_docs", "{\"new_edits\":false,\"docs\":["
                + "{\"_id\":\"doc\",\"val\":\"r2\",\"_rev\":\"3-3fb0a342d2ce092fdcc77856dbe8a2ef\"},"
                + "{\"_id\":\"doc\",\"val\":\"r1\",\"_rev\":\"2-1d8171ab3a91475cfece749291e6f897\"},"
                + "{\"_id\":\"doc\",\"val\":\"r0\",\"_rev\":\"1-47f3268e7546965196b57572099f4372\"}]}").status(201).text().strip());
        // The first edit of an empty document is CouchDB's best-known revision.
        assertEquals("1-967a00dff5e02add41819138abb3284d", s.asAdmin("PUT", "/sdr/empty", "{}").status(201).json().path("rev").asText());
    }

    @Test
    void maxHttpRequestSizeAppliesAtOnce() throws Exception {
        // changes_test.exs: set over _config, the next request's body meets it (413).
        s.asAdmin("PUT", "/_node/_local/_config/chttpd/max_http_request_size", "\"16\"").status(200);
        try {
            s.asAdmin("POST", "/sd/_changes?filter=_doc_ids", "{\"doc_ids\":[\"doc1\",\"doc3\",\"doc4\"]}").error(413, "too_large", null);
        } finally {
            s.asAdmin("DELETE", "/_node/_local/_config/chttpd/max_http_request_size", null).status(200);
        }
        s.asAdmin("POST", "/sd/_changes?filter=_doc_ids", "{\"doc_ids\":[\"doc1\",\"doc3\",\"doc4\"]}").status(200);
    }

    /** uuids_test.exs: [uuids] algorithm, set over _config, applies at once, to _uuids and to POSTed documents. */
    @Test
    void uuidAlgorithms() throws Exception {
        try {
            s.asAdmin("PUT", "/_node/_local/_config/uuids/algorithm", "\"sequential\"").status(200);
            java.util.List<String> seq = new java.util.ArrayList<>();
            s.asAdmin("GET", "/_uuids?count=1000", null).status(200).json().path("uuids").forEach(u -> seq.add(u.asText()));
            for (int i = 1; i < seq.size(); i++) {
                assertEquals(32, seq.get(i).length());
                assertEquals(-1, Integer.signum(seq.get(i - 1).compareTo(seq.get(i))), seq.get(i - 1) + " then " + seq.get(i));
            }
            s.asAdmin("PUT", "/_node/_local/_config/uuids/algorithm", "\"utc_random\"").status(200);
            com.fasterxml.jackson.databind.JsonNode utc = s.asAdmin("GET", "/_uuids?count=1000", null).status(200).json().path("uuids");
            assertEquals(32, utc.get(1).asText().length());
            assertEquals(-1, Integer.signum(utc.get(1).asText().substring(0, 14).compareTo(utc.get(999).asText().substring(0, 14))));
            s.asAdmin("PUT", "/_node/_local/_config/uuids/algorithm", "\"utc_id\"").status(200);
            s.asAdmin("PUT", "/_node/_local/_config/uuids/utc_id_suffix", "\"frog\"").status(200);
            String id = s.asAdmin("GET", "/_uuids", null).status(200).json().path("uuids").get(0).asText();
            assertEquals(18, id.length());
            assertEquals("frog", id.substring(14));
            String posted = s.asAdmin("POST", "/sd", "{}").status(201).json().path("id").asText();
            assertEquals("frog", posted.substring(14), posted);
        } finally {
            s.asAdmin("DELETE", "/_node/_local/_config/uuids/algorithm", null);
            s.asAdmin("DELETE", "/_node/_local/_config/uuids/utc_id_suffix", null);
        }
        assertEquals(32, s.asAdmin("GET", "/_uuids", null).status(200).json().path("uuids").get(0).asText().length());
    }

    /** view_multi_key_design_test.exs: each key of keys=[...] is a range of its own, start/end_key_docid applied; descending reverses the keys. */
    @Test
    void multiKeyViewQueries() throws Exception {
        s.asAdmin("PUT", "/sdk", null).status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < 30; i++) docs.append(i == 0 ? "" : ",").append("{\"_id\":\"").append(i).append("\",\"integer\":").append(i).append("}");
        s.asAdmin("POST", "/sdk/_bulk_docs", docs.append("]}").toString()).status(201);
        s.asAdmin("PUT", "/sdk/_design/test", "{\"views\":{\"multi_emit\":{\"map\":\"function(doc) { for (var i = 0; i < 3; i++) emit(i, doc.integer); }\"}}}")
                .status(201);
        com.fasterxml.jackson.databind.JsonNode rows = s.asAdmin("POST", "/sdk/_design/test/_view/multi_emit?startkey_docid=21&endkey_docid=23",
                "{\"keys\":[0,2]}").status(200).json().path("rows");
        java.util.List<String> got = new java.util.ArrayList<>();
        for (var r : rows) got.add(r.path("key").asText() + ":" + r.path("value").asText());
        assertEquals(java.util.List.of("0:21", "0:22", "0:23", "2:21", "2:22", "2:23"), got);
        rows = s.asAdmin("POST", "/sdk/_design/test/_view/multi_emit?descending=true", "{\"keys\":[1,2]}").status(200).json().path("rows");
        assertEquals(60, rows.size());
        assertEquals("2:9", rows.get(0).path("key").asText() + ":" + rows.get(0).path("id").asText()); // key 2 first, ids descending
        assertEquals("1:9", rows.get(30).path("key").asText() + ":" + rows.get(30).path("id").asText());
    }

    /**
     * security_validation_test.exs's setup: users written to a new authentication database before
     * it has _design/_auth meet none of its rules; re-creating _users gives the authentication
     * database its _design/_auth (CouchDB's auth cache restarting), and from then on its rules hold.
     */
    @Test
    void theUsersRulesAreTheAuthDesignDocuments() throws Exception {
        s.asAdmin("PUT", "/authx", null).status(201);
        try {
            s.asAdmin("PUT", "/_node/_local/_config/chttpd_auth/authentication_db", "\"authx\"").status(200);
            s.asAdmin("POST", "/authx", "{\"_id\":\"org.couchdb.user:tom\",\"name\":\"tom\",\"roles\":[],\"password\":\"cat\"}").status(201);
            s.asAdmin("GET", "/authx/_design/_auth", null).status(404);
            s.asAdmin("DELETE", "/_users", null);
            s.asAdmin("PUT", "/_users", null).status(201);
            s.asAdmin("GET", "/_users/_design/_auth", null).status(200);
            s.asAdmin("GET", "/authx/_design/_auth", null).status(200);
            s.asAdmin("POST", "/authx", "{\"_id\":\"org.couchdb.user:jerry\",\"name\":\"jerry\",\"roles\":[],\"password\":\"mouse\"}")
                    .error(403, "forbidden", "doc.type must be user");
            // tom signs in from the authentication database, his password hashed when it was written.
            s.get("/_session", "Authorization", "Basic " + HttpTestServer.b64("tom:cat")).status(200);
        } finally {
            s.asAdmin("DELETE", "/_node/_local/_config/chttpd_auth/authentication_db", null);
        }
    }

    /** view_errors_test.exs and invalid_docids_test.exs: CouchDB's words for three refusals. */
    @Test
    void tempViewsKeysMembersAndLocalIds() throws Exception {
        s.asAdmin("POST", "/sd/_temp_view", "{\"map\":\"function(doc){emit(doc.integer)}\"}")
                .error(410, "gone", "Temporary views are not supported in CouchDB");
        s.send("POST", "/sd/_temp_view", "{}", "Content-Type", "application/json").error(401, "unauthorized", null); // the database's check first
        s.asAdmin("PUT", "/sd/_design/kv", "{\"views\":{\"v\":{\"map\":\"function(doc){emit(doc._id)}\"}}}").status(201);
        s.asAdmin("POST", "/sd/_design/kv/_view/v", "{\"keys\":1}").error(400, "bad_request", "`keys` member must be an array."); // couch_mrview_util
        s.asAdmin("POST", "/sd/_all_docs", "{\"keys\":1}").error(400, "bad_request", "`keys` body member must be an array."); // chttpd_db
        s.asAdmin("PUT", "/sd/_local%2F", "{}").error(400, "bad_request", "Invalid _local document id.");
    }

    @Test
    void welcomeListsTheFeaturesChaiseHas() throws Exception {
        assertEquals("[\"nouveau\",\"access-ready\",\"partitioned\",\"scheduler\"]", s.get("/").status(200).json().path("features").toString());
    }
}

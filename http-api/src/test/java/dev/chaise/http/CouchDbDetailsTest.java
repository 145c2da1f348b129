package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The details a CouchDB client notices (issue 20), each pinned to CouchDB 3.5's answer: status,
 * error and body, with the CouchDB source that decides it named beside the assertion.
 */
class CouchDbDetailsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/dt", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static HttpTestServer.Resp json(String method, String path, String body) throws Exception {
        return s.send(method, path, body, "Authorization", ADMIN, "Content-Type", "application/json", "Accept", "application/json");
    }

    private static List<String> revs(JsonNode openRevs) {
        List<String> out = new ArrayList<>();
        for (JsonNode r : openRevs) out.add(r.has("ok") ? r.get("ok").get("_rev").asText() : "missing:" + r.get("missing").asText());
        return out;
    }

    /** PouchDB's test.get.js tree: 1-a, then 2-aaa; 2-some, 3-bbb (deleted); 2-more, 3-even, 4-ccc. */
    private static void tree(String id) throws Exception {
        json("POST", "/dt/_bulk_docs", "{\"new_edits\":false,\"docs\":["
                + "{\"_id\":\"" + id + "\",\"_rev\":\"1-a\",\"v\":0},"
                + "{\"_id\":\"" + id + "\",\"_rev\":\"2-aaa\",\"v\":\"x\",\"_revisions\":{\"start\":2,\"ids\":[\"aaa\",\"a\"]}},"
                + "{\"_id\":\"" + id + "\",\"_rev\":\"3-bbb\",\"v\":\"y\",\"_deleted\":true,\"_revisions\":{\"start\":3,\"ids\":[\"bbb\",\"some\",\"a\"]}},"
                + "{\"_id\":\"" + id + "\",\"_rev\":\"4-ccc\",\"v\":\"z\",\"_revisions\":{\"start\":4,\"ids\":[\"ccc\",\"even\",\"more\",\"a\"]}}]}").status(201);
    }

    @Test
    void openRevsAllInFabricsOrder() throws Exception {
        tree("t1");
        // fabric_doc_open_revs:tree_format_replies sorts the #doc records: position, then revision id.
        // The winner (4-ccc) is not first; the deleted leaf keeps its place.
        JsonNode all = json("GET", "/dt/t1?open_revs=all", null).status(200).json();
        assertEquals(List.of("2-aaa", "3-bbb", "4-ccc"), revs(all));
        assertEquals("{\"_id\":\"t1\",\"_rev\":\"3-bbb\",\"v\":\"y\",\"_deleted\":true}", all.get(1).get("ok").toString());
        JsonNode withRevs = json("GET", "/dt/t1?open_revs=all&revs=true", null).status(200).json();
        assertEquals(List.of("2-aaa", "3-bbb", "4-ccc"), revs(withRevs));
        assertEquals("{\"start\":4,\"ids\":[\"ccc\",\"even\",\"more\",\"a\"]}", withRevs.get(2).get("ok").get("_revisions").toString());
        // Asked revisions come back each once, documents first (sorted), then the missing ones (sorted).
        JsonNode some = json("GET", "/dt/t1?open_revs=%5B%229-x%22,%224-ccc%22,%222-aaa%22,%224-ccc%22,%221-zz%22%5D", null).status(200).json();
        assertEquals(List.of("2-aaa", "4-ccc", "missing:1-zz", "missing:9-x"), revs(some));
    }

    @Test
    void openRevsLatestNeverTwice() throws Exception {
        tree("t2");
        // PouchDB 5857: two revisions of one branch with latest=true give its leaf once.
        assertEquals(List.of("4-ccc"), revs(json("GET", "/dt/t2?latest=true&open_revs=%5B%222-more%22%5D", null).json()));
        assertEquals(List.of("4-ccc"), revs(json("GET", "/dt/t2?latest=true&open_revs=%5B%222-more%22,%223-even%22,%224-ccc%22%5D", null).json()));
        // The root reaches every leaf, each once; a revision the tree lacks is missing.
        assertEquals(List.of("2-aaa", "3-bbb", "4-ccc", "missing:2-nope"),
                revs(json("GET", "/dt/t2?latest=true&open_revs=%5B%222-nope%22,%221-a%22,%222-some%22%5D", null).json()));
        // _bulk_get with latest: no leaf twice either.
        JsonNode bulk = json("POST", "/dt/_bulk_get?latest=true", "{\"docs\":[{\"id\":\"t2\",\"rev\":\"2-more\"},{\"id\":\"t2\",\"rev\":\"3-even\"}]}")
                .status(200).json();
        assertEquals(2, bulk.get("results").size());
        for (JsonNode r : bulk.get("results")) {
            assertEquals(1, r.get("docs").size(), bulk.toString());
            assertEquals("4-ccc", r.get("docs").get(0).get("ok").get("_rev").asText());
        }
    }

    @Test
    void allDocsQueries() throws Exception {
        s.asAdmin("PUT", "/dq", null).status(201);
        json("POST", "/dq/_bulk_docs", "{\"docs\":[{\"_id\":\"a\"},{\"_id\":\"b\"},{\"_id\":\"c\"},{\"_id\":\"_design/x\"},{\"_id\":\"_design/y\"}]}").status(201);
        json("PUT", "/dq/_local/l1", "{}").status(201);
        json("PUT", "/dq/_local/l2", "{}").status(201);
        // chttpd_db:multi_all_docs_view: {"results": [one _all_docs answer per query, in order]}; the
        // query string is each query's base (here include_docs), its members override it.
        JsonNode r = json("POST", "/dq/_all_docs/queries?include_docs=true",
                "{\"queries\":[{\"keys\":[\"b\",\"zz\"]},{\"limit\":1,\"skip\":1,\"include_docs\":false},{\"startkey\":\"c\",\"descending\":true}]}")
                .status(200).json();
        assertEquals(3, r.get("results").size());
        JsonNode q0 = r.get("results").get(0);
        assertEquals(5, q0.get("total_rows").asInt());
        assertEquals("b", q0.get("rows").get(0).get("doc").get("_id").asText());
        assertEquals("{\"key\":\"zz\",\"error\":\"not_found\"}", q0.get("rows").get(1).toString());
        JsonNode q1 = r.get("results").get(1).get("rows");
        assertEquals(1, q1.size());
        assertEquals("_design/y", q1.get(0).get("id").asText()); // design docs sort first, '_' < 'a'
        assertEquals(false, q1.get(0).has("doc"));
        JsonNode q2 = r.get("results").get(2).get("rows");
        assertEquals(List.of("c", "b", "a", "_design/y", "_design/x"), ids(q2));
        // The same beside _design_docs and _local_docs.
        JsonNode d = json("POST", "/dq/_design_docs/queries", "{\"queries\":[{},{\"descending\":true,\"limit\":1}]}").status(200).json();
        assertEquals(List.of("_design/x", "_design/y"), ids(d.get("results").get(0).get("rows")));
        assertEquals(2, d.get("results").get(0).get("total_rows").asInt());
        assertEquals(List.of("_design/y"), ids(d.get("results").get(1).get("rows")));
        JsonNode l = json("POST", "/dq/_local_docs/queries", "{\"queries\":[{\"keys\":[\"_local/l2\"]},{}]}").status(200).json();
        assertEquals(List.of("_local/l2"), ids(l.get("results").get(0).get("rows")));
        assertEquals(List.of("_local/l1", "_local/l2"), ids(l.get("results").get(1).get("rows")));
        assertEquals(true, l.get("results").get(1).get("total_rows").isNull());
        // CouchDB's errors: no queries, queries not an array, a GET.
        json("POST", "/dq/_all_docs/queries", "{}").error(400, "bad_request", "POST body must include `queries` parameter.");
        json("POST", "/dq/_all_docs/queries", "{\"queries\":{}}").error(400, "bad_request", "`queries` member must be an array.");
        json("GET", "/dq/_all_docs/queries", null).error(405, "method_not_allowed", "Only POST allowed");
        s.send("POST", "/dq/_all_docs/queries", "{\"queries\":[]}", "Content-Type", "application/json").error(401, "unauthorized", null);
    }

    @Test
    void changesPendingWithLookupFilters() throws Exception {
        s.asAdmin("PUT", "/dp", null).status(201);
        json("POST", "/dp/_bulk_docs", "{\"docs\":[{\"_id\":\"a\"},{\"_id\":\"b\"},{\"_id\":\"c\"},{\"_id\":\"d\"},{\"_id\":\"e\"},{\"_id\":\"_design/x\"}]}").status(201);
        // couch_changes:send_lookup_changes (fabric_rpc:changes): pending starts as every change after
        // since and loses one per row sent; the documents the lookup skips stay pending.
        JsonNode get = json("GET", "/dp/_changes?filter=_doc_ids&doc_ids=%5B%22a%22,%22b%22%5D", null).status(200).json();
        assertEquals(2, get.get("results").size());
        assertEquals(4, get.get("pending").asInt());
        JsonNode post = json("POST", "/dp/_changes?filter=_doc_ids", "{\"doc_ids\":[\"a\",\"b\",\"nope\"]}").status(200).json();
        assertEquals(2, post.get("results").size());
        assertEquals(4, post.get("pending").asInt());
        JsonNode design = json("GET", "/dp/_changes?filter=_design", null).status(200).json();
        assertEquals(1, design.get("results").size());
        assertEquals(5, design.get("pending").asInt());
        JsonNode limited = json("GET", "/dp/_changes?filter=_doc_ids&doc_ids=%5B%22a%22,%22b%22%5D&limit=1", null).status(200).json();
        assertEquals(1, limited.get("results").size());
        assertEquals(5, limited.get("pending").asInt());
        String last = json("GET", "/dp/_changes", null).json().get("last_seq").asText();
        assertEquals(0, json("GET", "/dp/_changes", null).json().get("pending").asInt());
        assertEquals(0, json("GET", "/dp/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D&since=" + last, null).json().get("pending").asInt());
        // A filter that scans the feed (here _selector) counts only what lies past the limit, as before.
        JsonNode sel = json("POST", "/dp/_changes?filter=_selector&limit=1", "{\"selector\":{\"_id\":{\"$gt\":\"c\"}}}").status(200).json();
        assertEquals(1, sel.get("results").size());
        assertEquals(2, sel.get("pending").asInt());
    }

    @Test
    void attachmentEtagAnd304() throws Exception {
        s.send("PUT", "/dt/att1/a.txt", "hello", "Authorization", ADMIN, "Content-Type", "text/plain").status(201);
        var get = s.send("GET", "/dt/att1/a.txt", null, "Authorization", ADMIN).status(200);
        // chttpd_db: ETag is the md5 in base64, quoted; Cache-Control must-revalidate. text/plain is
        // stored gzipped (level 8, as zlib writes it for CouchDB), and the md5 is the stored bytes'.
        assertEquals("\"iMaiC8wqiFlD2NjLTemvCQ==\"", get.header("ETag"));
        assertEquals("must-revalidate", get.header("Cache-Control"));
        var nm = s.send("GET", "/dt/att1/a.txt", null, "Authorization", ADMIN, "If-None-Match", get.header("ETag")).status(304);
        assertEquals("", nm.text());
        assertEquals(get.header("ETag"), nm.header("ETag"));
        // chttpd:etag_match: a list split at commas and spaces, a weak prefix ignored; no "*".
        s.send("GET", "/dt/att1/a.txt", null, "Authorization", ADMIN, "If-None-Match", "\"x\", W/" + get.header("ETag")).status(304);
        s.send("GET", "/dt/att1/a.txt", null, "Authorization", ADMIN, "If-None-Match", "*").status(200);
        s.send("GET", "/dt/att1/a.txt", null, "Authorization", ADMIN, "If-None-Match", "\"md5-iMaiC8wqiFlD2NjLTemvCQ==\"").status(200);
    }

    @Test
    void deletingAMissingAttachment() throws Exception {
        String r1 = s.send("PUT", "/dt/att2/a.txt", "hello", "Authorization", ADMIN, "Content-Type", "text/plain").status(201).json().get("rev").asText();
        String r2 = s.send("PUT", "/dt/att2/b.txt?rev=" + r1, "world", "Authorization", ADMIN, "Content-Type", "text/plain").status(201).json().get("rev").asText();
        // chttpd_db:db_attachment_req DELETE checks the named revision has the attachment first:
        // an old revision without it is 404, even though editing it would be a conflict.
        json("DELETE", "/dt/att2/b.txt?rev=" + r1, null).error(404, "not_found", "Document is missing attachment");
        json("DELETE", "/dt/att2/nope.txt?rev=" + r2, null).error(404, "not_found", "Document is missing attachment");
        // An old revision that has it: the edit conflicts.
        json("DELETE", "/dt/att2/a.txt?rev=" + r1, null).error(409, "conflict", "Document update conflict.");
        // A revision the document does not know: fabric's {{not_found, missing}, Rev}, 409.
        json("DELETE", "/dt/att2/a.txt?rev=1-abc", null).error(409, "not_found", "missing_rev");
        s.send("PUT", "/dt/att2/c.txt?rev=9-abc", "x", "Authorization", ADMIN).error(409, "not_found", "missing_rev");
        // Without a revision: the current document and its attachment must exist, then it is a conflict.
        json("DELETE", "/dt/att2/nope.txt", null).error(404, "not_found", "Document is missing attachment");
        json("DELETE", "/dt/nodoc/a.txt", null).error(404, "not_found", "missing");
        json("DELETE", "/dt/att2/a.txt", null).error(409, "conflict", "Document update conflict.");
        json("DELETE", "/dt/att2/a.txt?rev=" + r2, null).status(200);
    }

    @Test
    void getWithAttachmentsAsMultipartRelated() throws Exception {
        String r1 = s.send("PUT", "/dt/mp/a.txt", "hello", "Authorization", ADMIN, "Content-Type", "text/plain").status(201).json().get("rev").asText();
        s.send("PUT", "/dt/mp/b.bin?rev=" + r1, "xy", "Authorization", ADMIN, "Content-Type", "application/octet-stream").status(201);
        // chttpd_db:send_doc_efficiently: attachments asked for and multipart/related accepted (here by
        // no Accept header at all, as mochiweb reads it): the JSON, then each body as a part, as
        // stored: a.txt gzipped, with Content-Encoding and its stub's encoding (att_encoding_info).
        var raw = s.client.send(java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.base + "/dt/mp?attachments=true")).header("Authorization", ADMIN).build(),
                java.net.http.HttpResponse.BodyHandlers.ofByteArray());
        assertEquals(200, raw.statusCode());
        String ct = raw.headers().firstValue("Content-Type").orElseThrow();
        org.junit.jupiter.api.Assertions.assertTrue(ct.matches("multipart/related; boundary=\"[0-9a-f]{32}\""), ct);
        String b = ct.substring(ct.indexOf('"') + 1, ct.length() - 1);
        JsonNode doc = json("GET", "/dt/mp", null).json();
        String rev = doc.get("_rev").asText();
        assertEquals("\"" + rev + "\"", raw.headers().firstValue("ETag").orElseThrow());
        // couch_doc:len_doc_to_multi_part_stream: the length is announced.
        assertEquals(String.valueOf(raw.body().length), raw.headers().firstValue("Content-Length").orElse(null));
        String expectedJson = "{\"_id\":\"mp\",\"_rev\":\"" + rev + "\",\"_attachments\":{"
                + "\"a.txt\":{\"content_type\":\"text/plain\",\"digest\":\"md5-iMaiC8wqiFlD2NjLTemvCQ==\",\"length\":5,\"revpos\":1,\"follows\":true,\"encoding\":\"gzip\",\"encoded_length\":25},"
                + "\"b.bin\":{\"content_type\":\"application/octet-stream\",\"digest\":\"" + doc.at("/_attachments/b.bin/digest").asText()
                + "\",\"length\":2,\"revpos\":2,\"follows\":true}}}";
        String gz = new String(new byte[] {0x1f, (byte) 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, (byte) 0xcb, 0x48, (byte) 0xcd, (byte) 0xc9, (byte) 0xc9, 7, 0,
                (byte) 0x86, (byte) 0xa6, 0x10, 0x36, 5, 0, 0, 0}, java.nio.charset.StandardCharsets.ISO_8859_1);
        assertEquals("--" + b + "\r\nContent-Type: application/json\r\n\r\n" + expectedJson + "\r\n--" + b
                + "\r\nContent-Disposition: attachment; filename=\"a.txt\"\r\nContent-Type: text/plain\r\nContent-Length: 25\r\nContent-Encoding: gzip\r\n\r\n" + gz + "\r\n--" + b
                + "\r\nContent-Disposition: attachment; filename=\"b.bin\"\r\nContent-Type: application/octet-stream\r\nContent-Length: 2\r\n\r\nxy\r\n--" + b + "--",
                new String(raw.body(), java.nio.charset.StandardCharsets.ISO_8859_1));
        // atts_since: attachments up to that revision stay stubs and are not parts.
        var since = s.send("GET", "/dt/mp?atts_since=%5B%22" + r1 + "%22%5D", null, "Authorization", ADMIN, "Accept", "multipart/related").status(200);
        org.junit.jupiter.api.Assertions.assertTrue(since.text().contains("\"a.txt\":{\"content_type\":\"text/plain\",\"digest\":\"md5-iMaiC8wqiFlD2NjLTemvCQ==\",\"length\":5,\"revpos\":1,\"stub\":true,\"encoding\":\"gzip\",\"encoded_length\":25}"), since.text());
        org.junit.jupiter.api.Assertions.assertFalse(since.text().contains("hello"), since.text());
        // A client that accepts only JSON gets the bodies inline, base64, as before.
        JsonNode inline = json("GET", "/dt/mp?attachments=true", null).status(200).json();
        assertEquals("aGVsbG8=", inline.at("/_attachments/a.txt/data").asText());
        // A document without attachments is JSON whatever is accepted.
        json("PUT", "/dt/plain", "{\"v\":1}").status(201);
        assertEquals("application/json", s.send("GET", "/dt/plain?attachments=true", null, "Authorization", ADMIN).status(200).header("Content-Type"));
    }

    @Test
    void functionsThatDoNotCompile() throws Exception {
        // couch_mrview:validate compiles every view's map and JavaScript reduce before the save:
        // {bad_request, compilation_error, "Compilation of the map function in the 'v' view failed: ..."}.
        var map = json("PUT", "/dt/_design/badmap", "{\"views\":{\"v\":{\"map\":\"function(doc) }{\"}}}").error(400, "compilation_error", null);
        org.junit.jupiter.api.Assertions.assertTrue(map.json().get("reason").asText().startsWith("Compilation of the map function in the 'v' view failed: "),
                map.text());
        org.junit.jupiter.api.Assertions.assertTrue(map.json().get("reason").asText().length() > "Compilation of the map function in the 'v' view failed: ".length());
        var red = json("PUT", "/dt/_design/badred", "{\"views\":{\"w\":{\"map\":\"function(doc){ emit(null); }\",\"reduce\":\"function(k, v, r) }{}\"}}}")
                .error(400, "compilation_error", null);
        org.junit.jupiter.api.Assertions.assertTrue(red.json().get("reason").asText().startsWith("Compilation of the reduce function in the 'w' view failed: "), red.text());
        json("PUT", "/dt/_design/notfn", "{\"views\":{\"v\":{\"map\":\"emit(1)\"}}}").error(400, "compilation_error", null);
        // The same in _bulk_docs, per document; nothing is saved.
        JsonNode rows = json("POST", "/dt/_bulk_docs", "{\"docs\":[{\"_id\":\"_design/badmap\",\"views\":{\"v\":{\"map\":\"function(\"}}},{\"_id\":\"fine\"}]}")
                .status(201).json();
        assertEquals("compilation_error", rows.get(0).get("error").asText());
        assertEquals(true, rows.get(1).get("ok").asBoolean());
        json("GET", "/dt/_design/badmap", null).error(404, "not_found", "missing");
        // Built-in reduces, and what compiles, are saved; so is another language, unchecked, as in CouchDB.
        json("PUT", "/dt/_design/good", "{\"views\":{\"v\":{\"map\":\"function(doc){ emit(doc._id); }\",\"reduce\":\"_count\"}}}").status(201);
        json("PUT", "/dt/_design/other", "{\"language\":\"erlang\",\"views\":{\"v\":{\"map\":\"fun({Doc}) -> ok end.\"}}}").status(201);
    }

    @Test
    void statsOverArrays() throws Exception {
        s.asAdmin("PUT", "/ds", null).status(201);
        json("PUT", "/ds/_design/s", "{\"views\":{\"v\":{\"map\":\"function(doc){ emit(doc.g, doc.val); }\",\"reduce\":\"_stats\"}}}").status(201);
        json("POST", "/ds/_bulk_docs", "{\"docs\":[{\"g\":\"same\",\"val\":[1,2]},{\"g\":\"same\",\"val\":[3,4]},"
                + "{\"g\":\"diff\",\"val\":[1,2]},{\"g\":\"diff\",\"val\":[3]}]}").status(201);
        // couch_query_servers:stat_values zips arrays element by element...
        JsonNode same = json("GET", "/ds/_design/s/_view/v?key=%22same%22", null).status(200).json();
        assertEquals("[{\"sum\":4,\"count\":2,\"min\":1,\"max\":3,\"sumsqr\":10},{\"sum\":6,\"count\":2,\"min\":2,\"max\":4,\"sumsqr\":20}]",
                same.get("rows").get(0).get("value").toString());
        // ...with lists:zipwith, which fails on arrays of different lengths: the query fails, 500.
        json("GET", "/ds/_design/s/_view/v?key=%22diff%22", null).error(500, "invalid_value", null);
        json("GET", "/ds/_design/s/_view/v", null).error(500, "invalid_value", null);
    }

    @Test
    void compressedAttachmentsFromACouchDbReplicator() throws Exception {
        // What couch_replicator sends for a text attachment CouchDB keeps gzipped: the compressed bytes,
        // "encoding": "gzip", encoded_length, and the digest of the compressed bytes.
        byte[] text = "hello hello hello hello hello hello hello".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
        try (java.util.zip.GZIPOutputStream z = new java.util.zip.GZIPOutputStream(gz)) {
            z.write(text);
        }
        byte[] zipped = gz.toByteArray();
        String zippedDigest = "md5-" + java.util.Base64.getEncoder().encodeToString(java.security.MessageDigest.getInstance("MD5").digest(zipped));
        String r1 = "1-" + "a".repeat(32);
        String json = "{\"_id\":\"gz\",\"_rev\":\"" + r1 + "\",\"_revisions\":{\"start\":1,\"ids\":[\"" + "a".repeat(32) + "\"]},"
                + "\"_attachments\":{\"t.txt\":{\"content_type\":\"text/plain\",\"revpos\":1,\"digest\":\"" + zippedDigest + "\",\"length\":" + text.length
                + ",\"follows\":true,\"encoding\":\"gzip\",\"encoded_length\":" + zipped.length + "}}}";
        java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
        body.writeBytes(("--b\r\nContent-Type: application/json\r\n\r\n" + json + "\r\n--b\r\nContent-Disposition: attachment; filename=\"t.txt\"\r\n"
                + "Content-Type: text/plain\r\nContent-Length: " + zipped.length + "\r\nContent-Encoding: gzip\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        body.writeBytes(zipped);
        body.writeBytes("\r\n--b--".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        var req = java.net.http.HttpRequest.newBuilder(java.net.URI.create(s.base + "/dt/gz?new_edits=false"))
                .header("Authorization", ADMIN).header("Content-Type", "multipart/related; boundary=\"b\"")
                .PUT(java.net.http.HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build();
        assertEquals(201, s.client.send(req, java.net.http.HttpResponse.BodyHandlers.ofString()).statusCode());
        // Stored as it came (COUCHDB-1923): served decoded, named by the compressed bytes' digest.
        assertEquals(new String(text, java.nio.charset.StandardCharsets.UTF_8), s.send("GET", "/dt/gz/t.txt", null, "Authorization", ADMIN).status(200).text());
        JsonNode meta = json("GET", "/dt/gz?att_encoding_info=true", null).json().at("/_attachments/t.txt");
        assertEquals(text.length, meta.get("length").asInt());
        assertEquals("gzip", meta.get("encoding").asText(), meta.toString());
        assertEquals(zipped.length, meta.get("encoded_length").asInt());
        assertEquals(zippedDigest, meta.get("digest").asText());
        // Its next revision names it by the source's digest as a stub: matched by name and revpos, as couch_att:merge_stubs does.
        String r2 = "2-" + "b".repeat(32);
        json("PUT", "/dt/gz?new_edits=false", "{\"_rev\":\"" + r2 + "\",\"_revisions\":{\"start\":2,\"ids\":[\"" + "b".repeat(32) + "\",\"" + "a".repeat(32) + "\"]},\"v\":2,"
                + "\"_attachments\":{\"t.txt\":{\"stub\":true,\"content_type\":\"text/plain\",\"revpos\":1,\"digest\":\"" + zippedDigest + "\",\"length\":" + text.length
                + ",\"encoding\":\"gzip\",\"encoded_length\":" + zipped.length + "}}}").status(201);
        assertEquals(new String(text, java.nio.charset.StandardCharsets.UTF_8), s.send("GET", "/dt/gz/t.txt?rev=" + r2, null, "Authorization", ADMIN).status(200).text());
    }

    private static List<String> ids(JsonNode rows) {
        List<String> out = new ArrayList<>();
        for (JsonNode row : rows) out.add(row.get("id").asText());
        return out;
    }
}

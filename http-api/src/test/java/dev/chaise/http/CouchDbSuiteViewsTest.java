package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * CouchDB's Elixir suite (issue 26) in views, attachments, JSONP and the query languages: each
 * behaviour pinned to CouchDB 3.5.0's status, error and body, so it holds without the slow suite.
 */
class CouchDbSuiteViewsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/sv", null).status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    private static void config(String section, String key, String value) throws Exception {
        if (value == null) s.send("DELETE", "/_node/_local/_config/" + section + "/" + key, null, "Authorization", ADMIN);
        else s.send("PUT", "/_node/_local/_config/" + section + "/" + key, "\"" + value + "\"", "Authorization", ADMIN).status(200);
    }

    @Test
    void jsonpFramesJsonAsCouchHttpdDoes() throws Exception {
        // jsonp_test.exs; couch_httpd's initialize_jsonp, start_jsonp, end_jsonp, validate_callback.
        s.asAdmin("PUT", "/sv/j0", "{\"a\":0}").status(201);
        s.asAdmin("PUT", "/sv/_design/jsonp", "{\"views\":{\"v\":{\"map\":\"function(doc){if(doc.a===0) emit(null, doc.a);}\"}}}").status(201);
        // Off by default: plain JSON.
        HttpTestServer.Resp off = s.get("/sv/j0?callback=cb", "Authorization", ADMIN).status(200);
        assertEquals("application/json", off.header("Content-Type"));
        config("chttpd", "allow_jsonp", "true");
        try {
            HttpTestServer.Resp r = s.get("/sv/j0?callback=cb", "Authorization", ADMIN).status(200);
            assertEquals("application/javascript", r.header("Content-Type"));
            assertTrue(r.text().matches("/\\* CouchDB \\*/cb\\(\\{\"_id\":\"j0\",\"_rev\":\"1-[0-9a-f]+\",\"a\":0\\}\\);\n"), r.text());
            // Errors are framed too (send_error goes through send_json).
            HttpTestServer.Resp missing = s.get("/sv/nope?callback=a.b_c[0]", "Authorization", ADMIN).status(404);
            assertEquals("/* CouchDB */a.b_c[0]({\"error\":\"not_found\",\"reason\":\"missing\"});\n", missing.text());
            // A name outside [A-Za-z0-9._[]] is refused, unframed.
            s.get("/sv/j0?callback=cb%22", "Authorization", ADMIN).error(400, "bad_request", "invalid_callback");
            assertEquals("application/json", s.get("/sv/j0?callback=cb'", "Authorization", ADMIN).header("Content-Type"));
            // Chunked answers: the frame around the chunks, the newline after it.
            HttpTestServer.Resp v = s.get("/sv/_design/jsonp/_view/v?callback=cb", "Authorization", ADMIN).status(200);
            assertEquals("application/javascript", v.header("Content-Type"));
            assertTrue(v.text().startsWith("/* CouchDB */cb({\"total_rows\":1,"), v.text());
            assertTrue(v.text().endsWith("]});\n"), v.text());
            HttpTestServer.Resp c = s.get("/sv/_changes?callback=cb", "Authorization", ADMIN).status(200);
            assertTrue(c.text().startsWith("/* CouchDB */cb({\"results\":["), c.text());
            assertTrue(c.text().endsWith(");\n"), c.text());
            // An empty callback is no callback.
            assertEquals("application/json", s.get("/sv/j0?callback=", "Authorization", ADMIN).header("Content-Type"));
        } finally {
            config("chttpd", "allow_jsonp", null);
        }
    }

    @Test
    void rawCollationViewsSortAsErlangTerms() throws Exception {
        // view_collation_raw_test.exs; couch_mrview_util:maybe_define_less_fun: options.collation "raw" is Erlang's <.
        s.asAdmin("PUT", "/svraw", null).status(201);
        String[] values = {"1", "2", "false", "null", "true", "{\"a\":1}", "{\"b\":2,\"a\":1}", "{\"b\":2,\"c\":2}",
            "[\"b\"]", "[\"b\",\"c\"]", "\"A\"", "\"B\"", "\"a\"", "\"aa\"", "\"b\"", "\"ba\""};
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < values.length; i++) docs.append(i == 0 ? "" : ",").append("{\"_id\":\"").append(i + 1).append("\",\"foo\":").append(dev.chaise.storage.json.Json.NODES.textNode(values[i])).append('}');
        s.asAdmin("POST", "/svraw/_bulk_docs", docs.append("]}").toString()).status(201);
        // The values travel as JSON text: a stored document's members come back in name order (RFC A), an
        // object the map function makes keeps its order.
        s.asAdmin("PUT", "/svraw/_design/test", "{\"views\":{\"raw\":{\"map\":\"function(doc){emit(JSON.parse(doc.foo), null);}\",\"options\":{\"collation\":\"raw\"}},"
                + "\"icu\":{\"map\":\"function(doc){emit(JSON.parse(doc.foo), null);}\"}}}").status(201);
        String url = "/svraw/_design/test/_view/raw";
        com.fasterxml.jackson.databind.JsonNode rows = s.asAdmin("GET", url, null).status(200).json().path("rows");
        assertEquals(values.length, rows.size());
        for (int i = 0; i < values.length; i++) assertEquals(values[i], rows.get(i).path("key").toString());
        rows = s.asAdmin("GET", url + "?descending=true", null).status(200).json().path("rows");
        for (int i = 0; i < values.length; i++) assertEquals(values[values.length - 1 - i], rows.get(i).path("key").toString());
        // "Z" < "a" in bytes: a range the default collation refuses as reversed.
        rows = s.asAdmin("GET", url + "?startkey=%22Z%22&endkey=%22a%22", null).status(200).json().path("rows");
        assertEquals("[\"a\"]", keys(rows));
        s.asAdmin("GET", "/svraw/_design/test/_view/icu?startkey=%22Z%22&endkey=%22a%22", null).error(400, "query_parse_error",
                "No rows can match your key range, reverse your start_key and end_key or set descending=true");
        // key= finds an object by its members in order.
        rows = s.asAdmin("GET", url + "?key=" + java.net.URLEncoder.encode("{\"b\":2,\"a\":1}", "UTF-8"), null).status(200).json().path("rows");
        assertEquals("[{\"b\":2,\"a\":1}]", keys(rows));
        assertEquals("7", rows.get(0).path("id").asText());
        // inclusive_end=false stops before "b", both ways.
        rows = s.asAdmin("GET", url + "?endkey=%22b%22&inclusive_end=false", null).status(200).json().path("rows");
        assertEquals("\"aa\"", rows.get(rows.size() - 1).path("key").toString());
        rows = s.asAdmin("GET", url + "?endkey=%22b%22&inclusive_end=false&descending=true", null).status(200).json().path("rows");
        assertEquals("\"ba\"", rows.get(rows.size() - 1).path("key").toString());
    }

    @Test
    void aMapFunctionThatNeverReturnsFailsTheQuery() throws Exception {
        // view_errors_test.exs "infinite loop": couch_os_process gives up on couchjs after
        // [couchdb] os_process_timeout, the index update fails, and the query answers 500.
        s.asAdmin("PUT", "/svloop", null).status(201);
        s.asAdmin("PUT", "/svloop/d", "{\"integer\":1}").status(201);
        s.asAdmin("PUT", "/svloop/_design/infinite", "{\"views\":{\"loop\":{\"map\":\"function(doc) {while(true){emit(doc,doc);}};\"}}}").status(201);
        s.asAdmin("PUT", "/svloop/_design/fine", "{\"views\":{\"v\":{\"map\":\"function(doc) {emit(doc.integer, null);}\"}}}").status(201);
        HttpTestServer.Resp r = s.asAdmin("GET", "/svloop/_design/infinite/_view/loop", null).error(500, "os_process_error", null);
        String reason = r.json().path("reason").asText();
        assertTrue(reason.equals("OS process timed out.") || reason.startsWith("the function allocated more than"), r.text());
        // The engine serves the next function.
        assertEquals("[1]", keys(s.asAdmin("GET", "/svloop/_design/fine/_view/v", null).status(200).json().path("rows")));
    }

    @Test
    void aReduceThatGrowsTooFastIsAnOverflowRow() throws Exception {
        // view_errors_test.exs "reduce overflow error": views.js's reduce_limit check, written by
        // fabric_view_row/couch_mrview_http as a row {"key":null,"error":...,"reason":...}.
        s.asAdmin("PUT", "/svbig", null).status(201);
        s.asAdmin("PUT", "/svbig/d", "{\"integer\":1}").status(201);
        s.asAdmin("PUT", "/svbig/_design/big", "{\"views\":{\"big\":{\"map\":\"function (doc) {emit(doc.integer, doc.integer)};\","
                + "\"reduce\":\"function (keys, values) { var chars = []; for (var i=0; i < 1000; i++) {chars.push('wazzap');};return chars; };\"}}}").status(201);
        com.fasterxml.jackson.databind.JsonNode rows = s.asAdmin("GET", "/svbig/_design/big/_view/big", null).status(200).json().path("rows");
        assertEquals(1, rows.size(), rows.toString());
        assertTrue(rows.get(0).path("key").isNull(), rows.toString());
        assertEquals("reduce_overflow_error", rows.get(0).path("error").asText(), rows.toString());
        assertTrue(rows.get(0).path("reason").asText().matches("Reduce output must shrink more rapidly: input size: \\d+ output size: 9001"), rows.toString());
        // [query_server_config] reduce_limit = false lets it through.
        config("query_server_config", "reduce_limit", "false");
        try {
            s.asAdmin("PUT", "/svbig/d2", "{\"integer\":2}").status(201); // a new reduce, not the stored one
            rows = s.asAdmin("GET", "/svbig/_design/big/_view/big?group=true", null).status(200).json().path("rows");
            assertEquals(1000, rows.get(1).path("value").size(), rows.toString());
        } finally {
            config("query_server_config", "reduce_limit", null);
        }
    }

    @Test
    void attEncodingInfoShowsHowStubsAreStoredInEveryListing() throws Exception {
        // changes_test.exs "COUCHDB-1923", attachment_views_test.exs: att_encoding_info=true in
        // _changes, _all_docs and views with include_docs (their doc_options) adds encoding and
        // encoded_length to the stubs of compressible attachments, which are stored gzipped.
        s.asAdmin("PUT", "/svenc", null).status(201);
        String text = "This is a base64 encoded text".repeat(20);
        String b64 = java.util.Base64.getEncoder().encodeToString(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        s.asAdmin("PUT", "/svenc/a", "{\"_attachments\":{\"foo.txt\":{\"content_type\":\"text/plain\",\"data\":\"" + b64 + "\"},"
                + "\"bar.bin\":{\"content_type\":\"application/octet-stream\",\"data\":\"" + b64 + "\"}}}").status(201);
        s.asAdmin("PUT", "/svenc/_design/v", "{\"views\":{\"all\":{\"map\":\"function(doc){emit(doc._id, null);}\"}}}").status(201);
        String[] urls = {"/svenc/_changes?include_docs=true", "/svenc/_all_docs?include_docs=true", "/svenc/_design/v/_view/all?include_docs=true"};
        for (String url : urls) {
            com.fasterxml.jackson.databind.JsonNode doc = docA(s.asAdmin("GET", url, null).status(200).json());
            assertTrue(doc.path("_attachments").path("foo.txt").path("stub").asBoolean(), url + " " + doc);
            assertTrue(doc.path("_attachments").path("foo.txt").path("encoding").isMissingNode(), url + " " + doc);
            doc = docA(s.asAdmin("GET", url + "&att_encoding_info=true", null).status(200).json());
            com.fasterxml.jackson.databind.JsonNode foo = doc.path("_attachments").path("foo.txt");
            assertEquals("gzip", foo.path("encoding").asText(), url + " " + doc);
            assertEquals(text.length(), foo.path("length").asInt(), url + " " + doc);
            assertTrue(foo.path("encoded_length").asInt() < text.length(), url + " " + doc);
            // Not a compressible type: stored as sent, nothing to say.
            assertTrue(doc.path("_attachments").path("bar.bin").path("encoding").isMissingNode(), url + " " + doc);
        }
    }

    @Test
    void attachmentBodiesAreSentWithTheirLength() throws Exception {
        // attachment_ranges_test.exs: couch_httpd's start_response_length, whole or a range.
        s.asAdmin("PUT", "/svlen", null).status(201);
        s.asAdmin("PUT", "/svlen/bin_doc", "{\"_attachments\":{\"foo.txt\":{\"content_type\":\"application/octet-stream\","
                + "\"data\":\"VGhpcyBpcyBhIGJhc2U2NCBlbmNvZGVkIHRleHQ=\"}}}").status(201);
        HttpTestServer.Resp r = s.get("/svlen/bin_doc/foo.txt", "Authorization", ADMIN, "Range", "bytes=0-28").status(206);
        assertEquals("29", r.header("Content-Length"));
        assertEquals("bytes 0-28/29", r.header("Content-Range"));
        assertEquals(null, r.header("Transfer-Encoding"));
        r = s.get("/svlen/bin_doc/foo.txt", "Authorization", ADMIN, "Range", "bytes=2-").status(206);
        assertEquals("27", r.header("Content-Length"));
        assertEquals("is is a base64 encoded text", r.text());
        r = s.get("/svlen/bin_doc/foo.txt", "Authorization", ADMIN).status(200);
        assertEquals("29", r.header("Content-Length"));
        // Stored gzipped: the length of what is sent, decoded or as stored.
        String text = "compressible ".repeat(100);
        s.send("PUT", "/svlen/gz/t.txt", text, "Authorization", ADMIN, "Content-Type", "text/plain").status(201);
        r = s.get("/svlen/gz/t.txt", "Authorization", ADMIN).status(200);
        assertEquals(String.valueOf(text.length()), r.header("Content-Length"));
        assertEquals(text, r.text());
        // A JSON attachment is its bytes, never a JSONP frame.
        s.send("PUT", "/svlen/js/a.json", "{\"a\":1}", "Authorization", ADMIN, "Content-Type", "application/json").status(201);
        config("chttpd", "allow_jsonp", "true");
        try {
            assertEquals("{\"a\":1}", s.get("/svlen/js/a.json?callback=cb", "Authorization", ADMIN).status(200).text());
        } finally {
            config("chttpd", "allow_jsonp", null);
        }
    }

    @Test
    void openRevsAsMultipartSendsBodiesAsStored() throws Exception {
        // attachments_multipart_test.exs "manages compressed attachments successfully": chttpd_db's
        // send_docs_multipart adds attachments, follows and att_encoding_info, with no parameter asking.
        s.asAdmin("PUT", "/svmp", null).status(201);
        String rev = s.asAdmin("PUT", "/svmp/foobar", "{}").status(201).json().path("rev").asText();
        rev = s.send("PUT", "/svmp/foobar/data.bin?rev=" + rev, "hello world", "Authorization", ADMIN, "Content-Type", "application/binary")
                .status(201).json().path("rev").asText();
        String second = rev;
        rev = s.send("PUT", "/svmp/foobar/lorem.txt?rev=" + rev, "lorem ipsum ".repeat(50), "Authorization", ADMIN, "Content-Type", "text/plain")
                .status(201).json().path("rev").asText();
        String q = "/svmp/foobar?open_revs=" + java.net.URLEncoder.encode("[\"" + rev + "\"]", "UTF-8");
        HttpTestServer.Resp r = s.get(q, "Authorization", ADMIN, "Accept", "multipart/mixed", "X-CouchDB-Send-Encoded-Atts", "true").status(200);
        assertTrue(r.text().contains("\r\nContent-Type: multipart/related; boundary="), r.text());
        assertTrue(r.text().contains("\"lorem.txt\":{\"content_type\":\"text/plain\""), r.text());
        assertTrue(r.text().contains("\"follows\":true,\"encoding\":\"gzip\""), r.text());
        assertTrue(r.text().contains("hello world"), r.text());
        // With atts_since, only the newer body follows.
        r = s.get(q + "&atts_since=" + java.net.URLEncoder.encode("[\"" + second + "\"]", "UTF-8"), "Authorization", ADMIN,
                "Accept", "multipart/mixed").status(200);
        assertTrue(r.text().contains("\"data.bin\":{\"content_type\":\"application/binary\",\"digest\""), r.text());
        assertTrue(!r.text().contains("hello world"), r.text());
        assertTrue(r.text().contains("\"follows\":true,\"encoding\":\"gzip\""), r.text());
    }

    @Test
    void runtimeCodeEvaluationIsPrevented() throws Exception {
        // view_sandboxing_test.exs "runtime code evaluation can be prevented": couchjs refuses code
        // from strings unless started with --eval (csp_allows), so the map fails on the document.
        com.fasterxml.jackson.databind.JsonNode v = s.asAdmin("GET", "/_node/_local/_versions", null).status(200).json();
        assertEquals("graaljs", v.path("javascript_engine").path("name").asText(), v.toString());
        s.asAdmin("PUT", "/sveval", null).status(201);
        s.asAdmin("PUT", "/sveval/d", "{}").status(201);
        s.asAdmin("PUT", "/sveval/_design/e", "{\"views\":{\"v\":{\"map\":\"function(doc) { var glob = emit.constructor('return this')(); emit(doc._id, null); }\"},"
                + "\"w\":{\"map\":\"function(doc) { emit(eval('1'), null); }\"}}}").status(201);
        assertEquals(0, s.asAdmin("GET", "/sveval/_design/e/_view/v", null).status(200).json().path("total_rows").asInt());
        assertEquals(0, s.asAdmin("GET", "/sveval/_design/e/_view/w", null).status(200).json().path("total_rows").asInt());
    }

    @Test
    void aListRunsForOptionsAsForGet() throws Exception {
        // list_views_test.exs "standard OPTIONS": chttpd_show:handle_view_list_req takes GET and OPTIONS alike.
        s.asAdmin("PUT", "/svlist", null).status(201);
        s.asAdmin("POST", "/svlist/_bulk_docs", "{\"docs\":[{\"_id\":\"0\",\"n\":0},{\"_id\":\"1\",\"n\":1}]}").status(201);
        s.asAdmin("PUT", "/svlist/_design/lists", "{\"views\":{\"v\":{\"map\":\"function(doc){emit(doc.n, null);}\"}},"
                + "\"lists\":{\"basic\":\"function(head, req){ send('head'); var row; while (row = getRow()) send(row.key); return 'tail'; }\"}}").status(201);
        assertEquals("head01tail", s.send("OPTIONS", "/svlist/_design/lists/_list/basic/v", null, "Authorization", ADMIN).status(200).text());
        assertEquals("head01tail", s.get("/svlist/_design/lists/_list/basic/v", "Authorization", ADMIN).status(200).text());
    }

    @Test
    void coffeeScriptDesignDocumentsRun() throws Exception {
        // coffee_test.exs: couchjs compiles each function with CoffeeScript.compile(src, {bare: true}).
        s.asAdmin("PUT", "/svcoffee", null).status(201);
        s.asAdmin("POST", "/svcoffee/_bulk_docs", "{\"docs\":[{\"_id\":\"a\",\"foo\":100},{\"foo\":1},{\"foo\":1},{\"foo\":2},{\"foo\":2},"
                + "{\"bar\":1},{\"bar\":1},{\"bar\":2},{\"bar\":2}]}").status(201);
        String ddoc = "{\"language\":\"coffeescript\",\"views\":{\"myview\":{\"map\":\"(doc) -> if doc.foo\\n  emit(doc.foo, 1)\","
                + "\"reduce\":\"(keys, values, rereduce) ->\\n  sum = 0\\n  for x in values\\n    sum = sum + x\\n  sum\"}},"
                + "\"shows\":{\"myshow\":\"(doc) ->\\n  \\\"Foo #{doc.foo}\\\"\"},"
                + "\"lists\":{\"mylist\":\"(head, req) ->\\n  while row = getRow()\\n    send(toJSON({\\\"resp\\\": \\\"Foo #{row.value}\\\"}))\\n  return\"},"
                + "\"filters\":{\"filter\":\"(doc) ->\\n  doc.foo\"}}";
        s.asAdmin("PUT", "/svcoffee/_design/coffee", ddoc).status(201);
        assertEquals(5, s.asAdmin("GET", "/svcoffee/_design/coffee/_view/myview", null).status(200).json().path("rows").get(0).path("value").asInt());
        assertEquals("Foo 100", s.asAdmin("GET", "/svcoffee/_design/coffee/_show/myshow/a", null).status(200).text());
        assertEquals("Foo 5", s.asAdmin("GET", "/svcoffee/_design/coffee/_list/mylist/myview", null).status(200).json().path("resp").asText());
        assertEquals(5, s.asAdmin("GET", "/svcoffee/_changes?filter=coffee/filter", null).status(200).json().path("results").size());
        // A CoffeeScript syntax error is the map's compilation_error.
        s.asAdmin("PUT", "/svcoffee/_design/bad", "{\"language\":\"coffeescript\",\"views\":{\"v\":{\"map\":\"(doc) -> emit(\"}}}").status(201);
        s.asAdmin("GET", "/svcoffee/_design/bad/_view/v", null).error(400, "compilation_error", null);
    }

    @Test
    void viewUpdateSeqFollowsTheDatabaseAsInViewUpdateSeqTest() throws Exception {
        // view_update_seq_test.exs with Chaise's opaque sequences (RFC D): the test's integer prefixes
        // cannot be read from them, the rest of what it checks holds. autoupdate off, as there.
        s.asAdmin("PUT", "/svseq", null).status(201);
        s.asAdmin("PUT", "/svseq/_design/test", "{\"autoupdate\":false,\"views\":{\"all_docs\":{\"map\":\"function(doc) { emit(doc.integer, doc.string) }\"},"
                + "\"summate\":{\"map\":\"function (doc) { if (typeof doc.integer === 'number') { emit(doc.integer, doc.integer)}; }\","
                + "\"reduce\":\"function (keys, values) { return sum(values); };\"}}}").status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < 100; i++) docs.append(i == 0 ? "" : ",").append("{\"_id\":\"").append(i).append("\",\"integer\":").append(i).append(",\"string\":\"").append(i).append("\"}");
        s.asAdmin("POST", "/svseq/_bulk_docs", docs.append("]}").toString()).status(201);
        String db101 = s.asAdmin("GET", "/svseq", null).status(200).json().path("update_seq").asText();
        String v = "/svseq/_design/test/_view/";
        assertEquals(db101, s.asAdmin("GET", v + "all_docs?limit=1&update_seq=true", null).status(200).json().path("update_seq").asText());
        assertTrue(s.asAdmin("GET", v + "all_docs?limit=1&update_seq=false", null).status(200).json().path("update_seq").isMissingNode());
        assertEquals(db101, s.asAdmin("GET", v + "summate?update_seq=true", null).status(200).json().path("update_seq").asText());
        assertEquals(db101, s.asAdmin("GET", "/svseq/_all_docs?limit=1&update_seq=true", null).status(200).json().path("update_seq").asText());
        assertTrue(s.asAdmin("GET", "/svseq/_all_docs?limit=1", null).status(200).json().path("update_seq").isMissingNode());
        s.asAdmin("PUT", "/svseq/A", "{\"integer\":1}").status(201);
        // stale=ok answers from the index as it is.
        assertEquals(db101, s.asAdmin("GET", v + "all_docs?limit=1&stale=ok&update_seq=true", null).status(200).json().path("update_seq").asText());
        s.asAdmin("PUT", "/svseq/AA", "{\"integer\":2}").status(201);
        String db103 = s.asAdmin("GET", "/svseq", null).status(200).json().path("update_seq").asText();
        // update_after: this answer as it is, then the index catches up.
        assertEquals(db101, s.asAdmin("GET", v + "all_docs?limit=1&stale=update_after&update_seq=true", null).status(200).json().path("update_seq").asText());
        String seq = null;
        for (int i = 0; i < 100 && !db103.equals(seq); i++) {
            seq = s.asAdmin("GET", v + "all_docs?limit=1&stale=ok&update_seq=true", null).status(200).json().path("update_seq").asText();
            if (!db103.equals(seq)) Thread.sleep(100);
        }
        assertEquals(db103, seq);
        assertEquals(db103, s.asAdmin("POST", v + "all_docs?update_seq=true", "{\"keys\":[\"0\",\"1\"]}").status(200).json().path("update_seq").asText());
        assertEquals(db103, s.asAdmin("POST", v + "summate?group=true&update_seq=true", "{\"keys\":[0,1]}").status(200).json().path("update_seq").asText());
    }

    /** The document "a" of a listing's rows or results. */
    private static com.fasterxml.jackson.databind.JsonNode docA(com.fasterxml.jackson.databind.JsonNode listing) {
        for (com.fasterxml.jackson.databind.JsonNode r : listing.has("results") ? listing.path("results") : listing.path("rows")) {
            if (r.path("id").asText().equals("a")) return r.path("doc");
        }
        throw new AssertionError("no document a in " + listing);
    }

    private static String keys(com.fasterxml.jackson.databind.JsonNode rows) {
        com.fasterxml.jackson.databind.node.ArrayNode out = dev.chaise.storage.json.Json.NODES.arrayNode();
        rows.forEach(r -> out.add(r.path("key")));
        return out.toString();
    }
}

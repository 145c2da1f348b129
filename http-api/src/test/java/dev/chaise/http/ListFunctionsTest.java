package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _list} functions, pinned to CouchDB 3.5.0's answers: its list_views_test.exs behaviour by
 * behaviour, with couch_mrview_show's rules for when the response starts (the first output: until
 * then {@code start()} may still set the code and headers) and how a failure ends a started body.
 */
class ListFunctionsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        ObjectNode lists = Json.NODES.objectNode()
                .put("basicBasic", "function(head, req) { send('head'); var row; while (row = getRow()) { send(row.key); } return 'tail'; }")
                .put("basicJSON", "function(head, req) { start({'headers': {'Content-Type': 'application/json'}});"
                        + " send('{\"head\":' + toJSON(head) + ', '); send('\"req\":' + toJSON(req) + ', '); send('\"rows\":[');"
                        + " var row, sep = ''; while (row = getRow()) { send(sep + toJSON(row)); sep = ', '; } return ']}'; }")
                .put("simpleForm", "function(head, req) { send('<ul>'); var row, n = 0, prevKey, firstKey = null;"
                        + " while (row = getRow()) { n += 1; if (!firstKey) firstKey = row.key; prevKey = row.key;"
                        + " send('\\n<li>Key: ' + row.key + ' Value: ' + row.value + ' LineNo: ' + n + '</li>'); }"
                        + " return '</ul><p>FirstKey: ' + firstKey + ' LastKey: ' + prevKey + '</p>'; }")
                .put("acceptSwitch", "function(head, req) { provides('html', function() { send('HTML <ul>'); var row, num = 0;"
                        + " while (row = getRow()) { num++; send('\\n<li>Key: ' + row.key + ' Value: ' + row.value + ' LineNo: ' + num + '</li>'); } return '</ul>'; }); }")
                .put("qsParams", "function(head, req) { return toJSON(req.query) + '\\n'; }")
                .put("stopIter", "function(req) { send('head'); var row, n = 0; while (row = getRow()) { if (n > 2) break; send(' ' + n); n += 1; } return ' tail'; }")
                .put("stopIter2", "function(head, req) { provides('html', function() { send('head'); var row, n = 0;"
                        + " while (row = getRow()) { if (n > 2) break; send(' ' + n); n += 1; } return ' tail'; }); }")
                .put("tooManyGetRows", "function() { send('head'); var row; while (row = getRow()) { send(row.key); } getRow(); getRow(); getRow();"
                        + " row = getRow(); return 'after row: ' + toJSON(row); }")
                .put("emptyList", "function() { return ' '; }")
                .put("rowError", "function(head, req) { send('head'); var row = getRow(); send(fooBarBam); return 'tail'; }")
                .put("docReference", "function(head, req) { send('head'); var row = getRow(); send(row.doc.integer); return 'tail'; }")
                .put("secObj", "function(head, req) { return toJSON(req.secObj); }")
                .put("setHeaderAfterGotRow", "function(head, req) { getRow(); start({code: 400, headers: {'X-My-Header': 'MyHeader'}}); send('bad request'); }")
                .put("allDocs", "function(head, req) { start({'headers': {'Content-Type': 'application/json'}}); var resp = head; var rows = [];"
                        + " while (row = getRow()) { rows.push(row); } resp.rows = rows; return toJSON(resp); }")
                .put("spin", "function(head, req) { send('head'); getRow(); while (true) {} }");
        ObjectNode ddoc = Json.NODES.objectNode().put("language", "javascript");
        ddoc.putObject("views").<ObjectNode>set("basicView", Json.NODES.objectNode().put("map", "function(doc) { emit(doc.integer, doc.string); }"))
                .set("withReduce", Json.NODES.objectNode().put("map", "function(doc) { emit(doc.integer, doc.string); }")
                        .put("reduce", "function(keys, values, rereduce) { return rereduce ? sum(values) : values.length; }"));
        ddoc.set("lists", lists);
        for (String db : new String[] {"li", "lic"}) {
            s.asAdmin("PUT", "/" + db, null).status(201);
            s.asAdmin("PUT", "/" + db + "/_design/lists", Json.write(ddoc)).status(201);
            StringBuilder docs = new StringBuilder("{\"docs\":[");
            for (int i = 0; i < 10; i++) docs.append(i == 0 ? "" : ",").append("{\"_id\":\"").append(i).append("\",\"integer\":").append(i).append(",\"string\":\"").append(i).append("\"}");
            s.asAdmin("POST", "/" + db + "/_bulk_docs", docs.append("]}").toString()).status(201);
        }
        s.asAdmin("PUT", "/lic/_design/views", "{\"views\":{\"basicView\":{\"map\":\"function(doc) { emit(-doc.integer, doc.string); }\"}}}").status(201);
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp get(String path, String... headers) throws Exception {
        String[] h = new String[headers.length + 2];
        h[0] = "Authorization";
        h[1] = ADMIN;
        System.arraycopy(headers, 0, h, 2, headers.length);
        return s.send("GET", path, null, h);
    }

    @Test
    void rowsReachTheFunction() throws Exception {
        HttpTestServer.Resp r = get("/li/_design/lists/_list/basicBasic/basicView").status(200);
        assertEquals("head0123456789tail", r.text());
        assertEquals("application/json", r.header("Content-Type")); // no type asked for: chttpd_external's default
        assertEquals("sandbox", r.header("Content-Security-Policy"));
    }

    @Test
    void theRichnessOfTheArguments() throws Exception {
        JsonNode b = get("/li/_design/lists/_list/basicJSON/basicView?update_seq=true").status(200).json();
        assertEquals(10, b.path("head").path("total_rows").asInt());
        assertEquals(0, b.path("head").path("offset").asInt());
        assertTrue(b.path("head").path("update_seq").isTextual());
        assertEquals(10, b.path("rows").size());
        assertEquals("{\"id\":\"0\",\"key\":0,\"value\":\"0\"}", b.path("rows").path(0).toString());
        assertEquals("li", b.path("req").path("info").path("db_name").asText());
        assertEquals("GET", b.path("req").path("method").asText());
        assertEquals("[\"li\",\"_design\",\"lists\",\"_list\",\"basicJSON\",\"basicView\"]", b.path("req").path("path").toString());
        assertTrue(b.path("req").path("headers").has("Host"));
        assertTrue(b.path("req").has("cookie"));
        assertEquals("/li/_design/lists/_list/basicJSON/basicView?update_seq=true", b.path("req").path("raw_path").asText());
    }

    @Test
    void viewParametersApply() throws Exception {
        String t = get("/li/_design/lists/_list/simpleForm/basicView?startkey=3&endkey=8").status(200).text();
        assertFalse(t.contains("Key: 1"));
        assertTrue(t.contains("FirstKey: 3") && t.contains("LastKey: 8"), t);
        assertTrue(get("/li/_design/lists/_list/simpleForm/basicView?startkey=30").status(200).text().contains("</ul>"));
        assertTrue(get("/li/_design/lists/_list/simpleForm/withReduce?startkey=30").status(200).text().contains("LastKey: undefined"));
        assertTrue(get("/li/_design/lists/_list/simpleForm/withReduce?reduce=false").status(200).text().contains("Key: 1"));
        assertTrue(get("/li/_design/lists/_list/simpleForm/withReduce?group=true").status(200).text().contains("Key: 1"));
        assertTrue(get("/li/_design/lists/_list/tooManyGetRows/basicView").status(200).text().contains("9after row: null"));
        assertEquals(" ", get("/li/_design/lists/_list/emptyList/basicView").text());
        assertEquals(" ", get("/li/_design/lists/_list/emptyList/withReduce?group=true").text());
        assertTrue(get("/li/_design/lists/_list/qsParams/basicView?foo=blam").text().contains("blam"));
        assertTrue(get("/li/_design/lists/_list/docReference/basicView?include_docs=true").text().contains("head0tail"));
    }

    @Test
    void multiKeyFetches() throws Exception {
        for (HttpTestServer.Resp r : new HttpTestServer.Resp[] {
                s.send("POST", "/li/_design/lists/_list/simpleForm/basicView", "{\"keys\":[2,4,5,7]}", "Authorization", ADMIN, "Content-Type", "application/json"),
                get("/li/_design/lists/_list/simpleForm/basicView?keys=[2,4,5,7]")}) {
            r.status(200);
            assertFalse(r.text().contains("Key: 1"));
            assertTrue(r.text().contains("Key: 2") && r.text().contains("FirstKey: 2") && r.text().contains("LastKey: 7"), r.text());
        }
        s.send("POST", "/li/_design/lists/_list/simpleForm/withReduce?group=false", "{\"keys\":[2,4,5,7]}", "Authorization", ADMIN,
                "Content-Type", "application/json").error(400, "query_parse_error", null);
    }

    @Test
    void stoppingEarly() throws Exception {
        assertEquals("head 0 1 2 tail", get("/li/_design/lists/_list/stopIter/basicView").text());
        assertEquals("head 0 1 2 tail", get("/li/_design/lists/_list/stopIter2/basicView", "Accept", "text/html").text());
        assertEquals("head 0 1 2 tail", get("/li/_design/lists/_list/stopIter/withReduce?group=true").text());
        assertEquals("head 0 1 2 tail", get("/li/_design/lists/_list/stopIter2/withReduce?group=true", "Accept", "text/html").text());
    }

    @Test
    void providesPicksTheType() throws Exception {
        HttpTestServer.Resp r = get("/li/_design/lists/_list/acceptSwitch/basicView", "Accept", "text/html");
        assertEquals("text/html; charset=utf-8", r.header("Content-Type"));
        assertTrue(r.text().contains("HTML") && r.text().contains("Value"), r.text());
    }

    @Test
    void listAndViewFromSeparateDesignDocuments() throws Exception {
        String t = get("/lic/_design/lists/_list/simpleForm/views/basicView?startkey=-3").status(200).text();
        assertFalse(t.contains("Key: -4"));
        assertTrue(t.contains("FirstKey: -3") && t.contains("LastKey: 0"), t);
        t = s.send("POST", "/lic/_design/lists/_list/simpleForm/views/basicView", "{\"keys\":[-2,-4,-5,-7]}", "Authorization", ADMIN,
                "Content-Type", "application/json").status(200).text();
        assertFalse(t.contains("Key: -3"));
        assertTrue(t.contains("Key: -7") && t.contains("FirstKey: -2") && t.contains("LastKey: -7"), t);
    }

    @Test
    void theHeadMayChangeUntilTheFirstOutput() throws Exception {
        HttpTestServer.Resp r = get("/li/_design/lists/_list/setHeaderAfterGotRow/basicView").status(400);
        assertEquals("MyHeader", r.header("X-My-Header"));
        assertEquals("bad request", r.text());
    }

    @Test
    void allDocsAsTheView() throws Exception {
        JsonNode list = get("/li/_design/lists/_list/allDocs/_all_docs").status(200).json();
        JsonNode all = get("/li/_all_docs").status(200).json();
        assertEquals(all.path("total_rows"), list.path("total_rows"));
        assertEquals(all.path("rows"), list.path("rows"));
    }

    @Test
    void failures() throws Exception {
        // Before any output: an error response.
        get("/li/_design/lists/_list/nope/basicView").error(404, "not_found", "missing json key: nope");
        get("/li/_design/lists/_list/basicBasic/nope").error(404, "not_found", "missing_named_view");
        get("/li/_design/lists/_list/basicBasic").error(404, "list_error", "Invalid path.");
        get("/li/_design/lists/_list/secObj/basicView").status(200).json();
        // After the first output: the error ends the body, as chttpd's send_chunked_error writes it.
        HttpTestServer.Resp r = get("/li/_design/lists/_list/rowError/basicView").status(200);
        assertTrue(r.text().startsWith("head\n{\"code\":500,\"error\":\"render_error\""), r.text());
        assertTrue(r.text().contains("ReferenceError"), r.text());
        r = get("/li/_design/lists/_list/spin/basicView").status(200);
        assertTrue(r.text().contains("\"error\":\"os_process_error\""), r.text());
        s.send("PUT", "/li/_design/lists/_list/basicBasic/basicView", "{}", "Authorization", ADMIN).error(405, "method_not_allowed", null);
    }

    @Test
    void membersOnly() throws Exception {
        s.asAdmin("PUT", "/lis", null).status(201);
        s.asAdmin("PUT", "/lis/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
        s.asAdmin("PUT", "/lis/_design/d", "{\"views\":{\"v\":{\"map\":\"function(doc) { emit(doc._id, null); }\"}},"
                + "\"lists\":{\"l\":\"function(head, req) { var r, n = 0; while (r = getRow()) n++; return 'rows: ' + n; }\"}}").status(201);
        s.asAdmin("PUT", "/lis/x", "{}").status(201);
        assertEquals("rows: 1", s.send("GET", "/lis/_design/d/_list/l/v", null, "Authorization", BOB).status(200).text());
        s.send("GET", "/lis/_design/d/_list/l/v", null).error(401, "unauthorized", null);
        s.send("GET", "/lis/_design/d/_list/l/v", null, "Authorization", EVE).error(403, "forbidden", null);
    }
}

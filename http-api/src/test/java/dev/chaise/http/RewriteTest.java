package dev.chaise.http;

import static dev.chaise.http.HttpTestServer.ADMIN;
import static dev.chaise.http.HttpTestServer.BOB;
import static dev.chaise.http.HttpTestServer.EVE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.chaise.storage.json.Json;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code _rewrite}, pinned to CouchDB 3.5.0's answers: rewrite_test.exs (a {@code rewrites} array
 * of rules) and rewrite_js_test.exs (a {@code rewrites} function), on a database whose name has a
 * slash too, and chttpd_rewrite's limits ({@code secure_rewrites}, {@code rewrite_limit}).
 */
class RewriteTest {
    static HttpTestServer s;
    static final String[] DBS = {"rw", "rw%2Fwith_slashes"};

    static final String RULES = """
            [{"from": "foo", "to": "foo.txt"},
             {"from": "foo2", "to": "foo.txt", "method": "GET"},
             {"from": "hello/:id", "to": "_update/hello/:id", "method": "PUT"},
             {"from": "/welcome", "to": "_show/welcome"},
             {"from": "/welcome/:name", "to": "_show/welcome", "query": {"name": ":name"}},
             {"from": "/welcome2", "to": "_show/welcome", "query": {"name": "user"}},
             {"from": "/welcome3/:name", "to": "_update/welcome2/:name", "method": "PUT"},
             {"from": "/welcome3/:name", "to": "_show/welcome2/:name", "method": "GET"},
             {"from": "basicView", "to": "_view/basicView"},
             {"from": "simpleForm/basicView", "to": "_list/simpleForm/basicView"},
             {"from": "simpleForm/basicViewFixed", "to": "_list/simpleForm/basicView", "query": {"startkey": 3, "endkey": 8}},
             {"from": "simpleForm/basicViewPath/:start/:end", "to": "_list/simpleForm/basicView",
              "query": {"startkey": ":start", "endkey": ":end"}, "formats": {"start": "int", "end": "int"}},
             {"from": "simpleForm/complexView", "to": "_list/simpleForm/complexView", "query": {"key": [1, 2]}},
             {"from": "simpleForm/complexView2", "to": "_list/simpleForm/complexView", "query": {"key": ["test", {}]}},
             {"from": "simpleForm/complexView3", "to": "_list/simpleForm/complexView", "query": {"key": ["test", ["test", "essai"]]}},
             {"from": "simpleForm/complexView4", "to": "_list/simpleForm/complexView2", "query": {"key": {"c": 1}}},
             {"from": "simpleForm/complexView5/:a/:b", "to": "_list/simpleForm/complexView3", "query": {"key": [":a", ":b"]}},
             {"from": "simpleForm/complexView6", "to": "_list/simpleForm/complexView3", "query": {"key": [":a", ":b"]}},
             {"from": "simpleForm/complexView7/:a/:b", "to": "_view/complexView3", "query": {"key": [":a", ":b"], "include_docs": ":doc"}},
             {"from": "/", "to": "_view/basicView"},
             {"from": "/db/*", "to": "../../*"}]""";

    static final String FUNCTION = """
            function(req) {
              var prefix = req.path[4], rest = req.path.slice(4).join('/');
              if (prefix === 'foo') return 'foo.txt';
              if (prefix === 'foo2') return {path: 'foo.txt', method: 'GET'};
              if (prefix === 'hello') { if (req.method != 'PUT') return; return {path: '_update/hello/' + req.path[5]}; }
              if (prefix === 'welcome') { if (req.path.length == 6) return {path: '_show/welcome', query: {'name': req.path[5]}}; return '_show/welcome'; }
              if (prefix === 'welcome2') return {path: '_show/welcome', query: {'name': 'user'}};
              if (prefix === 'welcome3') { var name = req.path[5];
                if (req.method == 'PUT') return '_update/welcome2/' + name; if (req.method == 'GET') return '_show/welcome2/' + name; return; }
              if (prefix === 'welcome4') return {path: '_show/welcome3', query: {name: req.path[5]}};
              if (prefix === 'welcome5') { var r = req.path.slice(5).join('/'); return {path: '_show/' + r, query: {name: r}}; }
              if (prefix === 'basicView') return {path: '_view/basicView'};
              if (rest === 'simpleForm/basicView') return {path: '_list/simpleForm/basicView'};
              if (rest === 'simpleForm/basicViewFixed') return {path: '_list/simpleForm/basicView', query: {startkey: '"3"', endkey: '"8"'}};
              if (rest === 'simpleForm/complexView') return {path: '_list/simpleForm/complexView', query: {key: JSON.stringify([1,2])}};
              if (rest === 'simpleForm/complexView4') return {path: '_list/simpleForm/complexView2', query: {key: JSON.stringify({"c": 1})}};
              if (rest === 'simpleForm/sendBody1') return {path: '_list/simpleForm/complexView2', method: 'POST', query: {limit: '1'},
                  headers: {'Content-type': 'application/json'}, body: JSON.stringify({keys: [{"c": 1}]})};
              if (prefix === 'db') return {path: '../../' + req.path.slice(5).join('/')};
            }""";

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        for (String db : DBS) {
            s.asAdmin("PUT", "/" + db, null).status(201);
            for (String[] d : new String[][] {{"test", RULES}, {"testjs", Json.write(Json.NODES.textNode(FUNCTION))}}) {
                ObjectNode ddoc = common();
                ddoc.set("rewrites", Json.MAPPER.readTree(d[1]));
                s.asAdmin("PUT", "/" + db + "/_design/" + d[0], Json.write(ddoc)).status(201);
            }
            StringBuilder docs = new StringBuilder("{\"docs\":[");
            for (int i = 0; i < 10; i++) docs.append("{\"integer\":").append(i).append(",\"string\":\"").append(i).append("\"},");
            docs.append("{\"a\":1,\"b\":1,\"string\":\"doc 1\",\"type\":\"complex\"},{\"a\":1,\"b\":2,\"string\":\"doc 2\",\"type\":\"complex\"},")
                    .append("{\"a\":\"test\",\"b\":{},\"string\":\"doc 3\",\"type\":\"complex\"},")
                    .append("{\"a\":\"test\",\"b\":[\"test\",\"essai\"],\"string\":\"doc 4\",\"type\":\"complex\"},")
                    .append("{\"a\":{\"c\":1},\"b\":\"\",\"string\":\"doc 5\",\"type\":\"complex\"}]}");
            s.asAdmin("POST", "/" + db + "/_bulk_docs", docs.toString()).status(201);
        }
    }

    /** What both design documents share: an attachment, a list, shows, updates and views. */
    static ObjectNode common() {
        ObjectNode d = Json.NODES.objectNode().put("language", "javascript");
        d.putObject("_attachments").putObject("foo.txt").put("content_type", "text/plain").put("data", HttpTestServer.b64("This is a base64 encoded text"));
        d.putObject("lists").put("simpleForm", "function(head, req) { send('<ul>'); var row, n = 0, prevKey, firstKey = null;"
                + " while (row = getRow()) { n += 1; if (!firstKey) firstKey = row.key; prevKey = row.key;"
                + " send('\\n<li>Key: ' + row.key + ' Value: ' + row.value + ' LineNo: ' + n + '</li>'); }"
                + " return '</ul><p>FirstKey: ' + firstKey + ' LastKey: ' + prevKey + '</p>'; }");
        d.putObject("shows").put("welcome", "function(doc, req) { return 'Welcome ' + req.query['name']; }")
                .put("welcome2", "function(doc, req) { return 'Welcome ' + doc.name; }")
                .put("welcome3", "function(doc, req) { return 'Welcome ' + req.query['name']; }");
        d.putObject("updates").put("hello", "function(doc, req) { if (!doc) { if (req.id) return [{_id: req.id}, 'New World']; return [null, 'Empty World']; }"
                        + " doc.world = 'hello'; doc.edited_by = req.userCtx; return [doc, 'hello doc']; }")
                .put("welcome2", "function(doc, req) { if (!doc) { if (req.id) return [{_id: req.id, name: req.id}, 'New World']; return [null, 'Empty World']; }"
                        + " return [doc, 'hello doc']; }");
        ObjectNode views = d.putObject("views");
        views.putObject("basicView").put("map", "function(doc) { if (doc.integer) emit(doc.integer, doc.string); }");
        views.putObject("complexView").put("map", "function(doc) { if (doc.type == 'complex') emit([doc.a, doc.b], doc.string); }");
        views.putObject("complexView2").put("map", "function(doc) { if (doc.type == 'complex') emit(doc.a, doc.string); }");
        views.putObject("complexView3").put("map", "function(doc) { if (doc.type == 'complex') emit(doc.b, doc.string); }");
        return d;
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    static HttpTestServer.Resp as(String method, String path) throws Exception {
        return s.send(method, path, null, "Authorization", ADMIN);
    }

    /** What rewrite_test.exs and rewrite_js_test.exs both check, for the rules and the function. */
    static void commonBehaviour(String db, String ddoc) throws Exception {
        String base = "/" + db + "/_design/" + ddoc + "/_rewrite";
        for (String foo : new String[] {"foo", "foo2"}) {
            HttpTestServer.Resp r = as("GET", base + "/" + foo).status(200);
            assertEquals("This is a base64 encoded text", r.text());
            assertEquals("text/plain", r.header("Content-Type"));
        }
        String id = s.asAdmin("POST", "/" + db, "{\"word\":\"plankton\",\"name\":\"Rusty\"}").status(201).json().path("id").asText();
        HttpTestServer.Resp r = as("PUT", base + "/hello/" + id).status(201);
        assertEquals("hello doc", r.text());
        assertTrue(r.header("Content-Type").contains("charset=utf-8"));
        assertEquals("hello", as("GET", "/" + db + "/" + id).json().path("world").asText());
        assertEquals("Welcome user", as("GET", base + "/welcome?name=user").text());
        assertEquals("Welcome user", as("GET", base + "/welcome/user").text());
        assertEquals("Welcome user", as("GET", base + "/welcome2").text());
        String newId = ddoc + "-test";
        assertEquals("New World", as("PUT", base + "/welcome3/" + newId).status(201).text());
        assertEquals("Welcome " + newId, as("GET", base + "/welcome3/" + newId).text());
        assertEquals(9, as("GET", base + "/basicView").status(200).json().path("total_rows").asInt());
        String t = as("GET", base + "/simpleForm/basicView?startkey=3&endkey=8").status(200).text();
        assertFalse(t.contains("Key: 1"));
        assertTrue(t.contains("FirstKey: 3") && t.contains("LastKey: 8"), t);
        assertTrue(as("GET", base + "/simpleForm/complexView").status(200).text().contains("FirstKey: 1,2"));
        assertTrue(as("GET", base + "/simpleForm/complexView4").status(200).text().contains("Value: doc 5"));
        // COUCHDB-2031: path normalization versus query parameters
        JsonNode ddocRead = as("GET", base + "/db/_design/" + ddoc + "?meta=true").status(200).json();
        assertEquals("_design/" + ddoc, ddocRead.path("_id").asText());
        assertTrue(ddocRead.has("_revs_info"));
    }

    @Test
    void rules() throws Exception {
        for (String db : DBS) {
            commonBehaviour(db, "test");
            String base = "/" + db + "/_design/test/_rewrite";
            assertEquals(9, as("GET", base).status(200).json().path("total_rows").asInt()); // the "/" rule
            String t = as("GET", base + "/simpleForm/basicViewFixed").status(200).text();
            assertTrue(t.contains("FirstKey: 3") && t.contains("LastKey: 8"), t);
            t = as("GET", base + "/simpleForm/basicViewFixed?startkey=4").status(200).text(); // the rule's query wins
            assertTrue(t.contains("FirstKey: 3") && t.contains("LastKey: 8"), t);
            t = as("GET", base + "/simpleForm/basicViewPath/3/8").status(200).text(); // formats: int
            assertTrue(t.contains("FirstKey: 3") && t.contains("LastKey: 8"), t);
            assertTrue(as("GET", base + "/simpleForm/complexView2").text().contains("Value: doc 3"));
            assertTrue(as("GET", base + "/simpleForm/complexView3").text().contains("Value: doc 4"));
            assertTrue(as("GET", base + "/simpleForm/complexView5/test/essai").text().contains("Value: doc 4"));
            assertTrue(as("GET", base + "/simpleForm/complexView6?a=test&b=essai").text().contains("Value: doc 4"));
            JsonNode rows = as("GET", base + "/simpleForm/complexView7/test/essai?doc=true").status(200).json().path("rows");
            assertTrue(rows.path(0).has("doc"), rows.toString());
            as("GET", base + "/nothing/matches").error(404, "not_found", "missing");
            as("POST", base + "/foo2").error(404, "not_found", "missing"); // foo2 is GET only
        }
    }

    @Test
    void function() throws Exception {
        for (String db : DBS) {
            commonBehaviour(db, "testjs");
            String base = "/" + db + "/_design/testjs/_rewrite";
            assertEquals("Welcome user", as("GET", base + "/welcome4/user").text());
            assertEquals("Welcome welcome3", as("GET", base + "/welcome5/welcome3").text());
            // COUCHDB-1612: a GET rewritten to a POST with a body
            assertTrue(as("GET", base + "/simpleForm/sendBody1").status(200).text().contains("Value: doc 5 LineNo: 1"));
            as("GET", base + "/nothing").error(404, "rewrite_error", "Invalid path."); // no rule for it
        }
    }

    @Test
    void functionsMayAnswerThemselves() throws Exception {
        s.asAdmin("PUT", "/rw/_design/response", "{\"rewrites\":\"function(req) { var status = parseInt(req.query.status);"
                + " return {code: status, body: JSON.stringify({status: status}), headers: {'x-foo': 'bar', 'Content-Type': 'application/json'}}; }\"}").status(201);
        HttpTestServer.Resp r = as("GET", "/rw/_design/response/_rewrite?status=200").status(200);
        assertEquals("bar", r.header("x-foo"));
        assertEquals(200, r.json().path("status").asInt());
        assertEquals("application/json", as("GET", "/rw/_design/response/_rewrite?status=451").status(451).header("Content-Type"));
        s.asAdmin("PUT", "/rw/_design/badcode", "{\"rewrites\":\"function(req) { return {code: 'x'}; }\"}").status(201);
        as("GET", "/rw/_design/badcode/_rewrite").error(500, "rewrite_error", "bad code");
        s.asAdmin("PUT", "/rw/_design/nopath", "{\"rewrites\":\"function(req) { return {method: 'GET'}; }\"}").status(201);
        as("GET", "/rw/_design/nopath/_rewrite").error(500, "rewrite_error", "Rewrite result must produce a new path.");
        s.asAdmin("PUT", "/rw/_design/throws", "{\"rewrites\":\"function(req) { nope(); }\"}").status(201);
        as("GET", "/rw/_design/throws/_rewrite").error(500, "rewrite_error", null);
        s.asAdmin("PUT", "/rw/_design/none", "{}").status(201);
        as("GET", "/rw/_design/none/_rewrite/x").error(404, "rewrite_error", "Invalid path.");
    }

    @Test
    void pathsAboveTheDatabase() throws Exception {
        // A function may climb to the server; a rule only when [chttpd] secure_rewrites is false.
        s.asAdmin("PUT", "/rw/_design/relative", "{\"rewrites\":\"function(req) { return '../../../_uuids'; }\"}").status(201);
        assertEquals(1, as("GET", "/rw/_design/relative/_rewrite/uuids").status(200).json().path("uuids").size());
        s.asAdmin("PUT", "/rw/_design/test2", "{\"rewrites\":[{\"from\":\"uuids\",\"to\":\"../../../_uuids\"}]}").status(201);
        as("GET", "/rw/_design/test2/_rewrite/uuids").error(500, "insecure_rewrite_rule", "too many ../.. segments");
        s.config.set("chttpd", "secure_rewrites", "false", false);
        try {
            assertEquals(1, as("GET", "/rw/_design/test2/_rewrite/uuids").status(200).json().path("uuids").size());
        } finally {
            s.config.delete("chttpd", "secure_rewrites", false);
        }
    }

    @Test
    void loopsStopAtTheLimit() throws Exception {
        s.asAdmin("PUT", "/rw/_design/loop", "{\"rewrites\":[{\"from\":\"loop\",\"to\":\"_rewrite/loop\"}]}").status(201);
        s.asAdmin("PUT", "/rw/_design/loopjs", "{\"rewrites\":\"function(req) { return '_rewrite/loop'; }\"}").status(201);
        s.config.set("chttpd", "rewrite_limit", "2", false);
        try {
            as("GET", "/rw/_design/loop/_rewrite/loop").error(400, "bad_request", "Exceeded rewrite recursion limit");
            as("GET", "/rw/_design/loopjs/_rewrite/loop").error(400, "bad_request", "Exceeded rewrite recursion limit");
            // One request after another is no loop.
            for (int i = 0; i < 5; i++) as("GET", "/rw/_design/test/_rewrite/foo").status(200);
        } finally {
            s.config.delete("chttpd", "rewrite_limit", false);
        }
    }

    @Test
    void requestsWithBodiesKeepTheRewrittenQuery() throws Exception {
        s.asAdmin("PUT", "/rw/_design/qs", "{\"rewrites\":\"function (r) { return {path: '../../_changes', query: {'filter': '_doc_ids'}}; };\"}").status(201);
        s.asAdmin("PUT", "/rw/qs1", "{}").status(201);
        s.asAdmin("PUT", "/rw/qs2", "{}").status(201);
        ArrayNode results = (ArrayNode) s.asAdmin("POST", "/rw/_design/qs/_rewrite", "{\"doc_ids\":[\"qs2\"]}").status(200).json().path("results");
        assertEquals(1, results.size());
        assertEquals("qs2", results.get(0).path("id").asText());
    }

    @Test
    void theRewrittenRequestIsTheCallers() throws Exception {
        s.asAdmin("PUT", "/rws", null).status(201);
        s.asAdmin("PUT", "/rws/_security", "{\"members\":{\"names\":[\"bob\"]}}").status(200);
        s.asAdmin("PUT", "/rws/_design/r", "{\"rewrites\":[{\"from\":\"doc\",\"to\":\"../../secret\"}]}").status(201);
        s.asAdmin("PUT", "/rws/secret", "{\"marker\":\"TOPSECRET\"}").status(201);
        assertTrue(s.send("GET", "/rws/_design/r/_rewrite/doc", null, "Authorization", BOB).status(200).text().contains("TOPSECRET"));
        s.send("GET", "/rws/_design/r/_rewrite/doc", null).error(401, "unauthorized", null);
        s.send("GET", "/rws/_design/r/_rewrite/doc", null, "Authorization", EVE).error(403, "forbidden", null);
    }
}

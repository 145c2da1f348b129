package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** View endpoints over HTTP, with real JavaScript: queries, reduce, errors, filters, interactive views. */
class ViewEndpointsTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/v", null).status(201);
        s.asAdmin("PUT", "/v/_design/d", "{\"views\":{\"m\":{\"map\":\"function(doc){emit(doc._id,1)}\"},"
                + "\"r\":{\"map\":\"function(doc){emit(doc._id,1)}\",\"reduce\":\"_count\"}}}").status(201);
    }

    @AfterAll
    static void stop() throws Exception {
        s.close();
    }

    @Test
    void designDocumentsAreValidatedWhenSaved() throws Exception {
        s.asAdmin("PUT", "/v/_design/bad", "{\"views\":[]}").error(400, "invalid_design_doc", "`views` is not an object");
        s.asAdmin("PUT", "/v/_design/bad", "{\"views\":{\"x\":{\"map\":1}}}").error(400, "invalid_design_doc", "View x must have a `map` string");
        s.asAdmin("PUT", "/v/_design/bad", "{\"views\":{\"x\":{\"map\":\"f\",\"reduce\":\"_median\"}}}")
                .error(400, "invalid_design_doc", "`_median` is not a supported reduce function.");
        // CouchDB 3.5's rank reducers: N from 1 to 100
        for (String bad : new String[] {"_top_Foo", "_bottom_Foo", "_top_", "_top_5 "}) {
            s.asAdmin("PUT", "/v/_design/bad", "{\"views\":{\"x\":{\"map\":\"f\",\"reduce\":\"" + bad + "\"}}}")
                    .error(400, "invalid_design_doc", "invalid rank reducer");
        }
        for (String bad : new String[] {"_top_0", "_top_101", "_bottom_-3", "_bottom_99999999999999999999"}) {
            s.asAdmin("PUT", "/v/_design/bad", "{\"views\":{\"x\":{\"map\":\"f\",\"reduce\":\"" + bad + "\"}}}")
                    .error(400, "invalid_design_doc", "rank value must be between 1 and 100");
        }
        String rows = s.asAdmin("POST", "/v/_bulk_docs", "{\"docs\":[{\"_id\":\"_design/bad\",\"views\":7},{\"_id\":\"ok\"}]}").status(201).text();
        assertEquals("[{\"id\":\"_design/bad\",\"error\":\"invalid_design_doc\",\"reason\":\"`views` is not an object\"},{\"ok\":true,\"id\":\"ok\",\"rev\":",
                rows.substring(0, rows.indexOf("\"rev\":") + 6));
        s.asAdmin("GET", "/v/_design/bad", null).error(404, "not_found", "missing");
    }

    @Test
    void builtinReducesMatchByPrefix() throws Exception {
        s.asAdmin("PUT", "/g", null).status(201);
        s.asAdmin("POST", "/g/_bulk_docs", "{\"docs\":[{\"_id\":\"a\",\"n\":2},{\"_id\":\"b\",\"n\":5}]}").status(201);
        s.asAdmin("PUT", "/g/_design/d", "{\"views\":{\"s\":{\"map\":\"function(doc){emit(doc._id,doc.n)}\",\"reduce\":\"_sum\\n\\nandothergarbage\"}}}").status(201);
        assertEquals("[{'key':null,'value':7}]", rows("/g/_design/d/_view/s"));
    }

    /** CouchDB 3.5's reduce_builtin test: 500 documents, each emitting its integer twice, through every built-in. */
    @Test
    void builtinReducesOfCouchDb35() throws Exception {
        s.asAdmin("PUT", "/rb", null).status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 1; i <= 500; i++) docs.append(i > 1 ? "," : "").append("{\"_id\":\"").append(i).append("\",\"integer\":").append(i).append('}');
        s.asAdmin("POST", "/rb/_bulk_docs", docs.append("]}").toString()).status(201);
        String map = "function (doc) { emit(doc.integer, doc.integer); emit(doc.integer, doc.integer); }";
        StringBuilder ddoc = new StringBuilder("{\"views\":{");
        String[] fns = {"_sum", "_count", "_stats", "_approx_count_distinct", "_top_3", "_bottom_3", "_first", "_last",
                "function (keys, values, rereduce) { return sum(values); }"};
        for (int i = 0; i < fns.length; i++) {
            String name = fns[i].startsWith("_") ? fns[i] : "_js";
            ddoc.append(i > 0 ? "," : "").append("\"v").append(name).append("\":{\"map\":\"").append(map).append("\",\"reduce\":\"").append(fns[i]).append("\"}");
        }
        s.asAdmin("PUT", "/rb/_design/b", ddoc.append("}}").toString()).status(201);
        assertEquals("[{'key':null,'value':250500}]", rows("/rb/_design/b/_view/v_sum"));
        assertEquals("[{'key':null,'value':1000}]", rows("/rb/_design/b/_view/v_count"));
        assertEquals("[{'key':null,'value':{'sum':250500,'count':1000,'min':1,'max':500,'sumsqr':83583500}}]", rows("/rb/_design/b/_view/v_stats"));
        long distinct = s.asAdmin("GET", "/rb/_design/b/_view/v_approx_count_distinct", null).status(200).json().at("/rows/0/value").asLong();
        assertTrue(Math.abs(distinct - 500) < 500 * 1.04 / Math.sqrt(1024), "about 500 distinct keys: " + distinct);
        assertEquals("[{'key':null,'value':[500,499,498]}]", rows("/rb/_design/b/_view/v_top_3"));
        assertEquals("[{'key':null,'value':[1,2,3]}]", rows("/rb/_design/b/_view/v_bottom_3"));
        assertEquals("[{'key':null,'value':1}]", rows("/rb/_design/b/_view/v_first"));
        assertEquals("[{'key':null,'value':500}]", rows("/rb/_design/b/_view/v_last"));
        assertEquals("[{'key':null,'value':[4]}]", rows("/rb/_design/b/_view/v_top_3?startkey=4&endkey=4"));
        assertEquals("[{'key':null,'value':[5,4]}]", rows("/rb/_design/b/_view/v_top_3?startkey=4&endkey=5"));
        assertEquals("[{'key':null,'value':[4,5,6]}]", rows("/rb/_design/b/_view/v_bottom_3?startkey=4&endkey=6"));
        assertEquals("[{'key':null,'value':4}]", rows("/rb/_design/b/_view/v_first?startkey=4&endkey=6"));
        assertEquals("[{'key':null,'value':6}]", rows("/rb/_design/b/_view/v_last?startkey=4&endkey=6"));
        assertEquals("[{'key':1,'value':[1]},{'key':2,'value':[2]},{'key':3,'value':[3]}]", rows("/rb/_design/b/_view/v_top_3?group=true&limit=3"));
        assertEquals("[{'key':1,'value':1},{'key':2,'value':2},{'key':3,'value':3}]", rows("/rb/_design/b/_view/v_last?group=true&limit=3"));
        for (int i = 1; i <= 250; i += 30) {
            long want = 2 * ((long) (500 - i) * (501 - i) / 2 - (long) (i - 1) * i / 2);
            assertEquals("[{'key':null,'value':" + want + "}]", rows("/rb/_design/b/_view/v_sum?startkey=" + i + "&endkey=" + (500 - i)));
            assertEquals("[{'key':null,'value':" + want + "}]", rows("/rb/_design/b/_view/v_js?startkey=" + i + "&endkey=" + (500 - i)), "JavaScript");
        }
        // JavaScript reduce and rereduce over the tree, as the built-in gives them
        assertEquals("[{'key':null,'value':250500}]", rows("/rb/_design/b/_view/v_js"));
        assertEquals(rows("/rb/_design/b/_view/v_sum?group=true&descending=true&limit=5"), rows("/rb/_design/b/_view/v_js?group=true&descending=true&limit=5"));
    }

    @Test
    void oneDocumentsRowsUnderOneKeyComeInValueOrder() throws Exception {
        s.asAdmin("PUT", "/dup", null).status(201);
        s.asAdmin("PUT", "/dup/a", "{}").status(201);
        s.asAdmin("PUT", "/dup/_design/d", "{\"views\":{\"m\":{\"map\":\"function(doc){emit(1,'z');emit(0);emit(1,'b');emit(1);emit(1,'b')}\"}}}").status(201);
        assertEquals("[{'id':'a','key':0,'value':null},{'id':'a','key':1,'value':null},{'id':'a','key':1,'value':'b'},"
                + "{'id':'a','key':1,'value':'b'},{'id':'a','key':1,'value':'z'}]", rows("/dup/_design/d/_view/m"));
    }

    @Test
    void mapFunctionsSeeConflicts() throws Exception {
        s.asAdmin("PUT", "/cf", null).status(201);
        s.asAdmin("PUT", "/cf/_design/d", "{\"views\":{\"c\":{\"map\":\"function(doc){ if (doc._conflicts) emit(doc._id, doc._conflicts); }\"}},"
                + "\"options\":{\"interactive\":false}}").status(201);
        s.asAdmin("PUT", "/cf/_design/i", "{\"views\":{\"c\":{\"map\":\"function(doc){ if (doc._conflicts) emit(doc._id, doc._conflicts); }\"}},"
                + "\"options\":{\"interactive\":true}}").status(201);
        s.asAdmin("PUT", "/cf/plain", "{}").status(201);
        s.asAdmin("POST", "/cf/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"x\",\"_rev\":\"1-aaaa\",\"v\":1},"
                + "{\"_id\":\"x\",\"_rev\":\"1-bbbb\",\"v\":2}]}").status(201);
        assertEquals("[{'id':'x','key':'x','value':['1-aaaa']}]", rows("/cf/_design/d/_view/c"));
        assertEquals("[{'id':'x','key':'x','value':['1-aaaa']}]", rows("/cf/_design/i/_view/c"));
    }

    @Test
    void aRunawayInteractiveMapFailsTheWriteInsteadOfRetryingIt() throws Exception {
        s.asAdmin("PUT", "/ivr", null).status(201);
        s.asAdmin("PUT", "/ivr/_design/d", "{\"views\":{\"m\":{\"map\":\"function(doc){ if (doc.spin) { while (true) {} } emit(doc._id, 1); }\"}},"
                + "\"options\":{\"interactive\":true}}").status(201);
        s.asAdmin("PUT", "/ivr/ok", "{}").status(201);
        HttpTestServer.Resp r = s.asAdmin("PUT", "/ivr/spin", "{\"spin\":true}").error(500, "os_process_error", null);
        assertTrue(r.json().get("reason").asText().contains("_design/d"), r.text());
        s.asAdmin("GET", "/ivr/spin", null).error(404, "not_found", "missing");
        assertEquals("[{'id':'ok','key':'ok','value':1}]", rows("/ivr/_design/d/_view/m"));
    }

    @Test
    void missingDesignDocsAndViews() throws Exception {
        s.asAdmin("GET", "/v/_design/nope/_view/m", null).error(404, "not_found", "missing");
        s.asAdmin("GET", "/v/_design/d/_view/nope", null).error(404, "not_found", "missing_named_view");
        s.asAdmin("GET", "/nodb/_design/d/_view/m", null).error(404, "not_found", "Database does not exist.");
        s.get("/v/_design/d/_view/m").error(401, "unauthorized", null);
    }

    @Test
    void parametersAreCheckedAgainstTheView() throws Exception {
        s.asAdmin("GET", "/v/_design/d/_view/m?reduce=true", null).error(400, "query_parse_error", "Reduce is invalid for map-only views.");
        s.asAdmin("GET", "/v/_design/d/_view/m?group=true", null).error(400, "query_parse_error", "Invalid use of grouping on a map view.");
        s.asAdmin("GET", "/v/_design/d/_view/r?include_docs=true", null).error(400, "query_parse_error", "`include_docs` is invalid for reduce");
        s.asAdmin("GET", "/v/_design/d/_view/r?keys=%5B1,2%5D", null)
                .error(400, "query_parse_error", "Multi-key fetches for reduce views must use `group=true`");
        s.asAdmin("GET", "/v/_design/d/_view/r?group=false&group_level=1", null)
                .error(400, "query_parse_error", "Can't specify group=false and group_level>0 at the same time");
        s.asAdmin("GET", "/v/_design/d/_view/m?startkey=2&endkey=1", null).error(400, "query_parse_error",
                "No rows can match your key range, reverse your start_key and end_key or set descending=true");
        s.asAdmin("GET", "/v/_design/d/_view/m?startkey=1&endkey=2&descending=true", null).error(400, "query_parse_error",
                "No rows can match your key range, reverse your start_key and end_key or set descending=false");
        s.asAdmin("GET", "/v/_design/d/_view/m?limit=-1", null).error(400, "query_parse_error", "Invalid value for positive integer: \"-1\"");
        s.asAdmin("GET", "/v/_design/d/_view/m?stale=later", null).error(400, "query_parse_error", "Invalid value for `stale`.");
        s.asAdmin("GET", "/v/_design/d/_view/m?key=%7Bbad", null).error(400, "bad_request", null);
        s.asAdmin("POST", "/v/_design/d/_view/m/queries", "{\"queries\":{}}").error(400, "bad_request", null);
    }

    static String rows(String path) throws Exception {
        return s.asAdmin("GET", path, null).status(200).json().get("rows").toString().replace('"', '\'');
    }

    @Test
    void queriesOverHttp() throws Exception {
        s.asAdmin("PUT", "/q", null).status(201);
        s.asAdmin("POST", "/q/_bulk_docs", "{\"docs\":[{\"_id\":\"a\",\"t\":\"x\",\"n\":1},{\"_id\":\"b\",\"t\":\"y\",\"n\":2},"
                + "{\"_id\":\"c\",\"t\":\"x\",\"n\":3},{\"_id\":\"d\",\"n\":4}]}").status(201);
        s.asAdmin("PUT", "/q/_design/v", "{\"views\":{\"t\":{\"map\":\"function(doc){ if (doc.t) emit(doc.t, doc.n); }\",\"reduce\":\"_sum\"},"
                + "\"pair\":{\"map\":\"doc => emit([doc.t || null, doc.n], null)\",\"reduce\":\"_count\"},"
                + "\"js\":{\"map\":\"function(doc){ emit(doc._id, doc.n); }\",\"reduce\":\"function(k, v, re){ return sum(v); }\"},"
                + "\"bad\":{\"map\":\"function(doc){ if (doc.n == 2) throw new Error('two'); emit(doc._id); }\"}}}").status(201);
        JsonNode all = s.asAdmin("GET", "/q/_design/v/_view/t?reduce=false", null).status(200).json();
        assertEquals(3, all.get("total_rows").asInt());
        assertEquals("[{'id':'a','key':'x','value':1},{'id':'c','key':'x','value':3},{'id':'b','key':'y','value':2}]", all.get("rows").toString().replace('"', '\''));
        assertEquals("[{'key':null,'value':6}]", rows("/q/_design/v/_view/t"));
        assertEquals("[{'key':'x','value':4},{'key':'y','value':2}]", rows("/q/_design/v/_view/t?group=true"));
        assertEquals("[{'key':'y','value':2}]", rows("/q/_design/v/_view/t?group=true&descending=true&limit=1"));
        assertEquals("[{'key':null,'value':4}]", rows("/q/_design/v/_view/t?key=%22x%22"));
        assertEquals("[{'id':'c','key':'x','value':3}]", rows("/q/_design/v/_view/t?reduce=false&key=%22x%22&skip=1"));
        assertEquals(0, all.get("offset").asInt());
        assertEquals(2, s.asAdmin("GET", "/q/_design/v/_view/t?reduce=false&startkey=%22y%22", null).json().get("offset").asInt(), "two rows before y");
        assertEquals(3, s.asAdmin("GET", "/q/_design/v/_view/t?reduce=false&startkey=%22y%22&skip=1", null).json().get("offset").asInt());
        assertEquals(1, s.asAdmin("GET", "/q/_design/v/_view/t?reduce=false&startkey=%22x%22&descending=true", null).json().get("offset").asInt(),
                "descending: one row (y) after the start");
        assertEquals(1, s.asAdmin("GET", "/q/_design/v/_view/bad?startkey=%22c%22", null).json().get("offset").asInt(), "a map-only view: only a comes first (b threw)");
        assertEquals(1, s.asAdmin("GET", "/q/_design/v/_view/t?reduce=false&startkey=%22x%22&startkey_docid=c", null).json().get("offset").asInt(),
                "under the start key, rows before the start doc id count");
        assertEquals("[{'id':'b','key':'y','value':2,'doc':{'_id':'b','_rev':'" + s.asAdmin("GET", "/q/b", null).json().get("_rev").asText() + "','n':2,'t':'y'}}]",
                rows("/q/_design/v/_view/t?reduce=false&startkey=%22y%22&include_docs=true"));
        assertEquals("[{'key':[null],'value':1},{'key':['x'],'value':2},{'key':['y'],'value':1}]", rows("/q/_design/v/_view/pair?group_level=1"));
        assertEquals("[{'key':null,'value':10}]", rows("/q/_design/v/_view/js"));
        assertEquals("[{'key':'a','value':1},{'key':'b','value':2}]", rows("/q/_design/v/_view/js?group=true&endkey=%22b%22"));
        assertEquals("[{'id':'a','key':'a','value':1},{'id':'c','key':'c','value':3}]",
                s.asAdmin("POST", "/q/_design/v/_view/js?reduce=false", "{\"keys\":[\"a\",\"c\",\"zz\"]}").status(200).json().get("rows").toString().replace('"', '\''));
        JsonNode multi = s.asAdmin("POST", "/q/_design/v/_view/t/queries", "{\"queries\":[{\"reduce\":false,\"limit\":1},{\"group\":true}]}").status(200).json();
        assertEquals(2, multi.get("results").size());
        assertEquals("[{'id':'a','key':'x','value':1}]", multi.get("results").get(0).get("rows").toString().replace('"', '\''));
        assertEquals(2, multi.get("results").get(1).get("rows").size());
        // A map that throws skips the doc for that view; the error is listed.
        assertEquals(3, s.asAdmin("GET", "/q/_design/v/_view/bad", null).status(200).json().get("rows").size());
        JsonNode errs = s.asAdmin("GET", "/q/_design/v/_view/bad/_errors", null).status(200).json().get("errors");
        assertEquals(1, errs.size());
        assertEquals("b", errs.get(0).get("id").asText());
        assertTrue(errs.get(0).get("reason").asText().contains("two"), errs.toString());
        // Updates show on the next query; update=false answers from the index as it is.
        s.asAdmin("PUT", "/q/e", "{\"t\":\"x\",\"n\":10}").status(201);
        assertEquals("[{'key':null,'value':6}]", rows("/q/_design/v/_view/t?update=false"));
        assertEquals("[{'key':null,'value':16}]", rows("/q/_design/v/_view/t"));
        JsonNode info = s.asAdmin("GET", "/q/_design/v/_info", null).status(200).json();
        assertEquals("v", info.get("name").asText());
        assertEquals(32, info.get("view_index").get("signature").asText().length());
        assertEquals(false, info.get("view_index").get("updater_running").asBoolean(), "the build job finished before the query answered");
    }

    @Test
    void changesFiltersRunJavaScript() throws Exception {
        s.asAdmin("PUT", "/f", null).status(201);
        s.asAdmin("PUT", "/f/_design/f", "{\"filters\":{\"big\":\"function(doc, req){ return doc.n > Number(req.query.min); }\","
                + "\"broken\":\"function(doc {\"},\"views\":{\"odd\":{\"map\":\"function(doc){ if (doc.n % 2) emit(doc.n); }\"}}}").status(201);
        for (int i = 1; i <= 5; i++) s.asAdmin("PUT", "/f/d" + i, "{\"n\":" + i + "}").status(201);
        JsonNode big = s.asAdmin("GET", "/f/_changes?filter=f/big&min=3", null).status(200).json();
        assertEquals("[\"d4\",\"d5\"]", ids(big));
        JsonNode odd = s.asAdmin("GET", "/f/_changes?filter=_view&view=f/odd", null).status(200).json();
        assertEquals("[\"d1\",\"d3\",\"d5\"]", ids(odd));
        // Filters are compiled when a feed uses them, as in CouchDB, whose {compilation_error, Msg} is a 500 then.
        s.asAdmin("GET", "/f/_changes?filter=f/broken", null).error(500, "compilation_error", null);
        s.asAdmin("GET", "/f/_changes?filter=f/nope", null).error(404, "not_found", "missing json key: nope");
    }

    static String ids(JsonNode changes) {
        var out = new java.util.ArrayList<String>();
        for (JsonNode r : changes.get("results")) out.add(r.get("id").asText());
        return out.stream().map(x -> "\"" + x + "\"").toList().toString().replace(" ", "");
    }

    @Test
    void interactiveViewsIndexInTheWritingTransaction() throws Exception {
        s.asAdmin("PUT", "/iv", null).status(201);
        s.asAdmin("PUT", "/iv/old", "{\"k\":\"o\"}").status(201);
        s.asAdmin("PUT", "/iv/_design/i", "{\"options\":{\"interactive\":true},\"views\":{\"k\":{\"map\":\"function(doc){ emit(doc.k); }\"}}}").status(201);
        assertEquals("[{'id':'old','key':'o','value':null}]", rows("/iv/_design/i/_view/k")); // waits for the background build
        s.asAdmin("PUT", "/iv/new", "{\"k\":\"n\"}").status(201);
        assertEquals("[{'id':'new','key':'n','value':null},{'id':'old','key':'o','value':null}]", rows("/iv/_design/i/_view/k?update=false"),
                "written after the index: indexed by its own transaction");
    }

    @Test
    void viewCleanupIsForAdmins() throws Exception {
        s.asAdmin("POST", "/v/_view_cleanup", "{}").status(202);
        s.send("POST", "/v/_view_cleanup", "{}", "Content-Type", "application/json").error(401, "unauthorized", null);
    }
}

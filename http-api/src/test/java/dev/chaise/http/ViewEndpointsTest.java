package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** View endpoints: design document validation, errors and parameter checks. */
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
                .error(400, "invalid_design_doc", "Unknown builtin reduce function: _median");
        String rows = s.asAdmin("POST", "/v/_bulk_docs", "{\"docs\":[{\"_id\":\"_design/bad\",\"views\":7},{\"_id\":\"ok\"}]}").status(201).text();
        assertEquals("[{\"id\":\"_design/bad\",\"error\":\"invalid_design_doc\",\"reason\":\"`views` is not an object\"},{\"ok\":true,\"id\":\"ok\",\"rev\":",
                rows.substring(0, rows.indexOf("\"rev\":") + 6));
        s.asAdmin("GET", "/v/_design/bad", null).error(404, "not_found", "missing");
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

    @Test
    void viewCleanupIsForAdmins() throws Exception {
        s.asAdmin("POST", "/v/_view_cleanup", "{}").status(202);
        s.send("POST", "/v/_view_cleanup", "{}", "Content-Type", "application/json").error(401, "unauthorized", null);
    }
}

package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** {@code _find} on the special _all_docs index: matching, paging, projection, sorting, and CouchDB's errors. */
class FindTest {
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
        s.asAdmin("PUT", "/f", null).status(201);
        StringBuilder docs = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < 30; i++) {
            if (i > 0) docs.append(',');
            docs.append(String.format("{\"_id\":\"d%02d\",\"type\":\"%s\",\"n\":%d,\"owner\":{\"name\":\"u%d\",\"age\":%d},\"tags\":[\"t%d\"]}",
                    i, i % 3 == 0 ? "a" : "b", i, i % 4, 20 + i, i % 5));
        }
        docs.append(",{\"_id\":\"_design/x\",\"type\":\"a\"},{\"_id\":\"gone\",\"type\":\"a\"}]}");
        s.asAdmin("POST", "/f/_bulk_docs", docs.toString()).status(201);
        String rev = s.asAdmin("GET", "/f/gone", null).json().get("_rev").textValue();
        s.asAdmin("DELETE", "/f/gone?rev=" + rev, null).status(200);
    }

    @AfterAll
    static void stop() throws Exception {
        s.close();
    }

    static JsonNode find(String body) throws Exception {
        return s.asAdmin("POST", "/f/_find", body).status(200).json();
    }

    static List<String> ids(JsonNode r) {
        List<String> out = new ArrayList<>();
        for (JsonNode d : r.get("docs")) out.add(d.path("_id").asText(null));
        return out;
    }

    @Test
    void matchesInIdOrderWithoutDesignOrDeletedDocuments() throws Exception {
        JsonNode r = find("{\"selector\":{\"type\":\"a\",\"n\":{\"$gt\":10}}}");
        assertEquals(List.of("d12", "d15", "d18", "d21", "d24", "d27"), ids(r));
        assertEquals("No matching index found, create an index to optimize query time.", r.get("warning").asText());
        assertEquals(List.of("d01", "d05"), ids(find("{\"selector\":{\"owner.name\":\"u1\",\"owner.age\":{\"$lt\":26}}}")));
        assertEquals(List.of("d04", "d09"), ids(find("{\"selector\":{\"tags\":{\"$elemMatch\":{\"$eq\":\"t4\"}},\"n\":{\"$lt\":10}}}")));
        assertEquals(List.of("d02", "d03"), ids(find("{\"selector\":{\"$or\":[{\"n\":2},{\"n\":3}]}}")));
        assertEquals(25, ids(find("{\"selector\":{}}")).size(), "CouchDB's default limit");
        assertEquals(List.of("d00", "d03", "d06", "d09", "d12", "d15", "d18", "d21", "d24", "d27"),
                ids(find("{\"selector\":{\"type\":\"a\"},\"limit\":100}")), "no design document, no deleted one");
    }

    @Test
    void pagesWithBookmarksSkipAndDescendingIds() throws Exception {
        JsonNode p1 = find("{\"selector\":{\"type\":\"a\"},\"limit\":4}");
        assertEquals(List.of("d00", "d03", "d06", "d09"), ids(p1));
        JsonNode p2 = find("{\"selector\":{\"type\":\"a\"},\"limit\":4,\"bookmark\":\"" + p1.get("bookmark").asText() + "\"}");
        assertEquals(List.of("d12", "d15", "d18", "d21"), ids(p2));
        JsonNode p3 = find("{\"selector\":{\"type\":\"a\"},\"limit\":4,\"bookmark\":\"" + p2.get("bookmark").asText() + "\"}");
        assertEquals(List.of("d24", "d27"), ids(p3));
        JsonNode p4 = find("{\"selector\":{\"type\":\"a\"},\"limit\":4,\"bookmark\":\"" + p3.get("bookmark").asText() + "\"}");
        assertEquals(List.of(), ids(p4));
        assertEquals(p3.get("bookmark").asText(), p4.get("bookmark").asText(), "an empty page keeps the bookmark");

        assertEquals(List.of("d06", "d09"), ids(find("{\"selector\":{\"type\":\"a\"},\"skip\":2,\"limit\":2}")));
        // A sort on _id needs a selector that narrows _id, as CouchDB's special index requires.
        String byId = "{\"selector\":{\"type\":\"a\",\"_id\":{\"$gt\":null}},\"sort\":[{\"_id\":\"desc\"}],\"limit\":2";
        assertEquals(List.of("d27", "d24"), ids(find(byId + "}")));
        JsonNode d1 = find(byId + "}");
        assertEquals(List.of("d21", "d18"), ids(find(byId + ",\"bookmark\":\"" + d1.get("bookmark").asText() + "\"}")));
        assertEquals(List.of("d00"), ids(find("{\"selector\":{\"type\":\"a\",\"_id\":{\"$gte\":\"d\"}},\"sort\":[\"_id\"],\"limit\":1}")));
        s.asAdmin("POST", "/f/_find", "{\"selector\":{\"type\":\"a\"},\"sort\":[\"_id\"]}")
                .error(400, "no_usable_index", "No index exists for this sort, try indexing by the sort fields.");
    }

    @Test
    void fieldsStatsAndConflicts() throws Exception {
        JsonNode r = find("{\"selector\":{\"n\":7},\"fields\":[\"_id\",\"owner.name\",\"missing\"],\"execution_stats\":true}");
        assertEquals("[{\"_id\":\"d07\",\"owner\":{\"name\":\"u3\"}}]", r.get("docs").toString());
        assertEquals(30, r.at("/execution_stats/total_docs_examined").asInt());
        assertEquals(1, r.at("/execution_stats/results_returned").asInt());

        s.asAdmin("POST", "/f/_bulk_docs", "{\"new_edits\":false,\"docs\":[{\"_id\":\"c\",\"_rev\":\"1-aaaa\",\"k\":1},{\"_id\":\"c\",\"_rev\":\"1-bbbb\",\"k\":1}]}").status(201);
        r = find("{\"selector\":{\"k\":1},\"conflicts\":true,\"fields\":[\"_id\",\"_rev\",\"_conflicts\"]}");
        assertEquals("[{\"_id\":\"c\",\"_rev\":\"1-bbbb\",\"_conflicts\":[\"1-aaaa\"]}]", r.get("docs").toString());
    }

    @Test
    void explainDescribesTheScan() throws Exception {
        JsonNode e = s.asAdmin("POST", "/f/_explain", "{\"selector\":{\"n\":{\"$gt\":3},\"type\":\"a\"},\"limit\":5,\"fields\":[\"_id\"]}").status(200).json();
        assertEquals("f", e.get("dbname").asText());
        assertEquals("{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":{\"fields\":[{\"_id\":\"asc\"}]}}", e.get("index").toString());
        assertEquals("{\"$and\":[{\"n\":{\"$gt\":3}},{\"type\":{\"$eq\":\"a\"}}]}", e.get("selector").toString());
        assertEquals(5, e.get("limit").asInt());
        assertEquals("[\"_id\"]", e.get("fields").toString());
        assertEquals("fwd", e.at("/mrargs/direction").asText());
        s.asAdmin("POST", "/f/_explain", "{}").error(400, "missing_required_key", null);
    }

    @Test
    void couchDbsErrors() throws Exception {
        s.asAdmin("POST", "/f/_find", "{}").error(400, "missing_required_key", "Missing required key: selector");
        s.asAdmin("POST", "/f/_find", "{\"selector\":[]}").error(400, "invalid_selector_json", null);
        s.asAdmin("POST", "/f/_find", "{\"selector\":{},\"limit\":-1}").error(400, "invalid_non_neg_integer", null);
        s.asAdmin("POST", "/f/_find", "{\"selector\":{},\"nope\":1}").error(400, "invalid_key", "Invalid key nope for this request.");
        s.asAdmin("POST", "/f/_find", "{\"selector\":{},\"sort\":[\"n\"]}")
                .error(400, "no_usable_index", "No index exists for this sort, try indexing by the sort fields.");
        s.asAdmin("POST", "/f/_find", "{\"selector\":{},\"bookmark\":\"!!\"}").error(400, "invalid_bookmark", null);
        s.asAdmin("POST", "/f/_find", "{\"selector\":{\"a\":{\"$bad\":1}}}").error(400, "invalid_operator", null);
        s.asAdmin("POST", "/f/_find", "{\"selector\":{},\"fields\":\"a\"}").error(400, "invalid_fields", null);
        s.asAdmin("GET", "/f/_find", null).error(405, "method_not_allowed", null);
        s.send("POST", "/f/_find", "{\"selector\":{}}", "Content-Type", "application/json").error(401, "unauthorized", null);
        s.asAdmin("POST", "/nodb/_find", "{\"selector\":{}}").error(404, "not_found", "Database does not exist.");
        JsonNode idx = s.asAdmin("GET", "/f/_index", null).status(200).json();
        assertEquals("{\"total_rows\":1,\"indexes\":[{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":{\"fields\":[{\"_id\":\"asc\"}]}}]}", idx.toString());
        assertTrue(find("{\"selector\":{},\"limit\":0}").get("docs").isEmpty());
    }
}

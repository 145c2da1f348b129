package dev.chaise.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A model-based test of a partitioned database through the HTTP API (issue 29): random writes,
 * updates, deletes and purges across partitions, and after every step each partition's info, its
 * {@code _all_docs}, and a partitioned view's rows and reductions ({@code _sum}, with and without
 * {@code group_level}) equal what a scan of the whole database computes: the database's own
 * {@code _all_docs} and a global view with the same map function, filtered to the partition.
 */
class PartitionModelTest {
    private static final List<String> PARTITIONS = List.of("a", "b", "c", "cc");
    private static final String MAP = "function(doc) { if (doc.k !== undefined) { emit([doc.g, doc.k], doc.v); } }";
    static HttpTestServer s;

    @BeforeAll
    static void start() throws Exception {
        s = new HttpTestServer();
    }

    @AfterAll
    static void stop() {
        s.close();
    }

    @Test
    void everyPartitionMatchesAScanOfTheWholeDatabase() throws Exception {
        s.asAdmin("PUT", "/model?partitioned=true", null).status(201);
        String view = "{\"views\":{\"v\":{\"map\":\"" + MAP + "\",\"reduce\":\"_sum\"}}";
        s.asAdmin("PUT", "/model/_design/part", view + "}").status(201);
        s.asAdmin("PUT", "/model/_design/glob", view + ",\"options\":{\"partitioned\":false}}").status(201);
        Random rnd = new Random(29);
        Map<String, String> revs = new HashMap<>();
        for (int step = 0; step < 60; step++) {
            String id = PARTITIONS.get(rnd.nextInt(PARTITIONS.size())) + ":" + rnd.nextInt(8);
            String rev = revs.get(id);
            int op = rnd.nextInt(10);
            if (rev != null && op < 3) {
                s.asAdmin("DELETE", "/model/" + id + "?rev=" + rev, null).status(200);
                revs.remove(id);
            } else if (rev != null && op < 4) {
                s.asAdmin("POST", "/model/_purge", "{\"" + id + "\":[\"" + rev + "\"]}").status(201);
                revs.remove(id);
            } else {
                String body = "{\"g\":" + rnd.nextInt(3) + ",\"k\":" + rnd.nextInt(5) + ",\"v\":" + rnd.nextInt(100)
                        + ",\"pad\":\"" + "x".repeat(rnd.nextInt(30)) + "\"" + (rev == null ? "" : ",\"_rev\":\"" + rev + "\"") + "}";
                revs.put(id, s.asAdmin("PUT", "/model/" + id, body).status(201).json().path("rev").asText());
            }
            check("step " + step);
        }
    }

    private static String json(List<JsonNode> rows) {
        return dev.chaise.storage.json.Json.NODES.arrayNode().addAll(rows).toString();
    }

    private void check(String ctx) throws Exception {
        List<String> allIds = new ArrayList<>();
        for (JsonNode r : s.asAdmin("GET", "/model/_all_docs", null).status(200).json().path("rows")) allIds.add(r.path("id").asText());
        JsonNode globalRows = s.asAdmin("GET", "/model/_design/glob/_view/v?reduce=false", null).status(200).json().path("rows");
        for (String p : PARTITIONS) {
            List<String> ids = allIds.stream().filter(id -> id.startsWith(p + ":")).toList();
            List<String> partIds = new ArrayList<>();
            for (JsonNode r : s.asAdmin("GET", "/model/_partition/" + p + "/_all_docs", null).status(200).json().path("rows")) partIds.add(r.path("id").asText());
            assertEquals(ids, partIds, ctx + " _all_docs of " + p);
            JsonNode info = s.asAdmin("GET", "/model/_partition/" + p, null).status(200).json();
            assertEquals(ids.size(), info.path("doc_count").asInt(), ctx + " doc_count of " + p);

            List<JsonNode> expected = new ArrayList<>();
            long sum = 0;
            Map<String, Long> byGroup = new TreeMap<>();
            for (JsonNode r : globalRows) {
                if (!r.path("id").asText().startsWith(p + ":")) continue;
                expected.add(r);
                sum += r.path("value").asLong();
                byGroup.merge(r.path("key").path(0).toString(), r.path("value").asLong(), Long::sum);
            }
            String url = "/model/_partition/" + p + "/_design/part/_view/v";
            assertEquals(json(expected), s.asAdmin("GET", url + "?reduce=false", null).status(200).json().path("rows").toString(), ctx + " rows of " + p);
            assertEquals(json(expected.reversed()),
                    s.asAdmin("GET", url + "?reduce=false&descending=true", null).status(200).json().path("rows").toString(), ctx + " rows of " + p);
            JsonNode reduced = s.asAdmin("GET", url, null).status(200).json().path("rows");
            assertEquals(expected.isEmpty() ? "[]" : "[{\"key\":null,\"value\":" + sum + "}]", reduced.toString(), ctx + " sum of " + p);
            StringBuilder groups = new StringBuilder("[");
            byGroup.forEach((g, v) -> groups.append(groups.length() > 1 ? "," : "").append("{\"key\":[").append(g).append("],\"value\":").append(v).append('}'));
            assertEquals(groups.append(']').toString(), s.asAdmin("GET", url + "?group_level=1", null).status(200).json().path("rows").toString(),
                    ctx + " group_level=1 of " + p);
        }
    }
}

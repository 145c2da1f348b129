package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * kill -9 while a Nouveau index is being built and while documents are written with it kept
 * current, against the server jar on disk. After each restart the index answers as a fresh
 * build of the same function does (a new design document whose function differs by a comment has
 * another signature, so it is built from nothing): total hits of term queries and the facet counts.
 * Slow: {@code ./chaise test --slow}.
 */
@Tag("slow")
class NouveauKillNineTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] TYPES = {"apple", "pear", "plum", "fig", "kiwi"};
    private static final String FUNCTION = "function (doc) { if (doc.type) { index('string', 'type', doc.type); index('double', 'n', doc.n); index('text', 'body', doc.body); } }";
    private final HttpClient client = HttpClient.newHttpClient();

    @Test
    void anIndexKilledMidBuildAnswersAsAFreshBuild() throws Exception {
        Path data = Files.createTempDirectory("chaise-it-nouveau-");
        String ini = "[chaise]\nstorage = embedded\ndata_dir = " + data + "\n";
        ChaiseProcess p = new ChaiseProcess("nouveau-kill9-0.log", ini);
        String password = p.password;
        int port = p.port;
        Random rnd = new Random(42);
        send(p, "PUT", "/s", null);
        int docs = 0;
        for (int b = 0; b < 30; b++, docs += 1000) send(p, "POST", "/s/_bulk_docs", batch(docs, 1000, rnd));
        send(p, "PUT", "/s/_design/a", ddoc("standard", 0));
        for (int cycle = 1; cycle <= 4; cycle++) {
            // A query starts the build (or an update of it), writes go on, and the process dies.
            ChaiseProcess live = p;
            Thread q = Thread.ofVirtual().start(() -> {
                try {
                    send(live, "POST", "/s/_design/a/_nouveau/i", "{\"q\":\"*:*\",\"limit\":1}");
                } catch (Exception e) {
                    // killed under it
                }
            });
            for (int b = 0; b < 3; b++, docs += 500) send(p, "POST", "/s/_bulk_docs", batch(docs, 500, rnd));
            Thread.sleep(200 + rnd.nextInt(1500));
            p.kill();
            q.join();
            p = new ChaiseProcess("nouveau-kill9-" + cycle + ".log", ini, port, password);
            String fresh = "/s/_design/f" + cycle;
            send(p, "PUT", fresh, ddoc("simple", cycle)); // same fields, a signature of its own: built from nothing
            for (String t : TYPES) {
                String body = "{\"q\":\"type:" + t + "\",\"limit\":1}";
                assertEquals(send(p, "POST", fresh + "/_nouveau/i", body).get("total_hits").asLong(),
                        send(p, "POST", "/s/_design/a/_nouveau/i", body).get("total_hits").asLong(), "cycle " + cycle + " type " + t);
            }
            String facets = "{\"q\":\"*:*\",\"limit\":1,\"counts\":[\"type\"],\"ranges\":{\"n\":[{\"label\":\"low\",\"max\":500},{\"label\":\"high\",\"min\":500}]}}";
            JsonNode a = send(p, "POST", "/s/_design/a/_nouveau/i", facets);
            JsonNode f = send(p, "POST", fresh + "/_nouveau/i", facets);
            assertEquals(f.get("total_hits"), a.get("total_hits"), "cycle " + cycle);
            assertEquals(f.get("counts"), a.get("counts"), "cycle " + cycle);
            assertEquals(f.get("ranges"), a.get("ranges"), "cycle " + cycle);
            assertEquals(docs, a.get("total_hits").asInt(), "cycle " + cycle + ": every document");
        }
        p.close();
    }

    /** The function with a comment naming {@code n}: another signature for each n. */
    private static String ddoc(String analyzer, int n) {
        return "{\"nouveau\":{\"i\":{\"default_analyzer\":\"" + analyzer + "\",\"index\":" + JSON.valueToTree(FUNCTION + " /* " + n + " */") + "}}}";
    }

    private static String batch(int from, int n, Random rnd) {
        StringBuilder sb = new StringBuilder("{\"docs\":[");
        for (int i = 0; i < n; i++) {
            if (i > 0) sb.append(',');
            sb.append("{\"_id\":\"d").append(from + i).append("\",\"type\":\"").append(TYPES[rnd.nextInt(TYPES.length)])
                    .append("\",\"n\":").append(rnd.nextInt(1000)).append(",\"body\":\"word").append(rnd.nextInt(50)).append(" other\"}");
        }
        return sb.append("]}").toString();
    }

    private JsonNode send(ChaiseProcess p, String method, String path, String body) throws Exception {
        String auth = "Basic " + Base64.getEncoder().encodeToString(("admin:" + p.password).getBytes(StandardCharsets.UTF_8));
        HttpRequest r = HttpRequest.newBuilder(URI.create(p.url + path)).header("Authorization", auth).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build();
        HttpResponse<String> resp = client.send(r, HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() >= 300) throw new AssertionError(method + " " + path + " -> " + resp.statusCode() + " " + resp.body());
        return JSON.readTree(resp.body());
    }
}

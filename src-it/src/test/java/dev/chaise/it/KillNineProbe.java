package dev.chaise.it;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * What the kill -9 probes ({@link KillNineSoakTest}, {@link AccessKillNineTest}) share: each
 * document's last acknowledged write and the one in flight, the writers' requests, and their
 * answers that fail the probe.
 */
final class KillNineProbe {
    static final ObjectMapper JSON = new ObjectMapper();

    private KillNineProbe() {}

    /** A document's last acknowledged state, and the write in flight (unacknowledged), if any. */
    static final class Tracked<S> {
        volatile S acked;
        volatile S pending;
    }

    /** A writer got an answer it did not expect. */
    static final class UnexpectedAnswer extends RuntimeException {
        UnexpectedAnswer(String message) {
            super(message, null, false, false);
        }
    }

    static void expect(HttpResponse<String> res, int status) {
        if (res.statusCode() != status) {
            throw new UnexpectedAnswer(res.request().method() + " " + res.request().uri().getPath() + ": " + res.statusCode() + " " + res.body());
        }
    }

    /** After the checks, what is there is what the next cycle builds on: a write in flight landed or not. */
    static <S> void adopt(Map<String, Tracked<S>> docs, Map<String, S> actual) {
        for (var e : docs.entrySet()) {
            Tracked<S> t = e.getValue();
            if (t.pending == null) continue;
            t.acked = actual.get(e.getKey());
            t.pending = null;
        }
    }

    /** A request with {@code auth}, its body as JSON. */
    static HttpResponse<String> send(HttpClient http, String url, String auth, String method, String path, JsonNode body)
            throws IOException, InterruptedException {
        HttpRequest.BodyPublisher p = body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body));
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url + path)).header("Authorization", auth)
                .timeout(Duration.ofSeconds(120)).method(method, p);
        if (body != null) b.header("Content-Type", "application/json");
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) return;
        try (var s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}

package dev.chaise.http;

import dev.chaise.http.wiring.ChaiseHttp;
import dev.chaise.http.config.InMemoryConfigStore;
import dev.chaise.http.config.HttpConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.chaise.http.auth.Credentials;
import dev.chaise.http.auth.PasswordHash;
import dev.chaise.storage.SecurityObject;
import dev.chaise.http.auth.UserDirectory;
import dev.chaise.kv.KvStore;
import dev.chaise.kv.embedded.EmbeddedKvStore;
import dev.chaise.kv.embedded.EmbeddedOptions;
import dev.chaise.storage.Storage;
import dev.chaise.storage.json.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A real server on a random port over the in-memory engine, with admin {@code admin:pass} and two
 * ordinary users from a test directory: {@code bob:bobpw} (role {@code reader}) and
 * {@code eve:evepw} (no roles). Passwords are hashed with few iterations to keep tests fast.
 */
final class HttpTestServer implements AutoCloseable {
    static final String ADMIN = "Basic " + b64("admin:pass");
    static final String BOB = "Basic " + b64("bob:bobpw");
    static final String EVE = "Basic " + b64("eve:evepw");

    final KvStore kv;
    final Storage docs;
    final InMemoryConfigStore config;
    final ChaiseHttp http;
    final dev.chaise.views.js.GraalJsEngine js;
    final dev.chaise.views.ViewsModule views;
    final dev.chaise.replicator.ReplicatorModule replicator;
    final HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    final String base;

    HttpTestServer() throws Exception {
        this(c -> c, r -> {});
    }

    HttpTestServer(java.util.function.UnaryOperator<HttpConfig> tweak, Consumer<ChaiseHttp> extraRoutes) throws Exception {
        kv = EmbeddedKvStore.open(EmbeddedOptions.inMemory());
        docs = new Storage(kv, SecurityObject.ADMIN_ONLY_JSON);
        config = new InMemoryConfigStore(Map.of("admins", Map.of("admin", PasswordHash.create("pass", "sha256", 10).toAdminString())));
        HttpConfig cfg = tweak.apply(HttpConfig.defaults().withPort(0).withAuth(HttpConfig.Auth.defaults().withIterations(10)));
        Map<String, Credentials> users = Map.of(
                "bob", new Credentials("bob", List.of("reader"), PasswordHash.create("bobpw", "sha256", 10)),
                "eve", new Credentials("eve", List.of(), PasswordHash.create("evepw", "sha256", 10)));
        UserDirectory testUsers = name -> Optional.ofNullable(users.get(name));
        js = dev.chaise.views.js.GraalJsEngine.create(new dev.chaise.views.js.GraalJsEngine.Options(java.time.Duration.ofSeconds(2), 4));
        views = new dev.chaise.views.ViewsModule(docs, js).enableInteractiveViews()
                .useJobQueue(new dev.chaise.views.jobs.JobQueue(kv), 2, java.time.Duration.ofSeconds(30));
        http = new ChaiseHttp(cfg, docs, views, config, List.of(testUsers));
        ChaiseHttp h = http;
        replicator = new dev.chaise.replicator.ReplicatorModule(docs, views.filters(), new dev.chaise.views.jobs.JobQueue(kv), http.localAccess(),
                dev.chaise.replicator.ReplicatorConfig.defaults(http.uuid(), () -> "http://127.0.0.1:" + h.port() + "/")
                        .withTimings(java.time.Duration.ofMillis(500), java.time.Duration.ofSeconds(5), java.time.Duration.ofMillis(500)),
                http::isServerAdmin);
        http.replicator(replicator);
        extraRoutes.accept(http);
        http.start();
        replicator.start();
        base = "http://127.0.0.1:" + http.port();
    }

    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A response with its body parsed as JSON when it is JSON. */
    record Resp(int status, java.net.http.HttpHeaders headers, String text) {
        JsonNode json() {
            try {
                return Json.MAPPER.readTree(text);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + text, e);
            }
        }

        String header(String name) {
            return headers.firstValue(name).orElse(null);
        }

        /** Asserts status and the CouchDB error body. */
        Resp error(int expectedStatus, String error, String reason) {
            assertEquals(expectedStatus, status, text);
            assertEquals(error, json().path("error").asText(), text);
            if (reason != null) assertEquals(reason, json().path("reason").asText(), text);
            return this;
        }

        Resp status(int expected) {
            assertEquals(expected, status, text);
            return this;
        }
    }

    Resp send(String method, String path, String body, String... headers) throws Exception {
        // A request the server never answers fails the test instead of hanging the build.
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(java.time.Duration.ofSeconds(60))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) b.header(headers[i], headers[i + 1]);
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Resp(r.statusCode(), r.headers(), r.body());
    }

    Resp get(String path, String... headers) throws Exception {
        return send("GET", path, null, headers);
    }

    Resp asAdmin(String method, String path, String body) throws Exception {
        return send(method, path, body, "Authorization", ADMIN, "Content-Type", "application/json");
    }

    @Override
    public void close() {
        http.close();
        replicator.close();
        views.close();
        js.close();
        docs.close();
        kv.close();
    }
}

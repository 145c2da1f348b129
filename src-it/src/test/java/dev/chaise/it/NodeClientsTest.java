package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Real CouchDB clients (nano, PouchDB 9 from npm) against the real server jar over HTTP. Starts
 * {@code server/target/chaise.jar} as users do (in-memory storage, a random port, an admin from
 * the environment), installs the clients with {@code npm ci} when needed, and runs
 * {@code node --test tests/}; the node output goes to the build log.
 */
class NodeClientsTest {
    static final Path MODULE = Path.of(System.getProperty("user.dir"));
    static Process server;
    static String url;
    static final String PASSWORD = UUID.randomUUID().toString();

    @BeforeAll
    static void startServer() throws Exception {
        Path jar = MODULE.resolveSibling("server").resolve("target/chaise.jar");
        assertTrue(Files.exists(jar), "the server jar is built by the reactor before this module: " + jar);
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        Path ini = Files.createTempFile("chaise-it-", ".ini");
        Files.writeString(ini, "[chaise]\nstorage = embedded-memory\n[chttpd]\nbind_address = 127.0.0.1\nport = " + port + "\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED", "-jar", jar.toString(), "--config", ini.toString())
                .redirectErrorStream(true).redirectOutput(MODULE.resolve("target/chaise-it-server.log").toFile());
        pb.environment().put("COUCHDB_USER", "admin");
        pb.environment().put("COUCHDB_PASSWORD", PASSWORD);
        server = pb.start();
        url = "http://127.0.0.1:" + port;
        HttpClient client = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                if (client.send(HttpRequest.newBuilder(URI.create(url + "/_up")).build(), HttpResponse.BodyHandlers.ofString()).statusCode() == 200) break;
            } catch (IOException e) {
                // not listening yet
            }
            assertTrue(server.isAlive(), "the server exited; see target/chaise-it-server.log");
            assertTrue(System.nanoTime() < deadline, "the server did not come up within 60 s");
            Thread.sleep(200);
        }
    }

    @AfterAll
    static void stopServer() throws Exception {
        if (server != null) {
            server.destroy();
            server.waitFor(20, TimeUnit.SECONDS);
        }
    }

    @Test
    void realClientsPass() throws Exception {
        installClients();
        ProcessBuilder pb = new ProcessBuilder("node", "--test", "--test-concurrency=1", "tests/").directory(MODULE.toFile()).redirectErrorStream(true);
        pb.environment().put("CHAISE_URL", url);
        pb.environment().put("CHAISE_ADMIN", "admin");
        pb.environment().put("CHAISE_PASSWORD", PASSWORD);
        if (Boolean.getBoolean("chaise.slow")) pb.environment().put("CHAISE_SLOW", "1");
        Process node = pb.start();
        List<String> lines = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        Thread relay = relay(node, lines);
        assertTrue(node.waitFor(10, TimeUnit.MINUTES), "node tests did not finish in 10 minutes");
        relay.join(10_000);
        assertEquals(0, node.exitValue(), "node --test failed; its report is above");
        // node --test exits 0 when it finds no test at all: that must not pass.
        int passed = lines.stream().filter(l -> l.startsWith("# pass ")).mapToInt(l -> Integer.parseInt(l.substring(7).trim())).sum();
        assertTrue(passed > 0, "node --test ran no test");
    }

    /** Copies a child's output into this JVM's stdout, which surefire carries to the build log. */
    static Thread relay(Process p, List<String> into) {
        return Thread.ofVirtual().start(() -> {
            try (var r = p.inputReader()) {
                r.lines().forEach(l -> {
                    System.out.println(l);
                    into.add(l);
                });
            } catch (IOException e) {
                // the child went away; its exit code tells the story
            }
        });
    }

    /** {@code npm ci} unless node_modules already matches package-lock.json. */
    static void installClients() throws Exception {
        String lockHash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(MODULE.resolve("package-lock.json"))));
        Path stamp = MODULE.resolve("node_modules/.chaise-lock-sha256");
        if (Files.exists(stamp) && Files.readString(stamp).equals(lockHash)) return;
        Process npm = new ProcessBuilder(List.of("npm", "ci", "--no-audit", "--no-fund")).directory(MODULE.toFile()).redirectErrorStream(true).start();
        relay(npm, new java.util.ArrayList<>());
        assertTrue(npm.waitFor(10, TimeUnit.MINUTES), "npm ci did not finish in 10 minutes");
        assertEquals(0, npm.exitValue(), "npm ci failed (node and npm must be installed; the npm registry must be reachable)");
        Files.writeString(stamp, lockHash);
    }
}

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
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * The server jar run as users run it (in-memory storage, a random port, an admin from the
 * environment), and the helpers the client suites share: installing the node clients and relaying
 * a child's output into the build log.
 */
final class ChaiseProcess implements AutoCloseable {
    static final Path MODULE = Path.of(System.getProperty("user.dir"));
    final Process server;
    final String url;
    final String password;
    final int port;

    /** Starts {@code server/target/chaise.jar} on in-memory storage, logging to {@code target/{logName}}, and waits for {@code /_up}. */
    ChaiseProcess(String logName) throws Exception {
        this(logName, "[chaise]\nstorage = embedded-memory\n");
    }

    /** The jar as the README runs it: embedded storage on disk (in a new temporary directory). */
    static ChaiseProcess onDisk(String logName) throws Exception {
        return new ChaiseProcess(logName, "[chaise]\nstorage = embedded\ndata_dir = " + Files.createTempDirectory("chaise-it-data-") + "\n");
    }

    /**
     * Starts the jar with {@code ini} (plus a random port) and the JVM options {@code ./chaise
     * start} uses ({@code bin/jvm.options}), as users run it.
     */
    ChaiseProcess(String logName, String ini) throws Exception {
        this(logName, ini, 0, null);
    }

    /**
     * @param port 0 for a free one
     * @param password the admin's, or null for a new one (a restart on the same data passes the old one)
     */
    ChaiseProcess(String logName, String ini, int port, String password) throws Exception {
        this.password = password != null ? password : UUID.randomUUID().toString();
        Path jar = MODULE.resolveSibling("server").resolve("target/chaise.jar");
        assertTrue(Files.exists(jar), "the server jar is built by the reactor before this module: " + jar);
        if (port == 0) {
            try (ServerSocket s = new ServerSocket(0)) {
                port = s.getLocalPort();
            }
        }
        this.port = port;
        Path iniFile = Files.createTempFile("chaise-it-", ".ini");
        Files.writeString(iniFile, ini + "[chttpd]\nbind_address = 127.0.0.1\nport = " + port + "\n");
        String java = ProcessHandle.current().info().command().orElse("java");
        Path options = MODULE.resolveSibling("bin").resolve("jvm.options");
        ProcessBuilder pb = new ProcessBuilder(java, "@" + options, "-jar", jar.toString(), "--config", iniFile.toString())
                .redirectErrorStream(true).redirectOutput(MODULE.resolve("target/" + logName).toFile());
        pb.environment().put("COUCHDB_USER", "admin");
        pb.environment().put("COUCHDB_PASSWORD", this.password);
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
            assertTrue(server.isAlive(), "the server exited; see target/" + logName);
            assertTrue(System.nanoTime() < deadline, "the server did not come up within 60 s");
            Thread.sleep(200);
        }
    }

    /** A child process with the server's URL and admin in its environment, as the node suites read them. */
    ProcessBuilder child(List<String> command) {
        ProcessBuilder pb = new ProcessBuilder(command).directory(MODULE.toFile()).redirectErrorStream(true);
        pb.environment().put("CHAISE_URL", url);
        pb.environment().put("CHAISE_ADMIN", "admin");
        pb.environment().put("CHAISE_PASSWORD", password);
        pb.environment().put("CHAISE_PID", String.valueOf(server.pid()));
        return pb;
    }

    /** SIGTERM, as a service manager stops it; the server drains and exits 0. */
    @Override
    public void close() throws InterruptedException {
        server.destroy();
        if (!server.waitFor(60, TimeUnit.SECONDS)) server.destroyForcibly().waitFor();
    }

    /** kill -9: no shutdown hook, no flush, no close. */
    void kill() throws InterruptedException {
        server.destroyForcibly(); // SIGKILL on Linux
        server.waitFor(20, TimeUnit.SECONDS);
    }

    /**
     * Runs a node script of this module against the server to its end (at most {@code minutes}),
     * its output relayed into the build log and kept in {@code target/{logName}}; the lines it
     * printed. Fails unless it exits 0.
     */
    List<String> runNode(String script, Map<String, String> env, int minutes, String logName) throws Exception {
        ProcessBuilder pb = child(List.of("node", script));
        pb.environment().putAll(env);
        if (Boolean.getBoolean("chaise.slow")) pb.environment().put("CHAISE_SLOW", "1");
        Process node = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Thread relay = relay(node, lines);
        assertTrue(node.waitFor(minutes, TimeUnit.MINUTES), script + " did not finish in " + minutes + " minutes");
        relay.join(10_000);
        Files.write(MODULE.resolve("target/" + logName), lines);
        assertEquals(0, node.exitValue(), script + " failed; its FAIL lines are above and in target/" + logName);
        return lines;
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
        installNodeModules(MODULE, false);
    }

    /**
     * {@code npm ci} in {@code dir} unless its node_modules already matches its package-lock.json;
     * {@code ignoreScripts} skips install scripts (pouchdb-server's optional sqlite3 would otherwise
     * be compiled; its leveldown ships prebuilt binaries).
     */
    static void installNodeModules(Path dir, boolean ignoreScripts) throws Exception {
        String lockHash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(dir.resolve("package-lock.json"))));
        Path stamp = dir.resolve("node_modules/.chaise-lock-sha256");
        if (Files.exists(stamp) && Files.readString(stamp).equals(lockHash)) return;
        List<String> cmd = new ArrayList<>(List.of("npm", "ci", "--no-audit", "--no-fund"));
        if (ignoreScripts) cmd.add("--ignore-scripts");
        Process npm = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        relay(npm, new ArrayList<>());
        assertTrue(npm.waitFor(10, TimeUnit.MINUTES), "npm ci did not finish in 10 minutes");
        assertEquals(0, npm.exitValue(), "npm ci failed (node and npm must be installed; the npm registry must be reachable)");
        Files.writeString(stamp, lockHash);
    }
}

package dev.chaise.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The replicator against real peers ({@code src-it/replicator}): node's test runner starts Chaise
 * servers from the built jar (several at once, some on disk, killed with SIGKILL and started
 * again) and pouchdb-server from npm, and drives replications between them. With {@code -Pslow}
 * ({@code CHAISE_SLOW=1}) the SIGKILL case copies 40,000 documents instead of 12,000.
 */
class ReplicatorPeersTest {
    @Test
    void replicatesWithRealPeers() throws Exception {
        Path dir = ChaiseProcess.MODULE.resolve("replicator");
        ChaiseProcess.installNodeModules(dir, true);
        Path jar = ChaiseProcess.MODULE.resolveSibling("server").resolve("target/chaise.jar");
        assertTrue(Files.exists(jar), "the server jar is built by the reactor before this module: " + jar);
        Files.createDirectories(ChaiseProcess.MODULE.resolve("target"));
        ProcessBuilder pb = new ProcessBuilder(List.of("node", "--test", "--test-concurrency=1", "--test-force-exit", "replicator/"))
                .directory(ChaiseProcess.MODULE.toFile()).redirectErrorStream(true);
        pb.environment().put("CHAISE_JAR", jar.toString());
        pb.environment().put("CHAISE_JAVA", ProcessHandle.current().info().command().orElse("java"));
        pb.environment().put("CHAISE_LOGS", ChaiseProcess.MODULE.resolve("target").toString());
        if (Boolean.getBoolean("chaise.slow")) pb.environment().put("CHAISE_SLOW", "1");
        Process node = pb.start();
        List<String> lines = Collections.synchronizedList(new ArrayList<>());
        Thread relay = ChaiseProcess.relay(node, lines);
        if (!node.waitFor(15, TimeUnit.MINUTES)) {
            node.descendants().forEach(ProcessHandle::destroyForcibly);
            node.destroyForcibly();
            throw new AssertionError("the replicator's node tests did not finish in 15 minutes");
        }
        relay.join(10_000);
        assertEquals(0, node.exitValue(), "node --test failed; its report is above (server logs in src-it/target/replicator-*.log)");
        int passed = lines.stream().filter(l -> l.startsWith("# pass ")).mapToInt(l -> Integer.parseInt(l.substring(7).trim())).sum();
        assertTrue(passed > 0, "node --test ran no test");
    }
}
